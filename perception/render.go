package perception

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/surfkit/surf/internal/textcut"
	"math"
	"sort"
	"strings"

	"github.com/surfkit/surf/internal/tokens"
	"github.com/surfkit/surf/som"
)

// textBuilder renders an observation within a token budget, line by line,
// never cutting a line.
type textBuilder struct {
	b      strings.Builder
	used   int
	budget int
}

func (t *textBuilder) fits(s string) bool { return t.used+tokens.Count(s)+1 <= t.budget }

// add appends a line if it fits, and reports whether it did.
func (t *textBuilder) add(s string) bool {
	n := tokens.Count(s) + 1
	if t.used+n > t.budget {
		return false
	}
	t.b.WriteString(s)
	t.b.WriteByte('\n')
	t.used += n
	return true
}

// must appends a line whatever the budget (headers).
func (t *textBuilder) must(s string) {
	t.b.WriteString(s)
	t.b.WriteByte('\n')
	t.used += tokens.Count(s) + 1
}

// position describes the viewport's place on the page.
func position(scrollY, vh, ph float64) (shown float64, pos string, above, below bool) {
	if ph <= 0 || vh >= ph-1 {
		return 1, "whole page", false, false
	}
	shown = math.Min(1, vh/ph)
	above = scrollY > 1
	below = scrollY+vh < ph-1
	switch {
	case !above:
		pos = "top"
	case !below:
		pos = "bottom"
	default:
		pos = fmt.Sprintf("%d%% down", int(math.Round(100*scrollY/ph)))
	}
	return shown, pos, above, below
}

// TextBoxes lists the line boxes of the text on screen, for the
// set-of-mark tags to avoid covering.
func TextBoxes(snaps []*Frame, viewport Rect, limit int) []som.Rect {
	var out []som.Rect
	for _, fs := range snaps {
		for _, d := range fs.Snap.docs {
			for _, n := range d.nodes {
				if n.nodeType != 3 || len(n.frags) == 0 {
					continue
				}
				clip := n.clipFor().Intersect(viewport)
				for _, f := range n.frags {
					if v := f.Intersect(clip); !v.Empty() {
						out = append(out, som.Rect{X: v.X, Y: v.Y, W: v.W, H: v.H})
						if len(out) >= limit {
							return out
						}
					}
				}
			}
		}
	}
	return out
}

// OnScreen lists the candidates on screen, in numbering order.
func OnScreen(cands []*Candidate) []*Candidate {
	var out []*Candidate
	for _, c := range cands {
		if c.Where == InViewport || c.Where == Covered {
			out = append(out, c)
		}
	}
	return out
}

// Marks numbers on-screen candidates 1..N for the set-of-mark image.
func Marks(cs []*Candidate) []som.Mark {
	marks := make([]som.Mark, len(cs))
	for i, c := range cs {
		marks[i] = som.Mark{ID: i + 1, Box: som.Rect{X: c.Vis.X, Y: c.Vis.Y, W: c.Vis.W, H: c.Vis.H}, Covered: c.Where == Covered}
	}
	return marks
}

// axTargets picks the candidates whose accessibility data is needed: all on
// screen, those hidden in on-screen containers, and the nearest ones above
// and below.
func axTargets(cands []*Candidate) []*Candidate {
	var out []*Candidate
	counts := map[Location]int{}
	for _, c := range cands {
		switch c.Where {
		case InViewport, Covered:
		case Clipped:
			if c.dist > 0 {
				continue
			}
			if counts[Clipped] >= maxOffscreen {
				continue
			}
		default:
			if counts[c.Where] >= maxOffscreen {
				continue
			}
		}
		counts[c.Where]++
		out = append(out, c)
	}
	return out
}

// Numbering is a page's elements with their ids: the ones on screen
// numbered 1..N in reading order, with their frame labels and what covers
// them, and the off-screen ones grouped by side for Render, which numbers
// those it has room to list.
type Numbering struct {
	page     *Page
	seq      int
	listed   map[*Node]*Element
	byID     map[int]*Candidate
	next     int
	unlisted map[Location]int
	focused  int

	onScreen, above, below, clipped, left, right []*Candidate

	frameLabels map[string]string
	frameLines  []string
}

