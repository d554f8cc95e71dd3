// Package cdpcbor converts DevTools protocol messages between JSON and the
// CBOR Chromium speaks on a binary pipe (--remote-debugging-pipe=cbor).
//
// On a JSON pipe the browser turns every message its renderers and
// handlers write (in CBOR) into JSON on its UI thread, the thread that also
// encodes screenshots: a page snapshot of 180 to 450 KB costs it 5.5 to
// 13.5 ms there. On a CBOR pipe it passes them through, and the relay converts
// what Playwright's driver reads and writes with this package, on its own
// cores.
//
// The dialect (Chromium's crdtp/cbor.h): each message is an envelope, tag
// 24 over a byte string with a 4-byte length (0xd8 0x18 0x5a LEN), holding
// an indefinite-length map; maps and arrays inside are enveloped as well.
// Strings are UTF-8 text strings or UTF-16LE byte strings; binary data is a
// byte string under tag 22, base64 in JSON; integers in int32 range are
// CBOR integers and other numbers doubles.
//
//	n, err := cdpcbor.MessageLen(buf) // a whole message is buf[:n], if n > 0
//	js, err := cdpcbor.ToJSON(nil, buf[:n])
//	msg, err := cdpcbor.FromJSON(nil, []byte(`{"id":1,"method":"Browser.getVersion"}`))
package cdpcbor

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// EnvelopeHeader is the length of an envelope's header: tag 24 (0xd8
// 0x18), a byte string with a 4-byte length (0x5a), the length.
const EnvelopeHeader = 7

// maxDepth bounds nesting, in both directions: deeper input is refused
// rather than followed down the stack.
const maxDepth = 1000

var errDepth = errors.New("cdpcbor: nested too deep")

// MessageLen returns the length of the message at the start of b: 0 if b
// holds only part of it. It fails if b does not start with an envelope.
func MessageLen(b []byte) (int, error) {
	if len(b) < EnvelopeHeader {
		if len(b) > 0 && b[0] != 0xd8 || len(b) > 1 && b[1] != 0x18 || len(b) > 2 && b[2] != 0x5a {
			return 0, fmt.Errorf("cdpcbor: a message starts % x, not an envelope", b)
		}
		return 0, nil
	}
	if b[0] != 0xd8 || b[1] != 0x18 || b[2] != 0x5a {
		return 0, fmt.Errorf("cdpcbor: a message starts % x, not an envelope", b[:EnvelopeHeader])
	}
	n := int(binary.BigEndian.Uint32(b[3:EnvelopeHeader]))
	if len(b) < EnvelopeHeader+n {
		return 0, nil
	}
	return EnvelopeHeader + n, nil
}

// Size returns the length the message at the start of b declares, header
// included, once its header is there (0 before).
func Size(b []byte) int {
	if len(b) < EnvelopeHeader {
		return 0
	}
	return EnvelopeHeader + int(binary.BigEndian.Uint32(b[3:EnvelopeHeader]))
}

// ID returns a message's "id" when it is the map's first key, as Chromium
// writes replies.
func ID(msg []byte) (int64, bool) {
	const at = EnvelopeHeader + 1
	if len(msg) < at+4 || msg[EnvelopeHeader] != 0xbf || msg[at] != 0x62 || msg[at+1] != 'i' || msg[at+2] != 'd' {
		return 0, false
	}
	d := decoder{b: msg, i: at + 3}
	if msg[d.i]>>5 != 0 {
		return 0, false
	}
	n, err := d.arg()
	if err != nil || n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// ToJSON appends to dst the JSON form of the message msg (one whole CBOR
// value, as MessageLen delimits it).
func ToJSON(dst, msg []byte) ([]byte, error) {
	d := decoder{b: msg, out: dst}
	if err := d.value(0); err != nil {
		return dst, err
	}
	if d.i != len(msg) {
		return dst, fmt.Errorf("cdpcbor: %d bytes after the message", len(msg)-d.i)
	}
	return d.out, nil
}

type decoder struct {
	b   []byte
	i   int
	out []byte
}

func (d *decoder) fail(what string) error {
	return fmt.Errorf("cdpcbor: %s at byte %d", what, d.i)
}

// Arg reads the argument of the CBOR item whose initial byte is b[i]
// (its length, count or value) and returns it with the index after it; ok
// is false for a truncated item or an indefinite or reserved length.
func Arg(b []byte, i int) (v uint64, next int, ok bool) {
	if i >= len(b) {
		return 0, i, false
	}
	ai := b[i] & 31
	i++
	var n int
	switch {
	case ai < 24:
		return uint64(ai), i, true
	case ai == 24:
		n = 1
	case ai == 25:
		n = 2
	case ai == 26:
		n = 4
	case ai == 27:
		n = 8
	default:
		return 0, i - 1, false
	}
	if len(b)-i < n {
		return 0, i - 1, false
	}
	for _, c := range b[i : i+n] {
		v = v<<8 | uint64(c)
	}
	return v, i + n, true
}

// arg is Arg at the cursor, leaving d.i after the argument.
func (d *decoder) arg() (uint64, error) {
	v, next, ok := Arg(d.b, d.i)
	if !ok {
		return 0, d.fail("truncated item or unsupported length")
	}
	d.i = next
	return v, nil
}

// bytesArg reads a byte or text string's length and returns its bytes.
func (d *decoder) bytesArg() ([]byte, error) {
	n, err := d.arg()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.i) {
		return nil, d.fail("string runs past the message")
	}
	s := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	return s, nil
}

