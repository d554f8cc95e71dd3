package perception

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// Recording is one observation's input as the browser gave it: the
// capture, the accessibility nodes read for it and the render input. It
// is perceived again, with no browser, by Replay.
type Recording struct {
	// Origins are the origins of the sites the page was served from, for
	// a test to map them to placeholders.
	Origins []string `json:"origins,omitempty"`
	Seq     int      `json:"seq"`
	Capture *Capture `json:"capture"`
	// AX are the accessibility nodes read, by frame (0 the page, i+1
	// Capture.Frames[i]) and backend node id.
	AX    []map[cdp.BackendNodeID]*accessibility.Node `json:"ax"`
	Input RenderInput                                 `json:"input"`
}

// maxRecording bounds a recording's decompressed size.
const maxRecording = 256 << 20

// ReadRecording reads a recording written by WriteRecording (gzip JSON).
func ReadRecording(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("reading recording %s: %w", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, maxRecording))
	if err != nil {
		return nil, fmt.Errorf("reading recording %s: %w", path, err)
	}
	return ParseRecording(b)
}

// ParseRecording decodes a recording's JSON.
func ParseRecording(b []byte) (*Recording, error) {
	var r Recording
	if err := jsonv2.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decoding recording: %w", err)
	}
	if r.Capture == nil {
		return nil, fmt.Errorf("decoding recording: no capture")
	}
	return &r, nil
}

// WriteRecording writes r to path as gzip JSON.
func WriteRecording(path string, r *Recording) error {
	b, err := jsonv2.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding recording: %w", err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// Replay perceives a recording as the observation did: Perceive, the
// recorded accessibility nodes, Number and Render.
func (r *Recording) Replay() (*Page, *Rendered, error) {
	c := *r.Capture
	c.Handle = 0
	c.Frames = append([]FrameCapture(nil), c.Frames...)
	for i := range c.Frames {
		c.Frames[i].Handle = i + 1
	}
	p, err := Perceive(&c)
	if err != nil {
		return nil, nil, err
	}
	for _, cand := range AXTargets(p) {
		var n *accessibility.Node
		if i, _ := cand.Frame.Handle.(int); i >= 0 && i < len(r.AX) {
			n = r.AX[i][cand.Node.Backend()]
		}
		cand.SetAX(n)
	}
	return p, Render(Number(p, r.Seq), r.Input), nil
}
