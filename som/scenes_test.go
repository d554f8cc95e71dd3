package som

import (
	"image"
	"image/color"
	"math/rand/v2"
	"strconv"
)

// Synthetic pages for the tests and benchmarks: a background that looks
// like a page of text (word-shaped dark blocks on white, a coloured header,
// a photo-like block), and mark sets for dense and sparse layouts. All of
// it is generated from fixed seeds, so it is the same on every run.

// page draws a w x h page background into a new *image.RGBA.
func page(w, h int, seed uint64) *image.RGBA {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	c := &rgbaCanvas{m}
	c.fill(m.Rect, color.RGBA{0xFF, 0xFF, 0xFF, 0xFF})
	// Header bar.
	c.fill(image.Rect(0, 0, w, min(h, 28)), color.RGBA{0x23, 0x3D, 0x6E, 0xFF})
	// A photo-like block with a gradient.
	ph := image.Rect(w*2/3, h/3, w*2/3+w/5, h/3+h/4).Intersect(m.Rect)
	for y := ph.Min.Y; y < ph.Max.Y; y++ {
		for x := ph.Min.X; x < ph.Max.X; x++ {
			c.fill(image.Rect(x, y, x+1, y+1), color.RGBA{uint8(60 + (x-ph.Min.X)*3%160), uint8(120 + (y-ph.Min.Y)*2%100), 90, 0xFF})
		}
	}
	// Lines of "words".
	ink := color.RGBA{0x33, 0x33, 0x33, 0xFF}
	link := color.RGBA{0x1A, 0x0D, 0xAB, 0xFF}
	for y := 36; y+10 < h; y += 16 {
		for x := 8 + rng.IntN(12); x < w-8; {
			ww := 12 + rng.IntN(50)
			col := ink
			if rng.IntN(9) == 0 {
				col = link
			}
			r := image.Rect(x, y+2, min(x+ww, w-8), y+11)
			if !r.Overlaps(ph) {
				c.fill(r, col)
			}
			x += ww + 6
		}
	}
	return m
}

// scene is a named set of marks on a page of a given size.
type scene struct {
	name  string
	w, h  int
	marks []Mark
}

func rectI(x, y, w, h int) Rect { return Rect{float64(x), float64(y), float64(w), float64(h)} }

// buttonGrid is 150 small buttons, 15 columns by 10 rows, 6 px apart.
func buttonGrid() scene {
	s := scene{name: "buttons", w: 1280, h: 720}
	id := 1
	for row := range 10 {
		for col := range 15 {
			s.marks = append(s.marks, Mark{ID: id, Box: rectI(40+col*80, 120+row*36, 74, 30)})
			id++
		}
	}
	return s
}

// linkList is a dense list of links: a top bar of 15 links and three
// columns of 45 links each, one per 15 px line.
func linkList() scene {
	s := scene{name: "links", w: 1280, h: 720}
	rng := rand.New(rand.NewPCG(7, 7))
	id := 1
	for i := range 15 {
		s.marks = append(s.marks, Mark{ID: id, Box: rectI(12+i*84, 4, 40+rng.IntN(30), 18)})
		id++
	}
	for col := range 3 {
		for row := range 45 {
			s.marks = append(s.marks, Mark{ID: id, Box: rectI(16+col*420, 32+row*15, 40+rng.IntN(240), 13)})
			id++
		}
	}
	return s
}

// checkboxTable is a table of 30 rows of 24 px, each with a checkbox, a
// name link, two small buttons and a select.
func checkboxTable() scene {
	s := scene{name: "table", w: 1280, h: 720}
	rng := rand.New(rand.NewPCG(3, 3))
	id := 1
	for row := range 30 {
		y := row * 24
		for _, r := range []Rect{
			rectI(20, y+5, 13, 13),
			rectI(48, y+4, 80+rng.IntN(160), 16),
			rectI(600, y+2, 44, 20),
			rectI(650, y+2, 52, 20),
			rectI(720, y+2, 120, 20),
		} {
			s.marks = append(s.marks, Mark{ID: id, Box: r})
			id++
		}
	}
	return s
}

// cards is a grid of 24 clickable cards, each holding a title link, an
// image link and two buttons: nested boxes, as on shop and news pages.
func cards() scene {
	s := scene{name: "cards", w: 1280, h: 720}
	id := 1
	for row := range 3 {
		for col := range 8 {
			x, y := 16+col*158, 40+row*226
			s.marks = append(s.marks,
				Mark{ID: id, Box: rectI(x, y, 150, 218)},
				Mark{ID: id + 1, Box: rectI(x+6, y+6, 138, 120)},
				Mark{ID: id + 2, Box: rectI(x+6, y+132, 120, 16)},
				Mark{ID: id + 3, Box: rectI(x+6, y+186, 64, 24)},
				Mark{ID: id + 4, Box: rectI(x+76, y+186, 68, 24)},
			)
			id += 5
		}
	}
	return s
}

