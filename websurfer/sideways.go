package websurfer

import (
	"context"
)

// Sideways scrolling: pages wider than the window, and boxes that scroll
// sideways (carousels, wide tables, tab strips).

// PageLeft scrolls the page left by one viewport width, less a small
// overlap.
func (s *Surfer) PageLeft(ctx context.Context) (*ActionResult, error) {
	return s.scrollPage(ctx, -1, 0)
}

// PageRight scrolls the page right by one viewport width, less a small
// overlap.
func (s *Surfer) PageRight(ctx context.Context) (*ActionResult, error) {
	return s.scrollPage(ctx, 1, 0)
}

// ScrollElementSideways scrolls an element's content sideways with the
// mouse wheel over it (dir -1 left, 1 right); with frames on demand
// (sandbox.FrameOnDemand), by script, as the wheel would.
func (s *Surfer) ScrollElementSideways(ctx context.Context, id, dir int) (*ActionResult, error) {
	return s.scrollElement(ctx, id, dir, 0)
}

// scrollWord names a scroll direction: dx -1 left, 1 right; dy -1 up, 1
// down.
func scrollWord(dx, dy int) string {
	switch {
	case dx < 0:
		return "left"
	case dx > 0:
		return "right"
	case dy < 0:
		return "up"
	}
	return "down"
}

// pageScrollTool is the tool that scrolls the page toward an element off
// the viewport on side loc.
func pageScrollTool(loc Location) string {
	switch loc {
	case Above:
		return "page_up"
	case Left:
		return "page_left"
	case Right:
		return "page_right"
	}
	return "page_down"
}

// elementScrollTool is the tool that scrolls a Clipped element's container
// toward it, the element lying on side of the container's view; "" when
// the side is unknown.
func elementScrollTool(side Location) string {
	return map[Location]string{Above: "scroll_element_up", Below: "scroll_element_down", Left: "scroll_element_left", Right: "scroll_element_right"}[side]
}