func (d *decoder) value(depth int) error {
	if depth > maxDepth {
		return errDepth
	}
	if d.i >= len(d.b) {
		return d.fail("truncated")
	}
	c := d.b[d.i]
	switch c >> 5 {
	case 0:
		n, err := d.arg()
		if err != nil {
			return err
		}
		d.out = strconv.AppendUint(d.out, n, 10)
		return nil
	case 1:
		n, err := d.arg()
		if err != nil {
			return err
		}
		d.out = append(d.out, '-')
		if n == math.MaxUint64 {
			d.out = append(d.out, "18446744073709551616"...)
		} else {
			d.out = strconv.AppendUint(d.out, n+1, 10)
		}
		return nil
	case 2: // a 16-bit string
		s, err := d.bytesArg()
		if err != nil {
			return err
		}
		if len(s)%2 != 0 {
			return d.fail("odd-length UTF-16 string")
		}
		d.out = appendUTF16(d.out, s)
		return nil
	case 3:
		s, err := d.bytesArg()
		if err != nil {
			return err
		}
		d.out = appendUTF8(d.out, s)
		return nil
	case 4:
		return d.array(depth)
	case 5:
		return d.object(depth)
	case 6:
		return d.tagged(depth)
	}
	d.i++
	switch c {
	case 0xf4:
		d.out = append(d.out, "false"...)
	case 0xf5:
		d.out = append(d.out, "true"...)
	case 0xf6, 0xf7:
		d.out = append(d.out, "null"...)
	case 0xfa:
		if len(d.b)-d.i < 4 {
			return d.fail("truncated")
		}
		d.out = appendFloat(d.out, float64(math.Float32frombits(binary.BigEndian.Uint32(d.b[d.i:]))))
		d.i += 4
	case 0xfb:
		if len(d.b)-d.i < 8 {
			return d.fail("truncated")
		}
		d.out = appendFloat(d.out, math.Float64frombits(binary.BigEndian.Uint64(d.b[d.i:])))
		d.i += 8
	default:
		d.i--
		return d.fail(fmt.Sprintf("unsupported item 0x%02x", c))
	}
	return nil
}

// tagged reads an envelope (tag 24) or binary data (tag 22).
func (d *decoder) tagged(depth int) error {
	switch {
	case d.i+1 < len(d.b) && d.b[d.i] == 0xd8 && d.b[d.i+1] == 0x18:
		d.i += 2
		if d.i >= len(d.b) || d.b[d.i]>>5 != 2 {
			return d.fail("envelope without a byte string")
		}
		s, err := d.bytesArg()
		if err != nil {
			return err
		}
		end := d.i
		inner := decoder{b: d.b[:end], i: end - len(s), out: d.out}
		if len(s) == 0 || (s[0]>>5 != 4 && s[0]>>5 != 5) {
			return d.fail("envelope without a map or an array")
		}
		if err := inner.value(depth); err != nil {
			return err
		}
		d.out = inner.out
		if inner.i != end {
			return d.fail("envelope longer than its content")
		}
		return nil
	case d.b[d.i] == 0xd6:
		d.i++
		if d.i >= len(d.b) || d.b[d.i]>>5 != 2 {
			return d.fail("binary data without a byte string")
		}
		s, err := d.bytesArg()
		if err != nil {
			return err
		}
		d.out = append(d.out, '"')
		d.out = base64.StdEncoding.AppendEncode(d.out, s)
		d.out = append(d.out, '"')
		return nil
	}
	return d.fail(fmt.Sprintf("unsupported tag 0x%02x", d.b[d.i]))
}

// items reads the header of the array or map at the cursor (definite or
// indefinite) and calls each once per element, or per member of a map,
// with its index.
func (d *decoder) items(each func(k uint64) error) error {
	indefinite := d.b[d.i]&31 == 31
	var n uint64
	if indefinite {
		d.i++
	} else {
		var err error
		if n, err = d.arg(); err != nil {
			return err
		}
	}
	for k := uint64(0); ; k++ {
		if indefinite {
			if d.i >= len(d.b) {
				return d.fail("truncated")
			}
			if d.b[d.i] == 0xff {
				d.i++
				return nil
			}
		} else if k == n {
			return nil
		}
		if err := each(k); err != nil {
			return err
		}
	}
}

func (d *decoder) array(depth int) error {
	d.out = append(d.out, '[')
	err := d.items(func(k uint64) error {
		if k > 0 {
			d.out = append(d.out, ',')
		}
		return d.value(depth + 1)
	})
	d.out = append(d.out, ']')
	return err
}