// sparse is a simple form page with a few controls and one covered button.
func sparse() scene {
	return scene{name: "sparse", w: 480, h: 320, marks: []Mark{
		{ID: 1, Box: rectI(8, 4, 60, 20)},
		{ID: 2, Box: rectI(80, 4, 60, 20)},
		{ID: 3, Box: rectI(152, 4, 60, 20)},
		{ID: 4, Box: rectI(40, 80, 260, 28)},
		{ID: 5, Box: rectI(40, 130, 260, 28)},
		{ID: 6, Box: rectI(40, 180, 16, 16)},
		{ID: 7, Box: rectI(64, 180, 120, 16)},
		{ID: 8, Box: rectI(40, 230, 100, 32), Covered: true},
		{ID: 9, Box: rectI(340, 80, 120, 90)},
		{ID: 10, Box: rectI(150, 230, 100, 32)},
	}}
}

// edges has marks cut by every edge and corner of a small image, and some
// wholly outside it.
func edges() scene {
	return scene{name: "edges", w: 320, h: 200, marks: []Mark{
		{ID: 1, Box: rectI(-20, -10, 60, 30)},
		{ID: 2, Box: rectI(290, -8, 60, 24)},
		{ID: 3, Box: rectI(-30, 180, 50, 40)},
		{ID: 4, Box: rectI(300, 190, 40, 40)},
		{ID: 5, Box: rectI(120, -12, 80, 20)},
		{ID: 6, Box: rectI(120, 190, 80, 30)},
		{ID: 7, Box: rectI(-40, 90, 44, 20)},
		{ID: 8, Box: rectI(316, 90, 44, 20)},
		{ID: 9, Box: rectI(100, 80, 120, 40)},
		{ID: 10, Box: rectI(400, 80, 20, 20)},  // outside: left out
		{ID: 11, Box: rectI(100, -50, 20, 20)}, // outside: left out
		{ID: 12, Box: rectI(0, 0, 320, 200)},   // the whole viewport
		{ID: 1234, Box: rectI(150, 130, 8, 8)},
	}}
}

// calendar is three month views of 6 weeks of 7 day cells, 2 px apart,
// with 24 navigation buttons above them.
func calendar() scene {
	s := scene{name: "calendar", w: 1280, h: 720}
	id := 1
	for i := range 24 {
		s.marks = append(s.marks, Mark{ID: id, Box: rectI(16+i*52, 40, 48, 22)})
		id++
	}
	for month := range 3 {
		for week := range 6 {
			for day := range 7 {
				s.marks = append(s.marks, Mark{ID: id, Box: rectI(40+month*400+day*34, 120+week*26, 32, 24)})
				id++
			}
		}
	}
	return s
}

// inline is text with links inside the lines, a tag cloud of short links
// and a pagination bar of small page numbers, 150 links in all.
func inline() scene {
	s := scene{name: "inline", w: 1280, h: 720}
	rng := rand.New(rand.NewPCG(11, 11))
	id := 1
	for y := 40; y < 400 && id <= 90; y += 18 {
		for x := 16 + rng.IntN(200); x < 1200 && id <= 90; x += 120 + rng.IntN(300) {
			s.marks = append(s.marks, Mark{ID: id, Box: rectI(x, y, 30+rng.IntN(90), 16)})
			id++
		}
	}
	for y, x := 440, 16; id <= 130; id++ {
		w := 24 + rng.IntN(40)
		if x+w > 1260 {
			x, y = 16, y+20
		}
		s.marks = append(s.marks, Mark{ID: id, Box: rectI(x, y, w, 16)})
		x += w + 8
	}
	for i := 0; id <= 150; i++ {
		s.marks = append(s.marks, Mark{ID: id, Box: rectI(400+i*24, 640, 20, 20)})
		id++
	}
	return s
}

// icons is a packed grid of 150 small icon buttons (18 px, 2 px apart),
// smaller than their tags: the hardest case, where tags must shrink or
// move away.
func icons() scene {
	s := scene{name: "icons", w: 1280, h: 720}
	id := 1
	for row := range 10 {
		for col := range 15 {
			s.marks = append(s.marks, Mark{ID: id, Box: rectI(500+col*20, 300+row*20, 18, 18)})
			id++
		}
	}
	return s
}

func denseScenes() []scene {
	return []scene{buttonGrid(), linkList(), checkboxTable(), cards(), calendar(), inline(), icons()}
}

// naiveLayout places tags the way AutoGen's MultimodalWebSurfer does: the
// tag's bottom-right corner on the box's top-right corner, or below the box
// when the box is within 20 px of the top; no overlap avoidance. Tags have
// the same size as Layout's so that the comparison is about placement.
func naiveLayout(bounds image.Rectangle, marks []Mark, opts Options) []Label {
	cfg := opts.config()
	f := newTagFont(cfg.fontSize)
	var out []Label
	for i, m := range marks {
		b, ok := pixelBox(m.Box, cfg.scale, bounds)
		if !ok {
			continue
		}
		w, h := f.dims(len(strconv.Itoa(m.ID)))
		r := image.Rect(b.Max.X-w, b.Min.Y-h, b.Max.X, b.Min.Y)
		if b.Min.Y <= 20 {
			r = image.Rect(b.Max.X-w, b.Max.Y, b.Max.X, b.Max.Y+h)
		}
		c := cfg.palette[(m.ID%len(cfg.palette)+len(cfg.palette))%len(cfg.palette)]
		out = append(out, Label{Mark: i, ID: m.ID, Box: b, Rect: r, Place: classify(r, b),
			FontSize: f.size, Color: c, Text: textColor(c)})
	}
	return out
}

func imageRect(w, h int) image.Rectangle { return image.Rect(0, 0, w, h) }