// Number numbers the on-screen elements of p for observation seq, once
// their accessibility data is set (see Candidate.SetAX): elements the
// accessibility tree hides are dropped, and those a modal dialog makes inert
// count as covered by it. Off-screen elements without accessibility data
// are only counted.
func Number(p *Page, seq int) *Numbering {
	coverInert(p.Candidates)
	nb := &Numbering{page: p, seq: seq, listed: map[*Node]*Element{}, byID: map[int]*Candidate{}, next: 1,
		unlisted: map[Location]int{}, frameLabels: map[string]string{}}
	for _, c := range p.Candidates {
		if c.ax == nil {
			if c.Where == InViewport || c.Where == Covered {
				// No AX node: the element vanished, or the request failed.
				// Keep it with what the DOM says.
				c.ax = &axInfo{}
			} else {
				nb.unlisted[c.Where]++
				continue
			}
		}
		if c.ax.hidden {
			continue
		}
		switch c.Where {
		case InViewport, Covered:
			nb.onScreen = append(nb.onScreen, c)
		case Above:
			nb.above = append(nb.above, c)
		case Below:
			nb.below = append(nb.below, c)
		case Clipped:
			nb.clipped = append(nb.clipped, c)
		case Left:
			nb.left = append(nb.left, c)
		case Right:
			nb.right = append(nb.right, c)
		default:
			nb.unlisted[c.Where]++
		}
	}
	for _, c := range nb.onScreen {
		nb.assign(c)
	}
	for _, c := range nb.onScreen {
		nb.label(nb.listed[c.Node])
	}
	for _, c := range nb.onScreen {
		e := nb.listed[c.Node]
		if c.Where == Covered && c.cover != nil {
			owner := CoverOwner(c.cover, nb.listed)
			e.CoveredBy = DescribeCover(owner, nb.listed)
			e.CoverID = CoverID(owner, nb.listed)
		}
	}
	for _, c := range nb.onScreen {
		if c.ax != nil && c.ax.focused {
			nb.focused = nb.listed[c.Node].ID
			break
		}
	}
	return nb
}

// assign gives c the next id.
func (nb *Numbering) assign(c *Candidate) *Element {
	e := makeElement(c)
	e.ID = nb.next
	e.Obs = nb.seq
	nb.next++
	nb.listed[c.Node] = e
	nb.byID[e.ID] = c
	return e
}

// label gives an element's frame its short label ("F1"), named once.
func (nb *Numbering) label(e *Element) {
	if e.Frame == "" {
		return
	}
	l, ok := nb.frameLabels[e.Frame]
	if !ok {
		l = fmt.Sprintf("F%d", len(nb.frameLabels)+1)
		nb.frameLabels[e.Frame] = l
		nb.frameLines = append(nb.frameLines, l+" "+Quote(e.Frame, 150))
	}
	e.FrameLabel = l
}

// RenderInput is what an observation's text says besides the page: the
// browser's state, what happened since the last observation, and how to
// render.
type RenderInput struct {
	Tabs    []TabInfo `json:"tabs,omitempty"`
	Events  []Event   `json:"events,omitempty"`
	Blocked Blocked   `json:"blocked"`
	// Shot says the observation has a screenshot to point to; Marks that
	// it is a set-of-mark image.
	Shot  bool `json:"shot,omitempty"`
	Marks bool `json:"marks,omitempty"`
	// TokenBudget bounds the text (o200k tokens); zero means
	// DefaultTokenBudget.
	TokenBudget int `json:"token_budget,omitempty"`
	// LastMeta is the fingerprint of the page metadata the tab's last
	// observation showed: the same metadata is not shown again.
	LastMeta string `json:"last_meta,omitempty"`
	// Nonce delimits the page's text; empty means a fresh random one.
	Nonce string `json:"-"`
	// Redact hides secrets in page strings; nil changes nothing.
	Redact func(string) string `json:"-"`
}

// Rendered is an observation's text and the elements it lists.
type Rendered struct {
	Text        string
	VisibleText string
	// Elements are the numbered elements, on-screen ones first, then the
	// others by id.
	Elements []Element
	// Candidates maps each id to the candidate it numbers.
	Candidates map[int]*Candidate
	// Marked is how many on-screen elements the text lists (ids 1 to
	// Marked).
	Marked   int
	Unlisted map[Location]int
	Focused  int
	Notes    []string
	// Metadata is the page's metadata when it differs from LastMeta.
	Metadata *Metadata
	Tokens   int
}