func (d *decoder) object(depth int) error {
	d.out = append(d.out, '{')
	err := d.items(func(k uint64) error {
		if k > 0 {
			d.out = append(d.out, ',')
		}
		if d.i >= len(d.b) || (d.b[d.i]>>5 != 3 && d.b[d.i]>>5 != 2) {
			return d.fail("a map key that is not a string")
		}
		if err := d.value(depth + 1); err != nil {
			return err
		}
		d.out = append(d.out, ':')
		return d.value(depth + 1)
	})
	d.out = append(d.out, '}')
	return err
}

// appendFloat writes f as JavaScript would: integers below 1e21 without
// an exponent (Go decodes those into integer fields), and no NaN or
// infinity, which JSON lacks (Chromium writes null).
func appendFloat(out []byte, f float64) []byte {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(out, "null"...)
	case f == 0:
		return append(out, '0') // -0 too, as Chromium writes it
	case f == math.Trunc(f) && math.Abs(f) < 1e21:
		return strconv.AppendFloat(out, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(out, f, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendEscaped writes the JSON escape of an ASCII byte that needs one,
// and reports whether it did.
func appendEscaped(out []byte, c byte) ([]byte, bool) {
	switch c {
	case '"', '\\':
		return append(out, '\\', c), true
	case '\n':
		return append(out, '\\', 'n'), true
	case '\r':
		return append(out, '\\', 'r'), true
	case '\t':
		return append(out, '\\', 't'), true
	}
	if c < 0x20 {
		return append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15]), true
	}
	return out, false
}

// appendUTF8 writes a text string; bytes that are not UTF-8 become U+FFFD.
func appendUTF8(out, s []byte) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			out = append(out, s[start:i]...)
			out, _ = appendEscaped(out, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, s[start:i]...)
			out = append(out, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// appendUTF16 writes a UTF-16LE string. A lone surrogate is written as its
// \u escape, as Chromium writes it to a JSON pipe.
func appendUTF16(out, s []byte) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i += 2 {
		u := rune(binary.LittleEndian.Uint16(s[i:]))
		switch {
		case u < utf8.RuneSelf:
			var esc bool
			if out, esc = appendEscaped(out, byte(u)); !esc {
				out = append(out, byte(u))
			}
		case utf16.IsSurrogate(u):
			if u < 0xdc00 && i+3 < len(s) {
				if r := utf16.DecodeRune(u, rune(binary.LittleEndian.Uint16(s[i+2:]))); r != utf8.RuneError {
					out = utf8.AppendRune(out, r)
					i += 2
					continue
				}
			}
			out = append(out, '\\', 'u', hexDigits[u>>12], hexDigits[u>>8&15], hexDigits[u>>4&15], hexDigits[u&15])
		default:
			out = utf8.AppendRune(out, u)
		}
	}
	return append(out, '"')
}

// Result returns the CBOR of a reply's "result" member: the value itself,
// in its envelope, without converting anything. ok is false for a reply
// without one (an error) or a message that is not a map.
func Result(msg []byte) (result []byte, ok bool) {
	d := decoder{b: msg}
	if len(msg) < EnvelopeHeader+1 || msg[0] != 0xd8 || msg[EnvelopeHeader] != 0xbf {
		return nil, false
	}
	d.i = EnvelopeHeader + 1
	for d.i < len(msg) && msg[d.i] != 0xff {
		if msg[d.i]>>5 != 3 {
			return nil, false
		}
		key, err := d.bytesArg()
		if err != nil {
			return nil, false
		}
		start := d.i
		if err := d.skip(0); err != nil {
			return nil, false
		}
		if string(key) == "result" {
			return msg[start:d.i], true
		}
	}
	return nil, false
}

// skip passes over one value, an envelope by its length.
func (d *decoder) skip(depth int) error {
	if depth > maxDepth {
		return errDepth
	}
	if d.i >= len(d.b) {
		return d.fail("truncated")
	}
	c := d.b[d.i]
	switch c >> 5 {
	case 0, 1:
		_, err := d.arg()
		return err
	case 2, 3:
		_, err := d.bytesArg()
		return err
	case 4:
		return d.items(func(uint64) error { return d.skip(depth + 1) })
	case 5:
		return d.items(func(uint64) error {
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			return d.skip(depth + 1)
		})
	case 6:
		switch {
		case c == 0xd8 && d.i+1 < len(d.b) && d.b[d.i+1] == 0x18: // an envelope
			d.i += 2
		case c == 0xd6: // binary data
			d.i++
		default:
			return d.fail("unsupported tag")
		}
		if d.i >= len(d.b) || d.b[d.i]>>5 != 2 {
			return d.fail("a tag without a byte string")
		}
		_, err := d.bytesArg()
		return err
	}
	switch c {
	case 0xf4, 0xf5, 0xf6, 0xf7:
		d.i++
	case 0xfa:
		d.i += 5
	case 0xfb:
		d.i += 9
	default:
		return d.fail("unsupported item")
	}
	if d.i > len(d.b) {
		return d.fail("truncated")
	}
	return nil
}
