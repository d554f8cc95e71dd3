// Package snapjson decodes the result of DOMSnapshot.captureSnapshot,
// Chromium's table-shaped snapshot of a page, several times faster than a
// general JSON decoder.
//
// A snapshot is hundreds of kilobytes of integer and number arrays; a
// reflection-driven decoder spends most of its time per element. Decode
// reads the shape Chromium sends with a parser written for it, and hands
// anything it does not know (an unknown member, a null, an escaped member
// name, a number an integer field cannot hold exactly) to the standard
// decoder, so its result is always what jsonv2.Unmarshal would give:
//
//	var res domsnapshot.CaptureSnapshotResult
//	if err := snapjson.Decode(raw, &res); err != nil {
//		return err
//	}
//
// DecodeCBOR reads the same result from the CBOR Chromium writes on a
// binary DevTools pipe (see package cdpcbor), without converting it.
package snapjson

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/domsnapshot"
)

// Decode decodes b, the JSON result of DOMSnapshot.captureSnapshot, into
// r, which it resets first. It gives what jsonv2.Unmarshal gives, the same
// value or an error.
func Decode(b []byte, r *domsnapshot.CaptureSnapshotResult) error {
	*r = domsnapshot.CaptureSnapshotResult{}
	if decodeFast(b, r) == nil {
		return nil
	}
	*r = domsnapshot.CaptureSnapshotResult{}
	return jsonv2.Unmarshal(b, r)
}

// errSlow says the fast path does not take this input: the standard
// decoder decides.
var errSlow = errors.New("snapjson: not on the fast path")

// decodeFast decodes b into r or returns errSlow; it never accepts what
// the standard decoder refuses.
func decodeFast(b []byte, r *domsnapshot.CaptureSnapshotResult) error {
	d := &decoder{b: b}
	if err := d.result(r); err != nil {
		return err
	}
	d.ws()
	if d.i != len(d.b) {
		return errSlow
	}
	return nil
}

type decoder struct {
	b    []byte
	i    int
	cbor bool      // b is CBOR (see DecodeCBOR)
	ints []int64   // scratch
	nums []float64 // scratch
	lens []int     // scratch
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, 0 at the end.
func (d *decoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *decoder) expect(c byte) error {
	if d.peek() != c {
		return errSlow
	}
	d.i++
	return nil
}

// object reads an object, calling member for each member with its name;
// a name seen twice is refused (the standard decoder refuses it too).
func (d *decoder) object(member func(name string) error) error {
	if d.cbor {
		return d.cborObject(member)
	}
	if err := d.expect('{'); err != nil {
		return err
	}
	var seen []string
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		name, err := d.name()
		if err != nil {
			return err
		}
		for _, s := range seen {
			if s == name {
				return errSlow
			}
		}
		seen = append(seen, name)
		if err := d.expect(':'); err != nil {
			return err
		}
		if err := member(name); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return errSlow
		}
	}
}

// name reads a member name without escapes; the names Chromium sends have
// none.
func (d *decoder) name() (string, error) {
	if d.peek() != '"' {
		return "", errSlow
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return string(d.b[start:j]), nil
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", errSlow
		}
	}
	return "", errSlow
}

// array reads an array, calling elem for each element.
func (d *decoder) array(elem func() error) error {
	if d.cbor {
		return d.cborArray(elem)
	}
	if err := d.expect('['); err != nil {
		return err
	}
	if d.peek() == ']' {
		d.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return errSlow
		}
	}
}

// number returns the extent of the JSON number at the cursor and whether
// it is a plain integer (no fraction, no exponent, not -0).
func (d *decoder) number() (lit []byte, integer bool, err error) {
	d.ws()
	b, i := d.b, d.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := i
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return nil, false, errSlow
	}
	integer = !(b[digits] == '0' && digits > start) // -0 is left to the standard decoder
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return nil, false, errSlow
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return nil, false, errSlow
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	d.i = i
	return b[start:i], integer, nil
}

