package perception

import "github.com/chromedp/cdproto/cdp"

// SecretBoxes returns the viewport boxes of frames that show a secret,
// grown by margin: fields whose value contains one (contains) or that surf
// typed one into (typed, asked with the frame's Handle and the field's
// backend id), and text that contains one.
func SecretBoxes(frames []*Frame, viewport Rect, margin float64, typed func(handle any, id cdp.BackendNodeID) bool, contains func(string) bool) []Rect {
	var out []Rect
	add := func(r Rect) {
		r = Rect{r.X - margin, r.Y - margin, r.W + 2*margin, r.H + 2*margin}
		if r.Intersect(viewport).Empty() {
			return
		}
		out = append(out, r)
	}
	for _, fs := range frames {
		for _, d := range fs.Snap.docs {
			for _, n := range d.nodes {
				if !n.hasLayout {
					continue
				}
				switch {
				case n.inputVal != "" && (typed(fs.Handle, n.backend) || contains(n.inputVal)):
					add(n.box)
				case n.inputVal == "" && n.nodeType == 1 && !isFormField(n) && typed(fs.Handle, n.backend):
					add(n.box) // a contenteditable surf typed a secret into
				case n.text != "" && contains(n.text):
					if len(n.frags) == 0 {
						add(n.box)
					}
					for _, f := range n.frags {
						add(f)
					}
				}
			}
		}
	}
	return out
}

// isFormField reports whether n is an element whose value snapshots
// report (an empty one means the field is empty).
func isFormField(n *Node) bool {
	switch n.name {
	case "INPUT", "TEXTAREA", "SELECT":
		return true
	}
	return false
}
