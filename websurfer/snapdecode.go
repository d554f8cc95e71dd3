package websurfer

import (
	"fmt"
	"sync/atomic"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/surfkit/surf/internal/snapjson"
)

// snapshotResult is DOMSnapshot.captureSnapshot's typed result, decoded
// straight from Playwright's parsed value: a large page's snapshot is
// hundreds of kilobytes, and re-encoding it to JSON to decode it again
// would cost more than the capture.
type snapshotResult struct {
	domsnapshot.CaptureSnapshotResult
}

var _ anyDecoder = (*snapshotResult)(nil)

var _ rawDecoder = (*snapshotResult)(nil)

var _ cborDecoder = (*snapshotResult)(nil)

// snapshotsFromCBOR counts the snapshots decoded from the browser's CBOR,
// for the test that checks observations take that path.
var snapshotsFromCBOR atomic.Int64

func (r *snapshotResult) decodeCBOR(b []byte) error {
	snapshotsFromCBOR.Add(1)
	return snapjson.DecodeCBOR(b, &r.CaptureSnapshotResult)
}

func (r *snapshotResult) decodeRaw(b []byte) error {
	return snapjson.Decode(b, &r.CaptureSnapshotResult)
}

func (r *snapshotResult) decodeAny(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("snapshot is a %T, not an object", v)
	}
	r.Strings = strs(m["strings"])
	docs, _ := m["documents"].([]any)
	for _, d := range docs {
		dm, ok := d.(map[string]any)
		if !ok {
			return fmt.Errorf("snapshot document is a %T", d)
		}
		r.Documents = append(r.Documents, decodeDoc(dm))
	}
	return nil
}

func decodeDoc(m map[string]any) *domsnapshot.DocumentSnapshot {
	d := &domsnapshot.DocumentSnapshot{
		DocumentURL:   sidx(m["documentURL"]),
		Title:         sidx(m["title"]),
		BaseURL:       sidx(m["baseURL"]),
		FrameID:       sidx(m["frameId"]),
		ScrollOffsetX: num(m["scrollOffsetX"]),
		ScrollOffsetY: num(m["scrollOffsetY"]),
		ContentWidth:  num(m["contentWidth"]),
		ContentHeight: num(m["contentHeight"]),
	}
	if n, ok := m["nodes"].(map[string]any); ok {
		nt := &domsnapshot.NodeTreeSnapshot{
			ParentIndex:          ints(n["parentIndex"]),
			NodeType:             ints(n["nodeType"]),
			ShadowRootType:       rareStr(n["shadowRootType"]),
			NodeName:             sidxs(n["nodeName"]),
			NodeValue:            sidxs(n["nodeValue"]),
			TextValue:            rareStr(n["textValue"]),
			InputValue:           rareStr(n["inputValue"]),
			InputChecked:         rareBool(n["inputChecked"]),
			OptionSelected:       rareBool(n["optionSelected"]),
			ContentDocumentIndex: rareInt(n["contentDocumentIndex"]),
			IsClickable:          rareBool(n["isClickable"]),
		}
		for _, b := range ints(n["backendNodeId"]) {
			nt.BackendNodeID = append(nt.BackendNodeID, cdp.BackendNodeID(b))
		}
		if as, ok := n["attributes"].([]any); ok {
			nt.Attributes = make([]domsnapshot.ArrayOfStrings, len(as))
			for i, a := range as {
				nt.Attributes[i] = ints(a)
			}
		}
		d.Nodes = nt
	}
	if l, ok := m["layout"].(map[string]any); ok {
		lt := &domsnapshot.LayoutTreeSnapshot{
			NodeIndex:   ints(l["nodeIndex"]),
			Text:        sidxs(l["text"]),
			PaintOrders: ints(l["paintOrders"]),
			Bounds:      rects(l["bounds"]),
			OffsetRects: rects(l["offsetRects"]),
			ScrollRects: rects(l["scrollRects"]),
			ClientRects: rects(l["clientRects"]),
		}
		if ss, ok := l["styles"].([]any); ok {
			lt.Styles = make([]domsnapshot.ArrayOfStrings, len(ss))
			for i, s := range ss {
				lt.Styles[i] = ints(s)
			}
		}
		d.Layout = lt
	}
	if tb, ok := m["textBoxes"].(map[string]any); ok {
		d.TextBoxes = &domsnapshot.TextBoxSnapshot{
			LayoutIndex: ints(tb["layoutIndex"]),
			Bounds:      rects(tb["bounds"]),
		}
	}
	return d
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func sidx(v any) domsnapshot.StringIndex {
	if f, ok := v.(float64); ok {
		return domsnapshot.StringIndex(f)
	}
	return -1
}

func ints(v any) []int64 {
	a, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]int64, len(a))
	for i, x := range a {
		f, _ := x.(float64)
		out[i] = int64(f)
	}
	return out
}

func sidxs(v any) []domsnapshot.StringIndex {
	a, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]domsnapshot.StringIndex, len(a))
	for i, x := range a {
		out[i] = sidx(x)
	}
	return out
}

func strs(v any) []string {
	a, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, len(a))
	for i, x := range a {
		out[i], _ = x.(string)
	}
	return out
}

func rects(v any) []domsnapshot.Rectangle {
	a, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]domsnapshot.Rectangle, len(a))
	for i, x := range a {
		r, _ := x.([]any)
		if len(r) == 0 {
			continue
		}
		rr := make(domsnapshot.Rectangle, len(r))
		for j, f := range r {
			rr[j], _ = f.(float64)
		}
		out[i] = rr
	}
	return out
}

func rareStr(v any) *domsnapshot.RareStringData {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return &domsnapshot.RareStringData{Index: ints(m["index"]), Value: sidxs(m["value"])}
}

func rareBool(v any) *domsnapshot.RareBooleanData {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return &domsnapshot.RareBooleanData{Index: ints(m["index"])}
}

func rareInt(v any) *domsnapshot.RareIntegerData {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return &domsnapshot.RareIntegerData{Index: ints(m["index"]), Value: ints(m["value"])}
}
