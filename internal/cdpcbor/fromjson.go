package cdpcbor

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// FromJSON appends to dst the CBOR form of the JSON object js, as
// Chromium's own conversion makes it: objects and arrays enveloped, ASCII
// strings as text strings and others as UTF-16 (so that an escaped lone
// surrogate survives), integers in int32 range as integers and other
// numbers as doubles. Base64 strings stay strings: the browser decodes
// binary parameters from them.
func FromJSON(dst, js []byte) ([]byte, error) {
	e := encoder{in: js, out: dst}
	e.ws()
	if e.i >= len(js) || js[e.i] != '{' {
		return dst, e.fail("a message that is not an object")
	}
	if err := e.value(0); err != nil {
		return dst, err
	}
	e.ws()
	if e.i != len(js) {
		return dst, e.fail("text after the message")
	}
	return e.out, nil
}

type encoder struct {
	in  []byte
	i   int
	out []byte
	u16 []uint16
}

func (e *encoder) fail(what string) error {
	return fmt.Errorf("cdpcbor: JSON: %s at byte %d", what, e.i)
}

func (e *encoder) ws() {
	for e.i < len(e.in) {
		switch e.in[e.i] {
		case ' ', '\t', '\n', '\r':
			e.i++
		default:
			return
		}
	}
}

// head writes an initial byte of major type mt with argument n.
func (e *encoder) head(mt byte, n uint64) {
	switch {
	case n < 24:
		e.out = append(e.out, mt<<5|byte(n))
	case n <= math.MaxUint8:
		e.out = append(e.out, mt<<5|24, byte(n))
	case n <= math.MaxUint16:
		e.out = append(e.out, mt<<5|25, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		e.out = append(e.out, mt<<5|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		e.out = append(e.out, mt<<5|27)
		e.out = binary.BigEndian.AppendUint64(e.out, n)
	}
}

func (e *encoder) value(depth int) error {
	if depth > maxDepth {
		return errDepth
	}
	e.ws()
	if e.i >= len(e.in) {
		return e.fail("truncated")
	}
	switch c := e.in[e.i]; {
	case c == '{' || c == '[':
		return e.container(depth, c)
	case c == '"':
		return e.str()
	case c == 't':
		return e.word("true", 0xf5)
	case c == 'f':
		return e.word("false", 0xf4)
	case c == 'n':
		return e.word("null", 0xf6)
	case c == '-' || c >= '0' && c <= '9':
		return e.number()
	}
	return e.fail("unexpected character")
}

func (e *encoder) word(w string, b byte) error {
	if len(e.in)-e.i < len(w) || string(e.in[e.i:e.i+len(w)]) != w {
		return e.fail("unexpected word")
	}
	e.i += len(w)
	e.out = append(e.out, b)
	return nil
}

// container writes an object or an array inside its envelope.
func (e *encoder) container(depth int, open byte) error {
	e.out = append(e.out, 0xd8, 0x18, 0x5a, 0, 0, 0, 0)
	at := len(e.out)
	closing := byte(']')
	if open == '{' {
		closing = '}'
		e.out = append(e.out, 0xbf)
	} else {
		e.out = append(e.out, 0x9f)
	}
	e.i++
	e.ws()
	if e.i < len(e.in) && e.in[e.i] == closing {
		e.i++
	} else {
		for {
			e.ws()
			if open == '{' {
				if e.i >= len(e.in) || e.in[e.i] != '"' {
					return e.fail("an object key that is not a string")
				}
				if err := e.str(); err != nil {
					return err
				}
				e.ws()
				if e.i >= len(e.in) || e.in[e.i] != ':' {
					return e.fail("no colon after an object key")
				}
				e.i++
			}
			if err := e.value(depth + 1); err != nil {
				return err
			}
			e.ws()
			if e.i >= len(e.in) {
				return e.fail("truncated")
			}
			if e.in[e.i] == ',' {
				e.i++
				continue
			}
			if e.in[e.i] != closing {
				return e.fail("unexpected character")
			}
			e.i++
			break
		}
	}
	e.out = append(e.out, 0xff)
	n := len(e.out) - at
	if n > math.MaxUint32 {
		return e.fail("message too large")
	}
	binary.BigEndian.PutUint32(e.out[at-4:at], uint32(n))
	return nil
}

// str writes a JSON string: ASCII as a text string, anything else as
// UTF-16LE.
func (e *encoder) str() error {
	e.i++ // the quote
	start := e.i
	ascii := true
	for ; e.i < len(e.in); e.i++ {
		c := e.in[e.i]
		if c == '"' {
			break
		}
		if c == '\\' || c >= utf8.RuneSelf || c < 0x20 {
			ascii = false
			break
		}
	}
	if ascii {
		if e.i >= len(e.in) {
			return e.fail("unterminated string")
		}
		e.head(3, uint64(e.i-start))
		e.out = append(e.out, e.in[start:e.i]...)
		e.i++
		return nil
	}
	// Slow path: unescape to UTF-16 code units.
	e.i = start
	u := e.u16[:0]
	allASCII := true
	for {
		if e.i >= len(e.in) {
			return e.fail("unterminated string")
		}
		c := e.in[e.i]
		switch {
		case c == '"':
			e.i++
			e.u16 = u
			if allASCII {
				e.head(3, uint64(len(u)))
				for _, x := range u {
					e.out = append(e.out, byte(x))
				}
				return nil
			}
			e.head(2, uint64(2*len(u)))
			for _, x := range u {
				e.out = binary.LittleEndian.AppendUint16(e.out, x)
			}
			return nil
		case c < 0x20:
			return e.fail("control character in a string")
		case c == '\\':
			if e.i+1 >= len(e.in) {
				return e.fail("unterminated string")
			}
			esc := e.in[e.i+1]
			e.i += 2
			var x uint16
			switch esc {
			case '"', '\\', '/':
				x = uint16(esc)
			case 'b':
				x = '\b'
			case 'f':
				x = '\f'
			case 'n':
				x = '\n'
			case 'r':
				x = '\r'
			case 't':
				x = '\t'
			case 'u':
				if len(e.in)-e.i < 4 {
					return e.fail("short \\u escape")
				}
				v, err := strconv.ParseUint(string(e.in[e.i:e.i+4]), 16, 16)
				if err != nil {
					return e.fail("bad \\u escape")
				}
				e.i += 4
				x = uint16(v)
			default:
				return e.fail("bad escape")
			}
			if x >= utf8.RuneSelf {
				allASCII = false
			}
			u = append(u, x)
		case c < utf8.RuneSelf:
			u = append(u, uint16(c))
			e.i++
		default:
			allASCII = false
			r, size := utf8.DecodeRune(e.in[e.i:])
			e.i += size // an invalid byte becomes U+FFFD
			u = utf16.AppendRune(u, r)
		}
	}
}

func (e *encoder) number() error {
	start := e.i
	integer := true
	if e.in[e.i] == '-' {
		e.i++
	}
	digits := e.i
	for e.i < len(e.in) {
		c := e.in[e.i]
		if c >= '0' && c <= '9' {
			e.i++
			continue
		}
		if c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			integer = false
			e.i++
			continue
		}
		break
	}
	if e.i == digits {
		return e.fail("a number without digits")
	}
	text := string(e.in[start:e.i])
	if integer {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
			if n >= 0 {
				e.head(0, uint64(n))
			} else {
				e.head(1, uint64(-1-n))
			}
			return nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRange(err) {
		return e.fail("bad number " + strconv.Quote(text))
	}
	e.out = append(e.out, 0xfb)
	e.out = binary.BigEndian.AppendUint64(e.out, math.Float64bits(f))
	return nil
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
