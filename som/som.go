// Package som draws set-of-mark annotations on a screenshot.
//
// A coloured outline goes around every interactive element, with a
// numbered tag the model can refer to ("click 12"). Tags are placed so that they never overlap each
// other, cover as little as possible of the elements on the page and sit
// where it is clear which element they label (Layout), and they are drawn
// straight into the pixel buffer, so that a 1280x720 screenshot with 150
// marks costs a few milliseconds (Draw). Measure scores a placement.
// Everything here is pure Go and free of I/O: no context, no browser.
package som

import (
	"errors"
	"image"
	"image/color"
	"math"
)

// Defaults used when the matching Options field is zero.
const (
	// DefaultFontSize is the label font size in image pixels. Go Bold at
	// 14 px has digits about 10 px tall and strokes about 2 px wide, which
	// stay readable when a 1280x720 screenshot is downscaled to 1024
	// pixels wide for a vision model (8 px digits). It is also the size
	// AutoGen's set-of-mark labels use.
	DefaultFontSize = 14
	// DefaultStroke is the width of the box outline in image pixels.
	DefaultStroke = 2
)

// Limits applied to Options so that odd values cannot make drawing absurd.
const (
	minFontSize = 6
	maxFontSize = 64
	maxStroke   = 16
)

// errNoGlyphs reports that the embedded font produced no usable glyphs.
var errNoGlyphs = errors.New("som: label font has no digit glyphs")

// Rect is a box in image pixels: its top-left corner and its size. Boxes
// with a non-positive or non-finite size are ignored.
type Rect struct {
	X, Y, W, H float64
}

// Mark is one element to annotate.
type Mark struct {
	// ID is the number shown in the label. IDs need not be unique or
	// positive; every mark gets its own label.
	ID int
	// Box is the element's bounding box in image pixels (CSS pixels times
	// the device scale factor, or set Options.Scale). It may lie partly
	// or wholly outside the image: only the visible part is outlined, and
	// a mark with no visible part is left out.
	Box Rect
	// Covered marks an element that is partly hidden behind another one
	// (a banner, a dialog). Its outline is drawn dashed.
	Covered bool
}

// Options tune Layout and Draw. The zero value gives the defaults.
type Options struct {
	// FontSize is the label font size in image pixels; 0 means
	// DefaultFontSize. Values are clamped to [6, 64].
	FontSize float64
	// Stroke is the box outline width in image pixels; 0 means
	// DefaultStroke, a negative value draws no outline.
	Stroke int
	// Palette lists the label and outline colours; nil means
	// DefaultPalette. Alpha is ignored: colours are drawn opaque.
	// Neighbouring marks get different colours where the palette allows.
	Palette []color.RGBA
	// Grayscale turns the screenshot grey before drawing, as AutoGen
	// does, to make the coloured marks stand out. Digits do not need it
	// (tags are opaque, with fixed contrast), on text pages it did not
	// make tags stand out more (BenchmarkGrayscaleSalience), it drops
	// colour the model may need (red error text, a green "in stock"), and
	// it costs about 1 ms on a 1280x720 RGBA image, so it is off by
	// default.
	Grayscale bool
	// Scale multiplies every mark box, e.g. the device scale factor when
	// boxes are in CSS pixels; 0 means 1.
	Scale float64
	// Text lists areas of page text that are not marks (a checkbox's
	// label, a paragraph) in the same units as mark boxes. Tags avoid
	// covering them, more than their own box and less than other marks'
	// boxes. They are not drawn.
	Text []Rect
	// MaxDetach bounds how far, in image pixels, a tag may sit from its
	// box when every spot next to it is taken; a tag that finds no room
	// within it is Dropped (the outline alone is drawn) rather than
	// joined to its box by a long leader line. 0 means no bound.
	MaxDetach int
}

// config is Options with defaults applied and values clamped.
type config struct {
	fontSize float64
	stroke   int
	palette  []color.RGBA
	gray     bool
	scale    float64
	text     []Rect
	detach   int // MaxDetach, 0 for none
}

func (o Options) config() config {
	c := config{
		fontSize: o.FontSize,
		stroke:   o.Stroke,
		palette:  o.Palette,
		gray:     o.Grayscale,
		scale:    o.Scale,
		text:     o.Text,
		detach:   max(o.MaxDetach, 0),
	}
	if c.fontSize == 0 || math.IsNaN(c.fontSize) {
		c.fontSize = DefaultFontSize
	}
	c.fontSize = quantiseSize(min(max(c.fontSize, minFontSize), maxFontSize))
	switch {
	case c.stroke == 0:
		c.stroke = DefaultStroke
	case c.stroke < 0:
		c.stroke = 0
	case c.stroke > maxStroke:
		c.stroke = maxStroke
	}
	if len(c.palette) == 0 {
		c.palette = DefaultPalette
	}
	if c.scale == 0 || math.IsNaN(c.scale) || math.IsInf(c.scale, 0) || c.scale < 0 {
		c.scale = 1
	}
	return c
}

// pixelBox converts a mark box to whole pixels (covering every pixel the
// box touches) and clips it to bounds. ok is false when nothing is left.
func pixelBox(r Rect, scale float64, bounds image.Rectangle) (image.Rectangle, bool) {
	x0, y0 := r.X*scale, r.Y*scale
	x1, y1 := (r.X+r.W)*scale, (r.Y+r.H)*scale
	for _, v := range [...]float64{x0, y0, x1, y1} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return image.Rectangle{}, false
		}
	}
	if !(r.W > 0 && r.H > 0) {
		return image.Rectangle{}, false
	}
	// Clamp before converting so huge coordinates cannot overflow int.
	const lim = 1 << 30
	clamp := func(v float64) int { return int(min(max(v, -lim), lim)) }
	b := image.Rect(clamp(math.Floor(x0)), clamp(math.Floor(y0)), clamp(math.Ceil(x1)), clamp(math.Ceil(y1)))
	b = b.Intersect(bounds)
	return b, !b.Empty()
}
