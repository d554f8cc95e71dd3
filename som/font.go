package som

import (
	"image"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// labelRunes are the only characters a label ever shows.
const labelRunes = "0123456789-"

// glyphSet holds the pre-rasterised label characters for one font size.
// Every glyph is an alpha mask of exactly cellW x cellH pixels, so a label
// of n characters is n*cellW pixels wide: digits are tabular.
type glyphSet struct {
	size         float64
	cellW, cellH int
	masks        [len(labelRunes)][]uint8 // cellW*cellH alpha values each
}

var (
	fontOnce   sync.Once
	fontParsed *opentype.Font
	fontErr    error

	glyphMu    sync.Mutex
	glyphCache = map[float64]*glyphSet{}
)

// maxGlyphSets bounds the glyph cache: callers rarely use more than the
// default size and its shrunk variant.
const maxGlyphSets = 16

func labelFont() (*opentype.Font, error) {
	fontOnce.Do(func() {
		fontParsed, fontErr = opentype.Parse(gobold.TTF)
	})
	return fontParsed, fontErr
}

// glyphs returns the glyph set for size (already clamped by the caller),
// rasterising it on first use. It returns nil only if the embedded font
// cannot be used, in which case labels are drawn without digits.
func glyphs(size float64) *glyphSet {
	glyphMu.Lock()
	defer glyphMu.Unlock()
	if g, ok := glyphCache[size]; ok {
		return g
	}
	g, err := rasterise(size)
	if err != nil {
		return nil
	}
	if len(glyphCache) >= maxGlyphSets {
		for k := range glyphCache {
			delete(glyphCache, k)
			break
		}
	}
	glyphCache[size] = g
	return g
}

func rasterise(size float64) (*glyphSet, error) {
	f, err := labelFont()
	if err != nil {
		return nil, err
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, err
	}
	defer face.Close()

	// Union of the ink boxes of all characters relative to the dot, and the
	// widest advance: the cell every glyph is centred in.
	var ink image.Rectangle
	adv := 0
	for _, r := range labelRunes {
		b, a, ok := face.GlyphBounds(r)
		if !ok {
			continue
		}
		gr := image.Rect(b.Min.X.Floor(), b.Min.Y.Floor(), b.Max.X.Ceil(), b.Max.Y.Ceil())
		ink = ink.Union(gr)
		adv = max(adv, a.Ceil())
	}
	cellW := max(adv, ink.Dx())
	cellH := ink.Dy()
	if cellW <= 0 || cellH <= 0 {
		return nil, errNoGlyphs
	}
	g := &glyphSet{size: size, cellW: cellW, cellH: cellH}
	for i, r := range labelRunes {
		m := make([]uint8, cellW*cellH)
		g.masks[i] = m
		b, _, ok := face.GlyphBounds(r)
		if !ok {
			continue
		}
		// Centre the glyph's ink horizontally in the cell; keep the common
		// baseline vertically.
		inkW := b.Max.X.Ceil() - b.Min.X.Floor()
		dotX := (cellW-inkW)/2 - b.Min.X.Floor()
		dot := fixed.P(dotX, -ink.Min.Y)
		dr, mask, mp, _, ok := face.Glyph(dot, r)
		if !ok {
			continue
		}
		for y := dr.Min.Y; y < dr.Max.Y; y++ {
			if y < 0 || y >= cellH {
				continue
			}
			for x := dr.Min.X; x < dr.Max.X; x++ {
				if x < 0 || x >= cellW {
					continue
				}
				_, _, _, a := mask.At(mp.X+x-dr.Min.X, mp.Y+y-dr.Min.Y).RGBA()
				m[y*cellW+x] = uint8(a >> 8)
			}
		}
	}
	return g, nil
}

// glyphIndex maps a label rune to its slot in glyphSet.masks, or -1.
func glyphIndex(r byte) int {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0')
	case r == '-':
		return 10
	}
	return -1
}

// quantiseSize rounds a font size to a quarter pixel so the glyph cache
// stays small.
func quantiseSize(s float64) float64 {
	return math.Round(s*4) / 4
}
