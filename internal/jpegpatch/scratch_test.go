package jpegpatch

import (
	"bytes"
	"image"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/surfkit/surf/som"
)

func TestScratchBreakdown(t *testing.T) {
	for _, f := range screenshots {
		src := load(t, f)
		rng := rand.New(rand.NewPCG(5, 6))
		var marks []som.Mark
		for i := 0; i < 30; i++ {
			marks = append(marks, som.Mark{ID: i + 1, Box: som.Rect{X: rng.Float64() * 1200, Y: rng.Float64() * 680, W: 20 + rng.Float64()*100, H: 12 + rng.Float64()*20}})
		}
		var td, tl, tp, tr, tu, te time.Duration
		n := 400
		for i := 0; i < n; i++ {
			t0 := time.Now()
			m, err := Decode(src)
			if err != nil {
				t.Fatal(err)
			}
			t1 := time.Now()
			labels := som.Layout(m.Bounds(), marks, som.Options{})
			fp := som.Footprint(m.Bounds(), labels, som.Options{})
			t2 := time.Now()
			px := m.Pixels(fp)
			t3 := time.Now()
			drawn := som.Render(px, labels, som.Options{}).(*image.YCbCr)
			t4 := time.Now()
			m.Update(drawn, fp)
			t5 := time.Now()
			var out bytes.Buffer
			m.Encode(&out)
			t6 := time.Now()
			td += t1.Sub(t0); tl += t2.Sub(t1); tp += t3.Sub(t2); tr += t4.Sub(t3); tu += t5.Sub(t4); te += t6.Sub(t5)
		}
		d := time.Duration(n)
		t.Logf("%s: %d bytes decode %v layout %v pixels %v render %v update %v encode %v", f, len(src), td/d, tl/d, tp/d, tr/d, tu/d, te/d)
	}
}

func TestScratchCopyPath(t *testing.T) {
	for _, f := range screenshots {
		m, err := Decode(load(t, f))
		if err != nil {
			t.Fatal(err)
		}
		_, ok := m.encodeCopying()
		t.Logf("%s ri=%d ecs=%d ok=%v td/ta=%v/%v tables=%v", f, m.ri, len(m.ecs), ok, m.comps[0].td, m.comps[0].ta, m.tables[0][0].count)
	}
}

func TestScratchTables(t *testing.T) {
	for _, f := range screenshots {
		m, _ := Decode(load(t, f))
		for cl := 0; cl < 2; cl++ {
			for id := 0; id < 2; id++ {
				sp := m.tables[cl][id]
				t.Logf("%s class %d id %d counts %v n=%d", f, cl, id, sp.count, len(sp.value))
			}
		}
	}
}

func TestScratchExtend(t *testing.T) {
	for _, f := range screenshots {
		src := load(t, f)
		rng := rand.New(rand.NewPCG(5, 6))
		var marks []som.Mark
		for i := 0; i < 30; i++ {
			marks = append(marks, som.Mark{ID: i + 1, Box: som.Rect{X: rng.Float64() * 1200, Y: rng.Float64() * 680, W: 20 + rng.Float64()*100, H: 12 + rng.Float64()*20}})
		}
		m, _ := Decode(src)
		labels := som.Layout(m.Bounds(), marks, som.Options{})
		fp := som.Footprint(m.Bounds(), labels, som.Options{})
		drawn := som.Render(m.Pixels(fp), labels, som.Options{}).(*image.YCbCr)
		m.Update(drawn, fp)
		tables := m.tables
		var luts [2][4]huffLUT
		for cl := 0; cl < 2; cl++ {
			for id := 0; id < 2; id++ {
				t.Logf("lut %d %d ok=%v", cl, id, lutFor(&luts[cl][id], tables[cl][id]))
			}
		}
		_, miss := m.copyScan(&luts)
		for cl := 0; cl < 2; cl++ {
			for id := 0; id < 2; id++ {
				if set := miss[&luts[cl][id]]; set != nil {
					n := 0
					for _, b := range set {
						if b {
							n++
						}
					}
					ext, ok := extendTable(tables[cl][id], set)
					t.Logf("%s miss %d %d: %d ext ok=%v %v", f, cl, id, n, ok, ext.count)
				}
			}
		}
		_, ok := m.encodeCopying()
		t.Logf("copy ok %v", ok)
	}
}
