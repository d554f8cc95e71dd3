package websurfer

import (
	"context"
	"strings"
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
// mouse wheel over it (dir -1 left, 1 right).
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

// clippedSide is where a Clipped candidate lies relative to the view of
// what hides it (its scroll container, or else its clip): the way that
// container has to scroll to show it.
func clippedSide(c *candidate) Location {
	if c.where != Clipped {
		return ""
	}
	view := c.n.clipFor()
	if c.container != nil {
		view = c.container.contentBox()
	}
	if view.empty() {
		return ""
	}
	return side(c.n.box, view)
}

// sideWords says where a Clipped element is in its container, for the
// observation's text: ", to the right".
func sideWords(loc Location) string {
	switch loc {
	case Above:
		return ", above"
	case Below:
		return ", below"
	case Left:
		return ", to the left"
	case Right:
		return ", to the right"
	}
	return ""
}

// withSideways adds to the viewport line of the observation how the page
// scrolls sideways, if it is wider than the viewport.
func withSideways(line string, v Viewport) string {
	var more string
	switch {
	case v.MoreLeft && v.MoreRight:
		more = "more to the left and right"
	case v.MoreLeft:
		more = "more to the left"
	case v.MoreRight:
		more = "more to the right"
	default:
		return line
	}
	line = strings.Replace(line, "shows the whole page", "shows the page's whole height", 1)
	return line + "; the page is wider than the viewport: " + more
}

// horizontalExtent sets the viewport's MoreLeft and MoreRight.
func (v *Viewport) horizontalExtent() {
	v.MoreLeft = v.ScrollX > 1
	v.MoreRight = v.PageWidth > 0 && v.ScrollX+float64(v.Width) < v.PageWidth-1
}

// scrollsSideways reports whether an element's content scrolls sideways.
func (e *Element) scrollsSideways() bool {
	return e.Scrollable == "horizontal" || e.Scrollable == "both"
}
