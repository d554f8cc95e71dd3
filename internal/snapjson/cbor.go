package snapjson

import (
	"encoding/binary"
	"math"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/surfkit/surf/internal/cdpcbor"
)

// DecodeCBOR decodes b, the result of DOMSnapshot.captureSnapshot as
// Chromium writes it on a CBOR pipe (see package cdpcbor), into r, which it
// resets first. It gives what Decode gives for b converted to JSON: the
// same value or an error. The shape Chromium sends is read directly;
// anything else is converted and decoded as JSON.
func DecodeCBOR(b []byte, r *domsnapshot.CaptureSnapshotResult) error {
	*r = domsnapshot.CaptureSnapshotResult{}
	d := &decoder{b: b, cbor: true}
	if d.result(r) == nil && d.i == len(b) {
		return nil
	}
	js, err := cdpcbor.ToJSON(nil, b)
	if err != nil {
		*r = domsnapshot.CaptureSnapshotResult{}
		return err
	}
	return Decode(js, r)
}

// cborOpen reads the start of an enveloped map (0xbf) or array (0x9f) and
// returns where its envelope ends.
func (d *decoder) cborOpen(start byte) (end int, err error) {
	b, i := d.b, d.i
	if len(b)-i < cdpcbor.EnvelopeHeader+1 || b[i] != 0xd8 || b[i+1] != 0x18 || b[i+2] != 0x5a || b[i+cdpcbor.EnvelopeHeader] != start {
		return 0, errSlow
	}
	end = i + cdpcbor.EnvelopeHeader + int(binary.BigEndian.Uint32(b[i+3:]))
	if end > len(b) {
		return 0, errSlow
	}
	d.i = i + cdpcbor.EnvelopeHeader + 1
	return end, nil
}

// cborClose reads the end of a map or an array, which must end its
// envelope, and reports whether it is there.
func (d *decoder) cborClose(end int) (closed bool, err error) {
	if d.i >= end {
		return false, errSlow
	}
	if d.b[d.i] != 0xff {
		return false, nil
	}
	d.i++
	if d.i != end {
		return false, errSlow
	}
	return true, nil
}

func (d *decoder) cborObject(member func(name string) error) error {
	end, err := d.cborOpen(0xbf)
	if err != nil {
		return err
	}
	var seen []string
	for {
		closed, err := d.cborClose(end)
		if err != nil || closed {
			return err
		}
		name, err := d.cborText()
		if err != nil {
			return err
		}
		for _, c := range []byte(name) {
			if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return errSlow // as the JSON decoder's member names
			}
		}
		for _, s := range seen {
			if s == name {
				return errSlow
			}
		}
		seen = append(seen, name)
		if err := member(name); err != nil {
			return err
		}
	}
}

func (d *decoder) cborArray(elem func() error) error {
	end, err := d.cborOpen(0x9f)
	if err != nil {
		return err
	}
	for {
		closed, err := d.cborClose(end)
		if err != nil || closed {
			return err
		}
		if err := elem(); err != nil {
			return err
		}
	}
}

// cborArg reads the argument of the item at the cursor, of major type mt.
func (d *decoder) cborArg(mt byte) (uint64, error) {
	if d.i >= len(d.b) || d.b[d.i]>>5 != mt {
		return 0, errSlow
	}
	v, next, ok := cdpcbor.Arg(d.b, d.i)
	if !ok {
		return 0, errSlow
	}
	d.i = next
	return v, nil
}

func (d *decoder) cborInt() (int64, error) {
	if d.i >= len(d.b) {
		return 0, errSlow
	}
	neg := d.b[d.i]>>5 == 1
	mt := byte(0)
	if neg {
		mt = 1
	}
	n, err := d.cborArg(mt)
	if err != nil || n > math.MaxInt64 {
		return 0, errSlow
	}
	if neg {
		return -1 - int64(n), nil
	}
	return int64(n), nil
}

func (d *decoder) cborFloat() (float64, error) {
	b, i := d.b, d.i
	if i >= len(b) {
		return 0, errSlow
	}
	var f float64
	switch b[i] {
	case 0xfb:
		if len(b)-i < 9 {
			return 0, errSlow
		}
		f = math.Float64frombits(binary.BigEndian.Uint64(b[i+1:]))
		d.i = i + 9
	case 0xfa:
		if len(b)-i < 5 {
			return 0, errSlow
		}
		f = float64(math.Float32frombits(binary.BigEndian.Uint32(b[i+1:])))
		d.i = i + 5
	default:
		n, err := d.cborInt()
		return float64(n), err
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errSlow // JSON has null there
	}
	if f == 0 {
		f = 0 // not -0: JSON has 0
	}
	return f, nil
}

// cborText reads a UTF-8 text string.
func (d *decoder) cborText() (string, error) {
	n, err := d.cborArg(3)
	if err != nil || n > uint64(len(d.b)-d.i) {
		return "", errSlow
	}
	s := d.b[d.i : d.i+int(n)]
	if !utf8.Valid(s) {
		return "", errSlow
	}
	d.i += int(n)
	return string(s), nil
}

// cborStr reads a string: UTF-8 text or a UTF-16LE byte string.
func (d *decoder) cborStr() (string, error) {
	if d.i < len(d.b) && d.b[d.i]>>5 == 3 {
		return d.cborText()
	}
	n, err := d.cborArg(2)
	if err != nil || n > uint64(len(d.b)-d.i) || n%2 != 0 {
		return "", errSlow
	}
	s := d.b[d.i : d.i+int(n)]
	out := make([]byte, 0, len(s))
	for k := 0; k < len(s); k += 2 {
		u := rune(binary.LittleEndian.Uint16(s[k:]))
		if utf16.IsSurrogate(u) {
			if u >= 0xdc00 || k+3 >= len(s) {
				return "", errSlow // lone: the JSON decoder decides
			}
			r := utf16.DecodeRune(u, rune(binary.LittleEndian.Uint16(s[k+2:])))
			if r == utf8.RuneError {
				return "", errSlow
			}
			u = r
			k += 2
		}
		out = utf8.AppendRune(out, u)
	}
	d.i += int(n)
	return string(out), nil
}