// int reads an integer that fits an int64 with room to spare.
func (d *decoder) int() (int64, error) {
	if d.cbor {
		return d.cborInt()
	}
	lit, integer, err := d.number()
	if err != nil || !integer || len(lit) > 18 {
		return 0, errSlow
	}
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	var n int64
	for _, c := range lit {
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// float reads a number as strconv.ParseFloat does (the standard decoder
// uses it too).
func (d *decoder) float() (float64, error) {
	if d.cbor {
		return d.cborFloat()
	}
	lit, integer, err := d.number()
	if err != nil {
		return 0, err
	}
	if integer && len(lit) <= 15 { // exact in a float64
		neg := lit[0] == '-'
		if neg {
			lit = lit[1:]
		}
		var n int64
		for _, c := range lit {
			n = n*10 + int64(c-'0')
		}
		if neg {
			n = -n
		}
		return float64(n), nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return 0, errSlow
	}
	return f, nil
}

// str reads a string.
func (d *decoder) str() (string, error) {
	if d.cbor {
		return d.cborStr()
	}
	if d.peek() != '"' {
		return "", errSlow
	}
	b := d.b
	start := d.i + 1
	j, end, q := start, -1, -1
	var out []byte // the decoded string, once an escape is seen
	for end < 0 {
		if q < j { // the next quote, found again only once passed
			if q = bytes.IndexByte(b[j:], '"'); q < 0 {
				return "", errSlow
			}
			q += j
		}
		bs := bytes.IndexByte(b[j:q], '\\')
		if bs < 0 {
			if out != nil {
				out = append(out, b[j:q]...)
			}
			end = q
			break
		}
		bs += j
		if out == nil {
			out = make([]byte, 0, q-start+16)
		}
		out = append(out, b[j:bs]...)
		n, ok := unescape(b[bs:], &out)
		if !ok {
			return "", errSlow
		}
		j = bs + n
	}
	raw := b[start:end]
	var hi byte
	for _, c := range raw {
		if c < 0x20 {
			return "", errSlow
		}
		hi |= c
	}
	if hi >= 0x80 && !utf8.Valid(raw) {
		return "", errSlow
	}
	d.i = end + 1
	if out != nil {
		return string(out), nil
	}
	return string(raw), nil
}

// unescape decodes the escape at the start of b onto out and says how
// many bytes it took. A lone surrogate is left to the standard decoder.
func unescape(b []byte, out *[]byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	var c byte
	switch b[1] {
	case '"', '\\', '/':
		c = b[1]
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		r, ok := hex4(b[2:])
		if !ok {
			return 0, false
		}
		n := 6
		if utf16.IsSurrogate(r) {
			if len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
				return 0, false
			}
			r2, ok := hex4(b[8:])
			if r = utf16.DecodeRune(r, r2); !ok || r == utf8.RuneError {
				return 0, false
			}
			n = 12
		}
		*out = utf8.AppendRune(*out, r)
		return n, true
	default:
		return 0, false
	}
	*out = append(*out, c)
	return 2, true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// ints reads an array of integers.
func ints[T ~int64](d *decoder) ([]T, error) {
	d.ints = d.ints[:0]
	err := d.array(func() error {
		n, err := d.int()
		d.ints = append(d.ints, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]T, len(d.ints))
	for i, n := range d.ints {
		out[i] = T(n)
	}
	return out, nil
}

// floats reads an array of numbers.
func (d *decoder) floats() ([]float64, error) {
	d.nums = d.nums[:0]
	err := d.array(func() error {
		f, err := d.float()
		d.nums = append(d.nums, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	return append(make([]float64, 0, len(d.nums)), d.nums...), nil
}

// intTable reads an array of integer arrays (styles, attributes) into one
// backing array.
func intTable[T ~[]int64](d *decoder) ([]T, error) {
	return table[int64, T](d, &d.ints, d.int)
}

// rects reads an array of rectangles into one backing array.
func (d *decoder) rects() ([]domsnapshot.Rectangle, error) {
	return table[float64, domsnapshot.Rectangle](d, &d.nums, d.float)
}

// table reads an array of arrays of elem into one backing array, with
// scratch for the elements read.
func table[E int64 | float64, T ~[]E](d *decoder, scratch *[]E, elem func() (E, error)) ([]T, error) {
	*scratch, d.lens = (*scratch)[:0], d.lens[:0]
	err := d.array(func() error {
		n := len(*scratch)
		err := d.array(func() error {
			v, err := elem()
			*scratch = append(*scratch, v)
			return err
		})
		d.lens = append(d.lens, len(*scratch)-n)
		return err
	})
	if err != nil {
		return nil, err
	}
	all := append(make([]E, 0, len(*scratch)), *scratch...)
	out := make([]T, len(d.lens))
	for i, n := range d.lens {
		out[i], all = T(all[:n:n]), all[n:]
	}
	return out, nil
}

func (d *decoder) result(r *domsnapshot.CaptureSnapshotResult) error {
	return d.object(func(name string) error {
		var err error
		switch name {
		case "documents":
			r.Documents = []*domsnapshot.DocumentSnapshot{}
			err = d.array(func() error {
				doc := &domsnapshot.DocumentSnapshot{}
				r.Documents = append(r.Documents, doc)
				return d.document(doc)
			})
		case "strings":
			r.Strings = []string{}
			err = d.array(func() error {
				s, err := d.str()
				r.Strings = append(r.Strings, s)
				return err
			})
		default:
			err = errSlow
		}
		return err
	})
}

func (d *decoder) document(doc *domsnapshot.DocumentSnapshot) error {
	strs := map[string]*domsnapshot.StringIndex{
		"documentURL": &doc.DocumentURL, "title": &doc.Title, "baseURL": &doc.BaseURL,
		"contentLanguage": &doc.ContentLanguage, "encodingName": &doc.EncodingName,
		"publicId": &doc.PublicID, "systemId": &doc.SystemID, "frameId": &doc.FrameID,
	}
	nums := map[string]*float64{
		"scrollOffsetX": &doc.ScrollOffsetX, "scrollOffsetY": &doc.ScrollOffsetY,
		"contentWidth": &doc.ContentWidth, "contentHeight": &doc.ContentHeight,
	}
	return d.object(func(name string) error {
		var err error
		if p := strs[name]; p != nil {
			var n int64
			n, err = d.int()
			*p = domsnapshot.StringIndex(n)
			return err
		}
		if p := nums[name]; p != nil {
			*p, err = d.float()
			return err
		}
		switch name {
		case "nodes":
			doc.Nodes = &domsnapshot.NodeTreeSnapshot{}
			err = d.nodes(doc.Nodes)
		case "layout":
			doc.Layout = &domsnapshot.LayoutTreeSnapshot{}
			err = d.layout(doc.Layout)
		case "textBoxes":
			doc.TextBoxes = &domsnapshot.TextBoxSnapshot{}
			err = d.textBoxes(doc.TextBoxes)
		default:
			err = errSlow
		}
		return err
	})
}

func (d *decoder) nodes(n *domsnapshot.NodeTreeSnapshot) error {
	rareStrs := map[string]**domsnapshot.RareStringData{
		"shadowRootType": &n.ShadowRootType, "textValue": &n.TextValue, "inputValue": &n.InputValue,
		"pseudoType": &n.PseudoType, "pseudoIdentifier": &n.PseudoIdentifier,
		"currentSourceURL": &n.CurrentSourceURL, "originURL": &n.OriginURL,
	}
	rareBools := map[string]**domsnapshot.RareBooleanData{
		"inputChecked": &n.InputChecked, "optionSelected": &n.OptionSelected, "isClickable": &n.IsClickable,
	}
	return d.object(func(name string) error {
		var err error
		if p := rareStrs[name]; p != nil {
			*p, err = d.rareString()
			return err
		}
		if p := rareBools[name]; p != nil {
			*p, err = d.rareBool()
			return err
		}
		switch name {
		case "parentIndex":
			n.ParentIndex, err = ints[int64](d)
		case "nodeType":
			n.NodeType, err = ints[int64](d)
		case "nodeName":
			n.NodeName, err = ints[domsnapshot.StringIndex](d)
		case "nodeValue":
			n.NodeValue, err = ints[domsnapshot.StringIndex](d)
		case "backendNodeId":
			n.BackendNodeID, err = ints[cdp.BackendNodeID](d)
		case "attributes":
			n.Attributes, err = intTable[domsnapshot.ArrayOfStrings](d)
		case "contentDocumentIndex":
			n.ContentDocumentIndex, err = d.rareInt()
		default:
			err = errSlow
		}
		return err
	})
}

func (d *decoder) layout(l *domsnapshot.LayoutTreeSnapshot) error {
	return d.object(func(name string) error {
		var err error
		switch name {
		case "nodeIndex":
			l.NodeIndex, err = ints[int64](d)
		case "styles":
			l.Styles, err = intTable[domsnapshot.ArrayOfStrings](d)
		case "bounds":
			l.Bounds, err = d.rects()
		case "text":
			l.Text, err = ints[domsnapshot.StringIndex](d)
		case "stackingContexts":
			l.StackingContexts, err = d.rareBool()
		case "paintOrders":
			l.PaintOrders, err = ints[int64](d)
		case "offsetRects":
			l.OffsetRects, err = d.rects()
		case "scrollRects":
			l.ScrollRects, err = d.rects()
		case "clientRects":
			l.ClientRects, err = d.rects()
		case "blendedBackgroundColors":
			l.BlendedBackgroundColors, err = ints[domsnapshot.StringIndex](d)
		case "textColorOpacities":
			l.TextColorOpacities, err = d.floats()
		default:
			err = errSlow
		}
		return err
	})
}

func (d *decoder) textBoxes(t *domsnapshot.TextBoxSnapshot) error {
	return d.object(func(name string) error {
		var err error
		switch name {
		case "layoutIndex":
			t.LayoutIndex, err = ints[int64](d)
		case "bounds":
			t.Bounds, err = d.rects()
		case "start":
			t.Start, err = ints[int64](d)
		case "length":
			t.Length, err = ints[int64](d)
		default:
			err = errSlow
		}
		return err
	})
}

func (d *decoder) rareString() (*domsnapshot.RareStringData, error) {
	r := &domsnapshot.RareStringData{}
	return r, d.object(func(name string) error {
		var err error
		switch name {
		case "index":
			r.Index, err = ints[int64](d)
		case "value":
			r.Value, err = ints[domsnapshot.StringIndex](d)
		default:
			err = errSlow
		}
		return err
	})
}

func (d *decoder) rareBool() (*domsnapshot.RareBooleanData, error) {
	r := &domsnapshot.RareBooleanData{}
	return r, d.object(func(name string) error {
		if name != "index" {
			return errSlow
		}
		var err error
		r.Index, err = ints[int64](d)
		return err
	})
}

func (d *decoder) rareInt() (*domsnapshot.RareIntegerData, error) {
	r := &domsnapshot.RareIntegerData{}
	return r, d.object(func(name string) error {
		var err error
		switch name {
		case "index":
			r.Index, err = ints[int64](d)
		case "value":
			r.Value, err = ints[int64](d)
		default:
			err = errSlow
		}
		return err
	})
}
