package perception

import (
	"strings"
)

// A native modal <dialog> (showModal()) makes the rest of its page inert:
// the page still paints behind the dialog's ::backdrop, which takes every
// click, but DOMSnapshot has neither the backdrop nor inertness. Chromium's
// accessibility tree does: it ignores each inert node with the reason
// "activeModalDialog". surf lists such elements as covered by the dialog,
// so an observation never offers a control a click cannot reach.

// coverInert marks the on-screen candidates the accessibility tree calls
// inert behind a modal dialog as covered by that dialog (the topmost open
// <dialog> of their page).
//
// The controls of a frame whose iframe is behind the dialog are left out,
// as Chromium's accessibility tree leaves out those of a frame in another
// process (an inert subtree). For a frame the browser runs in its page's
// process it does not do so the same way each time (in the headless
// shell, run to run: ignored as an inert subtree, or not ignored at all,
// which listed them as on screen and free to click): such a frame's
// candidates are left out when the accessibility tree calls a candidate
// of the iframe's document inert behind a modal dialog and the dialog
// does not hold the iframe.
func coverInert(cands []*Candidate) {
	modal := map[*snapDoc]bool{} // documents with an active modal dialog
	for _, c := range cands {
		if c.ax != nil && c.ax.inertModal {
			modal[c.Node.doc] = true
		}
	}
	for _, c := range cands {
		if c.Where != InViewport && c.Where != Covered {
			continue
		}
		switch {
		case c.ax != nil && c.ax.inertModal:
			c.Where = Covered
			c.cover, c.coverSrc = modalDialogOver(c.Frame, c.Node)
		case frameBehindModal(c, modal):
			if c.ax == nil {
				c.ax = &axInfo{}
			}
			c.ax.hidden = true
		}
	}
}

// frameBehindModal reports whether c is in a same-process frame whose
// iframe (or one around it) is behind the modal dialog of its document.
func frameBehindModal(c *Candidate, modal map[*snapDoc]bool) bool {
	for doc, depth := c.Node.doc, 0; doc.owner != nil && depth < 16; doc, depth = doc.owner.doc, depth+1 {
		owner := doc.owner
		if !modal[owner.doc] {
			continue
		}
		if d, _ := modalDialogOver(c.Frame, owner); d != nil && !owner.isDescendantOf(d) {
			return true
		}
	}
	return false
}

// modalDialogOver finds the open <dialog> that makes n inert: the topmost
// open dialog in n's document, or in the documents around it, up to the
// page.
func modalDialogOver(fs *Frame, n *Node) (*Node, *Frame) {
	for fs != nil {
		var best *Node
		for _, d := range fs.Snap.docs {
			for _, x := range d.nodes {
				if x.name != "DIALOG" || !x.hasLayout || x.box.Empty() || n.isDescendantOf(x) {
					continue
				}
				if _, open := x.attr("open"); !open {
					continue
				}
				if best == nil || x.paint > best.paint || (x.paint == best.paint && x.doc.index >= best.doc.index) {
					best = x
				}
			}
		}
		if best != nil {
			return best, fs
		}
		n, fs = fs.Owner, fs.Parent
	}
	return nil, nil
}

// domLabel is an element's label as the DOM gives it, for an element the
// accessibility tree names nothing (an inert one): aria-labelledby,
// aria-label, then, for a form control, its <label>.
func domLabel(n *Node) string {
	if ids := strings.Fields(n.attrOr("aria-labelledby")); len(ids) > 0 {
		var parts []string
		for _, id := range ids {
			if el := n.doc.byID(id); el != nil {
				if t := el.textContent(80); t != "" {
					parts = append(parts, t)
				}
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " ")
		}
	}
	if v := strings.TrimSpace(n.attrOr("aria-label")); v != "" {
		return v
	}
	switch n.name {
	case "INPUT", "SELECT", "TEXTAREA", "BUTTON", "METER", "PROGRESS", "OUTPUT":
	default:
		return ""
	}
	if id := n.attrOr("id"); id != "" {
		for _, x := range n.doc.nodes {
			if x.name == "LABEL" && x.attrOr("for") == id {
				if t := x.textContent(80); t != "" {
					return t
				}
			}
		}
	}
	for a, d := n.parent, 0; a != nil && d < 16; a, d = a.parent, d+1 {
		if a.name == "LABEL" {
			return a.textContent(80)
		}
	}
	return ""
}

// byID finds the element of a document with an id.
func (d *snapDoc) byID(id string) *Node {
	for _, x := range d.nodes {
		if x.isElement() && x.attrOr("id") == id {
			return x
		}
	}
	return nil
}
