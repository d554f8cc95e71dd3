package som

import (
	"image"
	"math"
)

// grid is a uniform-grid spatial index of rectangles, used to find the
// boxes and tags near a candidate without scanning all of them.
type grid struct {
	min        image.Point
	cell       int
	cols, rows int
	cells      [][]int32
	rects      []image.Rectangle
	seen       []uint32 // per rect: epoch of the last query that visited it
	epoch      uint32
}

// maxGridCells bounds the index's memory whatever the bounds.
const maxGridCells = 1 << 14

func newGrid(bounds image.Rectangle, capHint int) *grid {
	cell := 32
	if a := float64(bounds.Dx()) * float64(bounds.Dy()); a/float64(cell*cell) > maxGridCells {
		cell = int(math.Ceil(math.Sqrt(a / maxGridCells)))
	}
	cols := max(1, (bounds.Dx()+cell-1)/cell)
	rows := max(1, (bounds.Dy()+cell-1)/cell)
	for cols*rows > maxGridCells { // very long, thin bounds
		cell *= 2
		cols = max(1, (bounds.Dx()+cell-1)/cell)
		rows = max(1, (bounds.Dy()+cell-1)/cell)
	}
	return &grid{
		min:   bounds.Min,
		cell:  cell,
		cols:  cols,
		rows:  rows,
		cells: make([][]int32, cols*rows),
		rects: make([]image.Rectangle, 0, capHint),
		seen:  make([]uint32, 0, capHint),
	}
}

// span returns the (clamped) cell range covering r.
func (g *grid) span(r image.Rectangle) (cx0, cy0, cx1, cy1 int) {
	c := func(v, n int) int { return min(max(v, 0), n-1) }
	cx0 = c(floorDiv(r.Min.X-g.min.X, g.cell), g.cols)
	cy0 = c(floorDiv(r.Min.Y-g.min.Y, g.cell), g.rows)
	cx1 = c(floorDiv(r.Max.X-1-g.min.X, g.cell), g.cols)
	cy1 = c(floorDiv(r.Max.Y-1-g.min.Y, g.cell), g.rows)
	return
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// add indexes r and returns its index.
func (g *grid) add(r image.Rectangle) int {
	i := len(g.rects)
	g.rects = append(g.rects, r)
	g.seen = append(g.seen, 0)
	if r.Empty() {
		return i
	}
	cx0, cy0, cx1, cy1 := g.span(r)
	for cy := cy0; cy <= cy1; cy++ {
		for cx := cx0; cx <= cx1; cx++ {
			k := cy*g.cols + cx
			g.cells[k] = append(g.cells[k], int32(i))
		}
	}
	return i
}

// query calls fn for every indexed rectangle that overlaps r, once each,
// until fn returns false.
func (g *grid) query(r image.Rectangle, fn func(i int) bool) {
	if r.Empty() || len(g.rects) == 0 {
		return
	}
	g.epoch++
	if g.epoch == 0 {
		clear(g.seen)
		g.epoch = 1
	}
	cx0, cy0, cx1, cy1 := g.span(r)
	for cy := cy0; cy <= cy1; cy++ {
		for cx := cx0; cx <= cx1; cx++ {
			for _, i := range g.cells[cy*g.cols+cx] {
				if g.seen[i] == g.epoch {
					continue
				}
				g.seen[i] = g.epoch
				if !g.rects[i].Overlaps(r) {
					continue
				}
				if !fn(int(i)) {
					return
				}
			}
		}
	}
}

// any reports whether some indexed rectangle overlaps r.
func (g *grid) any(r image.Rectangle) bool {
	if r.Empty() || len(g.rects) == 0 {
		return false
	}
	cx0, cy0, cx1, cy1 := g.span(r)
	for cy := cy0; cy <= cy1; cy++ {
		for cx := cx0; cx <= cx1; cx++ {
			for _, i := range g.cells[cy*g.cols+cx] {
				if g.rects[i].Overlaps(r) {
					return true
				}
			}
		}
	}
	return false
}