// Render writes the observation's text within the token budget: headers,
// the on-screen elements, summaries of the off-screen ones (numbering
// those that fit, after the on-screen ones), the metadata and the visible
// text. It is called once per Numbering.
func Render(nb *Numbering, in RenderInput) *Rendered {
	p := nb.page
	redact := in.Redact
	if redact == nil {
		redact = func(s string) string { return s }
	}
	budget := in.TokenBudget
	if budget <= 0 {
		budget = DefaultTokenBudget
	}
	out := &Rendered{Unlisted: nb.unlisted, Focused: nb.focused, Candidates: nb.byID}
	listed, onScreen := nb.listed, nb.onScreen
	vp := p.Viewport

	tb := &textBuilder{budget: budget}
	tb.must(fmt.Sprintf("observation %d: url %s title %s", nb.seq, Quote(p.URL, 200), Quote(p.Title, 120)))
	vpLine := fmt.Sprintf("viewport %dx%d at the %s of the page", vp.Width, vp.Height, vp.Position)
	if vp.Position == "whole page" {
		vpLine = fmt.Sprintf("viewport %dx%d shows the whole page", vp.Width, vp.Height)
	} else {
		if strings.HasSuffix(vp.Position, "down") {
			vpLine = fmt.Sprintf("viewport %dx%d is %s the page", vp.Width, vp.Height, vp.Position)
		}
		vpLine += fmt.Sprintf(", showing %d%% of it", int(vp.Shown*100+0.5))
		switch {
		case vp.MoreAbove && vp.MoreBelow:
			vpLine += "; more above and below"
		case vp.MoreBelow:
			vpLine += "; more below"
		case vp.MoreAbove:
			vpLine += "; more above"
		}
	}
	tb.must(withSideways(vpLine, vp))
	if len(in.Tabs) > 1 {
		parts := make([]string, len(in.Tabs))
		for i, ti := range in.Tabs {
			parts[i] = fmt.Sprintf("%d %s", ti.Index, Quote(ti.Title, 40))
			if ti.Active {
				parts[i] += " (active)"
			}
		}
		tb.must("tabs: " + strings.Join(parts, "; "))
	}
	for i, ev := range in.Events {
		if i == 8 {
			tb.must(fmt.Sprintf("event: … and %d more", len(in.Events)-8))
			break
		}
		tb.must("event: " + ev.Kind + ": " + ev.Message)
	}
	for _, l := range in.Blocked.Lines() {
		tb.must(l)
	}
	out.Notes = append(p.Notes, canvasNotes(p.Frames, p.View, in.Shot)...)
	for _, n := range out.Notes {
		tb.must("note: " + n)
	}
	if nb.focused != 0 {
		tb.must(fmt.Sprintf("focused: %d", nb.focused))
	}

	if len(nb.frameLines) > 0 {
		tb.must("frames: " + strings.Join(nb.frameLines, "; "))
	}
	// On-screen elements get most of what is left.
	tb.must("elements on screen (id role \"name\" state):")
	elemBudget := tb.used + (tb.budget-tb.used)*65/100
	shown := 0
	for _, c := range onScreen {
		e := listed[c.Node]
		l := e.Line()
		if tb.used+tokens.Count(l) > elemBudget || !tb.add(l) {
			break
		}
		shown++
	}
	out.Marked = shown
	if shown < len(onScreen) {
		rest := onScreen[shown:]
		tb.must(moreOnScreen(len(rest), listed[rest[0].Node].ID, listed[rest[len(rest)-1].Node].ID, in.Marks, vp.MoreBelow))
		out.Unlisted[InViewport] += len(rest)
	}

	// Off-screen summaries: the nearest first, then counts.
	sumBudget := tb.used + min((tb.budget-tb.used)*35/100, 400)
	summary := func(what string, list []*Candidate, loc Location) {
		if len(list) == 0 {
			return
		}
		head := fmt.Sprintf("%s (%d): ", what, len(list))
		var parts []string
		for _, c := range list {
			e := makeElement(c)
			e.ID = nb.next
			p := e.short()
			if c.Where == Clipped && c.container != nil {
				if ce, ok := listed[c.container]; ok {
					p += fmt.Sprintf(" (inside %d%s)", ce.ID, sideWords(clippedSide(c)))
				}
			}
			nb.label(e)
			if e.FrameLabel != "" {
				p += " [" + e.FrameLabel + "]"
			}
			trial := head + strings.Join(append(parts, p), "; ")
			if tb.used+tokens.Count(trial)+8 > sumBudget {
				break
			}
			nb.assign(c).FrameLabel = e.FrameLabel
			parts = append(parts, p)
		}
		lineStr := head + strings.Join(parts, "; ")
		if more := len(list) - len(parts); more > 0 {
			lineStr += fmt.Sprintf("; +%d more", more)
			out.Unlisted[loc] += more
		}
		tb.must(lineStr)
	}
	summary("above the viewport", nb.above, Above)
	summary("below the viewport", nb.below, Below)
	summary("scrolled out of view inside containers", nb.clipped, Clipped)
	summary("left of the viewport", nb.left, Left)
	summary("right of the viewport", nb.right, Right)
	for _, c := range append(append([]*Candidate{}, onScreen...), nb.clipped...) {
		if e, ok := listed[c.Node]; ok && c.Where == Clipped && c.container != nil {
			if ce, ok := listed[c.container]; ok {
				e.Container = ce.ID
			}
		}
	}

	// Metadata, when it changed.
	if md := extractMetadata(p.Frames[0].Snap); md != nil {
		if md.Fingerprint() != in.LastMeta {
			out.Metadata = md
			if l := md.line(); l != "" {
				tb.add(l)
			}
		}
	}

	// The visible text gets the rest.
	visible := visibleText(p.Frames, p.View, 32<<10)
	nonce := in.Nonce
	if nonce == "" {
		nonce = NewNonce()
	}
	open, closeLine := "visible text <<<"+nonce, nonce+">>>"
	text := strings.ReplaceAll(visible, nonce, "")
	if strings.TrimSpace(text) != "" && tb.fits(open) {
		tb.must(open)
		reserve := tokens.Count(closeLine) + 16
		if in.Marks && shown >= CrowdedMarks {
			reserve += DroppedNoteTokens // room for the note on tags left out of the image
		}
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			if tb.used+tokens.Count(l)+1+reserve > tb.budget {
				tb.must(fmt.Sprintf("[… %d more lines of visible text; read_page gives the whole page]", len(lines)-i))
				break
			}
			tb.add(l)
		}
		tb.must(closeLine)
	}
	out.Text = redact(tb.b.String())
	out.VisibleText = redact(visible)
	out.Tokens = tokens.Count(out.Text)
	for _, c := range onScreen {
		out.Elements = append(out.Elements, *listed[c.Node])
	}
	var off []*Element
	for _, e := range listed {
		if e.Where != InViewport && e.Where != Covered {
			off = append(off, e)
		}
	}
	sort.Slice(off, func(i, j int) bool { return off[i].ID < off[j].ID })
	for _, e := range off {
		out.Elements = append(out.Elements, *e)
	}
	// Secret values (typed into a field) never show.
	for i := range out.Elements {
		out.Elements[i].Value = redact(out.Elements[i].Value)
		out.Elements[i].Name = redact(out.Elements[i].Name)
	}
	return out
}

