package som

import "testing"

// TestDefaultFontLegible pins the property DefaultFontSize was chosen for:
// digits at least 10 px tall, so still 8 px tall when a 1280 px wide
// screenshot is scaled to 1024 for the model, with vertical strokes at
// least 2 px wide.
func TestDefaultFontLegible(t *testing.T) {
	g := glyphs(DefaultFontSize)
	if g == nil {
		t.Fatal("no glyphs for the default size")
	}
	for d := range 10 {
		m := g.masks[d]
		top, bottom := g.cellH, -1
		for y := range g.cellH {
			for x := range g.cellW {
				if m[y*g.cellW+x] >= 128 {
					top, bottom = min(top, y), max(bottom, y)
				}
			}
		}
		if h := bottom - top + 1; h < 10 {
			t.Errorf("digit %d is %d px tall at the default size, want >= 10", d, h)
		}
	}
	// The stem of "1": count solid pixels across its middle row.
	m := g.masks[1]
	y := g.cellH / 2
	solid := 0
	for x := range g.cellW {
		if m[y*g.cellW+x] >= 128 {
			solid++
		}
	}
	if solid < 2 {
		t.Errorf("stem of 1 is %d px wide, want >= 2", solid)
	}
}

func TestGlyphCache(t *testing.T) {
	a, b := glyphs(14), glyphs(14)
	if a == nil || a != b {
		t.Fatal("glyph sets are not cached")
	}
	for s := 6.0; s <= 64; s += 0.25 { // more sizes than the cache holds
		if g := glyphs(s); g == nil || g.cellW <= 0 || g.cellH <= 0 {
			t.Fatalf("size %v: no glyphs", s)
		}
	}
	glyphMu.Lock()
	n := len(glyphCache)
	glyphMu.Unlock()
	if n > maxGlyphSets {
		t.Fatalf("glyph cache holds %d sets, limit %d", n, maxGlyphSets)
	}
}
