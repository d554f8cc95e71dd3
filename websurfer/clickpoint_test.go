package websurfer

import (
	"fmt"
	"testing"

	"github.com/surfkit/surf/sandbox"
)

// TestClickClipPath clicks buttons whose centre a clip-path cuts away: the
// click lands on a part of each that is shown, and the page gets it.
func TestClickClipPath(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/perception/clip-path.html")
	for _, c := range []struct{ name, log string }{
		{"Right part offer", "cut clicked"},
		{"Left part offer", "notch clicked"},
		{"Round offer", "round clicked"},
	} {
		f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", c.name)))
		if got := f.js(`document.getElementById('log').textContent`); got != c.log {
			t.Errorf("clicking %q: the page logged %v; want %q", c.name, got, c.log)
		}
	}
}

// TestClickClipPathUnread clicks a button cut by a clip-path shape surf
// does not read (a path()): the observation's click point is cut away, and
// the browser's hit test finds a point that is shown.
func TestClickClipPathUnread(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/clip-path-path.html")
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Path offer")))
	if got := f.js(`document.getElementById('log').textContent`); got != "path clicked" {
		t.Errorf("the page logged %v", got)
	}
}

// TestClickPartlyCovered clicks a button whose middle a badge covers, then
// the same button after something the observation has not seen covers the
// point surf chose: the click goes to a part that is still free.
func TestClickPartlyCovered(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/perception/partly-covered.html")
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Buy the kettle")))
	if got := f.js(`document.getElementById('log').textContent`); got != "buy clicked" {
		t.Fatalf("the page logged %v", got)
	}

	f.ok("refresh_page", `{}`)
	buy := f.id("button", "Buy the kettle")
	r := f.s.last.refs[buy]
	// Cover the point the observation chose, and the end of the button
	// around it, after the observation.
	f.js(fmt.Sprintf(`(() => { const d = document.createElement('div');
		d.style.cssText = 'position:fixed;left:0;top:0;height:100vh;z-index:9;background:#fff;width:' + %d + 'px';
		document.body.append(d); })()`, int(r.clickX)+20))
	if got := f.js(`document.getElementById('log').textContent`); got != "none" {
		t.Fatalf("the page logged %v before the click", got)
	}
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, buy))
	if got := f.js(`document.getElementById('log').textContent`); got != "buy clicked" {
		t.Errorf("after a new cover: the page logged %v", got)
	}
}

func TestGridPoints(t *testing.T) {
	b := rect{X: 10.5, Y: 20, W: 100, H: 40}
	pts := gridPoints(b, 5)
	if len(pts) != 25 {
		t.Fatalf("%d points; want 25: %v", len(pts), pts)
	}
	if pts[0] != [2]float64{61, 40} {
		t.Errorf("the first point is %v; want the centre (61, 40)", pts[0])
	}
	for _, p := range pts {
		if !b.Contains(p[0], p[1]) || p[0] != float64(int(p[0])) || p[1] != float64(int(p[1])) {
			t.Errorf("point %v is off the box %v or not on a whole pixel", p, b)
		}
	}
	if got := gridPoints(rect{X: 0, Y: 0, W: 1, H: 30}, 5); len(got) != 0 {
		t.Errorf("a 1px wide box gave points %v", got)
	}
	if got := gridPoints(rect{X: 3.2, Y: 0, W: 2, H: 2}, 5); len(got) == 0 {
		t.Error("a 2px box gave no point")
	}
}