// visibleText is the text on screen, in document order, a line per
// rendered line, up to max bytes.
func visibleText(snaps []*Frame, viewport Rect, max int) string {
	var b strings.Builder
	for _, fs := range snaps {
		if b.Len() >= max {
			break
		}
		for _, d := range fs.Snap.docs {
			lastBottom := -1e9
			for _, n := range d.nodes {
				if b.Len() >= max {
					break
				}
				if n.nodeType != 3 || !n.hasLayout || n.box.Empty() {
					continue
				}
				t := strings.Join(strings.Fields(n.text), " ")
				if t == "" {
					continue
				}
				if n.box.Intersect(n.clipFor()).Intersect(viewport).Empty() {
					continue
				}
				if n.parent != nil && (n.parent.name == "SCRIPT" || n.parent.name == "STYLE" || n.parent.name == "NOSCRIPT") {
					continue
				}
				if b.Len() > 0 {
					if n.box.Y >= lastBottom-2 {
						b.WriteByte('\n')
					} else {
						b.WriteByte(' ')
					}
				}
				b.WriteString(t)
				lastBottom = max64(lastBottom, n.box.Bottom())
				if n.box.Y >= lastBottom-2 {
					lastBottom = n.box.Bottom()
				}
			}
		}
	}
	return textcut.Bytes(b.String(), max)
}

func max64(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

// canvasNotes says plainly what surf cannot read: canvas pixels and
// plugin content on screen; shot says whether the observation has a
// screenshot to point to.
func canvasNotes(snaps []*Frame, viewport Rect, shot bool) []string {
	see := "; see the screenshot"
	if !shot {
		see = ""
	}
	var out []string
	for _, fs := range snaps {
		for _, d := range fs.Snap.docs {
			for _, n := range d.nodes {
				if n.name != "CANVAS" && n.name != "EMBED" && n.name != "OBJECT" {
					continue
				}
				if !n.hasLayout || n.box.W < 16 || n.box.H < 16 || n.box.Intersect(n.clipFor()).Intersect(viewport).Empty() {
					continue
				}
				what := "canvas"
				if n.name != "CANVAS" {
					what = "embedded object"
				}
				label := n.attrOr("aria-label")
				if label == "" {
					label = n.attrOr("title")
				}
				name := ""
				if label != "" {
					name = " " + Quote(label, 40)
				}
				out = append(out, fmt.Sprintf("%s%s at (%d,%d) %dx%d: its content is pixels only, surf cannot read it%s",
					what, name, int(n.box.X), int(n.box.Y), int(n.box.W), int(n.box.H), see))
				if len(out) >= 5 {
					return out
				}
			}
		}
	}
	return out
}

// NewNonce makes the per-observation delimiter of the page text, so page
// text cannot close the block and pose as surf's own words.
func NewNonce() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
