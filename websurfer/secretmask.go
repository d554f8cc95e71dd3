package websurfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/surfkit/surf/perception"
)

// Secrets in images. The observation's text shows <secret:NAME> where a
// secret's value is, but the screenshot shows what the page paints: a
// secret typed into a visible field, or echoed by the page. Every image
// surf makes (the set-of-mark image, the plain image, Screenshot) has
// those places painted over before it is drawn on or handed out. They are
// found again in each snapshot, since fields move: a field or text whose
// value holds a secret (in any of the encodings Redact knows), and every
// field surf typed a secret into that still holds a value (the page may
// have reformatted it).

// maskColor paints over secrets.
var maskColor = color.RGBA{0x40, 0x40, 0x40, 0xff}

// maskMargin widens a mask (CSS pixels), for focus rings and antialiasing.
const maskMargin = 2

// secretField is a field surf typed a secret into: its node in a CDP
// session.
type secretField struct {
	sess    *cdpSession
	backend cdp.BackendNodeID
}

// rememberSecretField notes that r received a secret, so images mask it
// while it holds a value.
func (s *Surfer) rememberSecretField(r *elementRef) {
	if r == nil || r.src == nil {
		return
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	if s.secretFields == nil {
		s.secretFields = map[secretField]bool{}
	}
	s.secretFields[secretField{r.sess(), r.backend}] = true
}

// hasSecrets reports whether images may need masks at all.
func (s *Surfer) hasSecrets() bool {
	if s.pol.Redacts() { // secrets, or text a person typed (Input)
		return true
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	return len(s.secretFields) > 0
}

// secretMasks returns the viewport boxes that show a secret in snaps.
func (s *Surfer) secretMasks(snaps []*frameSnap, viewport rect) []rect {
	if !s.hasSecrets() {
		return nil
	}
	s.smu.Lock()
	typed := make(map[secretField]bool, len(s.secretFields))
	for k := range s.secretFields {
		typed[k] = true
	}
	s.smu.Unlock()
	typedAt := func(h any, id cdp.BackendNodeID) bool {
		sess, _ := h.(*cdpSession)
		return typed[secretField{sess, id}]
	}
	return perception.SecretBoxes(snaps, viewport, maskMargin, typedAt, s.pol.ContainsSecret)
}

// maskJPEG paints masks (viewport CSS pixels) over a JPEG screenshot of
// viewport and encodes it again. With no masks raw is returned as is.
func maskJPEG(raw []byte, masks []rect, viewport rect, quality int) ([]byte, error) {
	if len(masks) == 0 {
		return raw, nil
	}
	src, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot to mask a secret: %w", err)
	}
	b := src.Bounds()
	img := image.NewRGBA(b)
	draw.Draw(img, b, src, b.Min, draw.Src)
	scale := 1.0
	if viewport.W > 0 {
		scale = float64(b.Dx()) / viewport.W
	}
	for _, m := range masks {
		// Outwards to whole 8x8 blocks, so no JPEG block mixes a
		// secret's pixels with the mask's.
		x0 := int(math.Floor(m.X*scale)) &^ 7
		y0 := int(math.Floor(m.Y*scale)) &^ 7
		x1 := (int(math.Ceil(m.Right()*scale)) + 7) &^ 7
		y1 := (int(math.Ceil(m.Bottom()*scale)) + 7) &^ 7
		r := image.Rect(b.Min.X+x0, b.Min.Y+y0, b.Min.X+x1, b.Min.Y+y1).Intersect(b)
		draw.Draw(img, r, image.NewUniform(maskColor), image.Point{}, draw.Src)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("encoding the masked screenshot: %w", err)
	}
	return buf.Bytes(), nil
}

// maskedScreenshot is Screenshot's capture: when secrets may be on
// screen, the page is read right after the capture and what shows a
// secret is masked. A page that cannot be read gives no image.
func (s *Surfer) maskedScreenshot(ctx context.Context, t *tab) ([]byte, error) {
	raw, err := captureJPEG(ctx, t.sess, s.cfg.JPEGQuality)
	if err != nil || !s.hasSecrets() {
		return raw, err
	}
	return s.maskNow(ctx, t, raw, s.cfg.JPEGQuality)
}

// maskNow masks an image of tab t's viewport taken a moment ago (a
// screenshot, a screencast frame): the page is read now and what shows a
// secret is painted over. A page that cannot be read gives no image.
func (s *Surfer) maskNow(ctx context.Context, t *tab, raw []byte, quality int) ([]byte, error) {
	var m page.GetLayoutMetricsResult
	if err := t.sess.Call(ctx, page.CommandGetLayoutMetrics, nil, &m); err != nil {
		return nil, fmt.Errorf("reading the page to mask secrets: %w", err)
	}
	if m.CSSLayoutViewport == nil {
		return nil, errors.New("reading the page to mask secrets: no layout viewport")
	}
	res, err := captureSnapshot(ctx, t.sess)
	if err != nil {
		return nil, fmt.Errorf("reading the page to mask secrets: %w", err)
	}
	frames := s.outOfProcessFrames(ctx, t)
	reads := make([]*frameRead, len(frames))
	for i, o := range frames {
		reads[i] = &frameRead{o: o}
		reads[i].res, reads[i].err = captureSnapshot(ctx, o.sess)
	}
	// Frames are placed where the browser shows them (padding included),
	// as observations place them.
	p, err := perception.Parse(s.assemble(ctx, t, &m, res, reads, nil))
	if err != nil {
		return nil, fmt.Errorf("reading the page to mask secrets: %w", err)
	}
	if len(p.Unread) > 0 {
		// It may show a secret that cannot be found.
		u := p.Unread[0]
		return nil, fmt.Errorf("reading frame %s to mask secrets: %w", q(u.URL, 80), u.Err)
	}
	return maskJPEG(raw, s.secretMasks(p.Frames, p.View), p.View, quality)
}
