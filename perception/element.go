package perception

import (
	"encoding/json"
	"fmt"
	"github.com/surfkit/surf/internal/textcut"
	"net/url"
	"strconv"
	"strings"
)

// Viewport says where the viewport is on the page.
type Viewport struct {
	Width      int     `json:"width"`
	Height     int     `json:"height"`
	ScrollX    float64 `json:"scroll_x"`
	ScrollY    float64 `json:"scroll_y"`
	PageWidth  float64 `json:"page_width"`
	PageHeight float64 `json:"page_height"`
	// Shown is the share of the page's height the viewport shows, 0..1.
	Shown float64 `json:"shown"`
	// Position is "top", "N% down" or "bottom" ("whole page" when it all
	// fits).
	Position  string `json:"position"`
	MoreAbove bool   `json:"more_above"`
	MoreBelow bool   `json:"more_below"`
	// MoreLeft and MoreRight say the page is wider than the viewport and
	// scrolls sideways that way.
	MoreLeft  bool `json:"more_left,omitempty"`
	MoreRight bool `json:"more_right,omitempty"`
}

// Element is an element the model can act on.
type Element struct {
	ID int `json:"id"`
	// Obs is the observation the element was listed in: its id means
	// nothing in any other.
	Obs  int    `json:"obs"`
	Role string `json:"role"`
	Name string `json:"name"`
	// NameFallback is set when the element has no accessible name and
	// surf made one up from its text or attributes.
	NameFallback bool     `json:"name_fallback,omitempty"`
	Value        string   `json:"value,omitempty"`
	Placeholder  string   `json:"placeholder,omitempty"`
	Options      []string `json:"options,omitempty"` // a <select>'s option labels
	Checked      string   `json:"checked,omitempty"` // "true", "false" or "mixed"
	Pressed      string   `json:"pressed,omitempty"`
	Selected     bool     `json:"selected,omitempty"`
	Expanded     string   `json:"expanded,omitempty"`
	Disabled     bool     `json:"disabled,omitempty"`
	Focused      bool     `json:"focused,omitempty"`
	Required     bool     `json:"required,omitempty"`
	Readonly     bool     `json:"readonly,omitempty"`
	// Box is the element's border box in viewport CSS pixels.
	Box   Box      `json:"box"`
	Where Location `json:"where"`
	// CoveredBy describes what covers a Covered element; CoverID is the
	// id of the listed element that is or contains the cover, if any.
	CoveredBy string `json:"covered_by,omitempty"`
	CoverID   int    `json:"cover_id,omitempty"`
	// Container is the id of the scroll container a Clipped element is
	// scrolled out of, if listed.
	Container  int    `json:"container,omitempty"`
	Scrollable string `json:"scrollable,omitempty"`  // "vertical", "horizontal" or "both"
	Frame      string `json:"frame,omitempty"`       // the URL of the frame it is in, if not the page
	FrameLabel string `json:"frame_label,omitempty"` // the frame's short name in the text, "F1"
	Tag        string `json:"tag"`
	InputType  string `json:"input_type,omitempty"`
	// Format is the form a date, time or colour field takes its value in
	// (see inputFormats): "YYYY-MM-DD", "#rrggbb", ...
	Format string `json:"format,omitempty"`
	Href   string `json:"href,omitempty"`

	// ClippedSide is where a Clipped element is in its container (above,
	// below, left or right): the way to scroll the container to show it.
	ClippedSide Location `json:"clipped_side,omitempty"`
	// Multiple is set for a <select multiple>; SelectedOptions are the
	// labels of its options selected now.
	Multiple        bool     `json:"multiple,omitempty"`
	SelectedOptions []string `json:"selected_options,omitempty"`
}

// Box is a rectangle in viewport CSS pixels.
type Box struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

// Metadata is what a page says about itself: description, OpenGraph and a
// summary of its JSON-LD.
type Metadata struct {
	Description string            `json:"description,omitempty"`
	OpenGraph   map[string]string `json:"open_graph,omitempty"`
	JSONLD      []string          `json:"json_ld,omitempty"`
}

// TabInfo is one open tab.
type TabInfo struct {
	Index  int    `json:"index"`
	Title  string `json:"title"`
	URL    string `json:"url"`
	Active bool   `json:"active"`
}

// Event is something that happened since the last observation.
type Event struct {
	Kind    string `json:"kind"` // "dialog", "new_tab", "download", "blocked", "crash", ...
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
	URL     string `json:"url,omitempty"`
}

// Quote quotes a page-controlled string as JSON, truncated to n runes.
func Quote(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = textcut.Runes(s, n)
	return jsonQuote(s)
}

// jsonQuote quotes s as a JSON string, leaving &, < and > as they are:
// the model reads the text, no HTML parser does, and \u0026 in a title or
// URL is noise that costs tokens and hides the character.
func jsonQuote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// Line renders one element as the observation lists it.
func (e *Element) Line() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(e.ID))
	b.WriteByte(' ')
	b.WriteString(e.Role)
	b.WriteByte(' ')
	b.WriteString(Quote(e.Name, 80))
	if e.NameFallback {
		b.WriteString(" (unlabelled)")
	}
	if e.Value != "" && e.Value != e.Name {
		b.WriteString(" value=" + Quote(e.Value, 60))
	}
	if e.Placeholder != "" && e.Placeholder != e.Name {
		b.WriteString(" placeholder=" + Quote(e.Placeholder, 40))
	}
	if e.Format != "" {
		b.WriteString(" format=" + jsonQuote(e.Format))
	}
	if len(e.Options) > 0 {
		b.WriteString(" options=" + quoteOptions(e.Options))
	}
	if e.Multiple {
		b.WriteString(" selected=" + quoteOptions(e.SelectedOptions))
	}
	switch e.Checked {
	case "true":
		b.WriteString(" checked")
	case "mixed":
		b.WriteString(" mixed")
	}
	if e.Pressed == "true" {
		b.WriteString(" pressed")
	}
	if e.Selected {
		b.WriteString(" selected")
	}
	switch e.Expanded {
	case "true":
		b.WriteString(" expanded")
	case "false":
		b.WriteString(" collapsed")
	}
	if e.Disabled {
		b.WriteString(" disabled")
	}
	if e.Readonly {
		b.WriteString(" readonly")
	}
	if e.Required {
		b.WriteString(" required")
	}
	if e.Focused {
		b.WriteString(" focused")
	}
	if e.Scrollable != "" {
		b.WriteString(" scrollable")
		if e.Scrollable != "vertical" {
			b.WriteString("-" + e.Scrollable)
		}
	}
	if e.FrameLabel != "" {
		b.WriteString(" [" + e.FrameLabel + "]")
	}
	switch e.Where {
	case Covered:
		b.WriteString(" COVERED by " + e.CoveredBy)
		if e.CoverID != 0 {
			fmt.Fprintf(&b, " (id %d)", e.CoverID)
		}
	case Clipped:
		if e.Container != 0 {
			fmt.Fprintf(&b, " (scrolled out of view inside %d%s)", e.Container, sideWords(e.ClippedSide))
		} else {
			fmt.Fprintf(&b, " (scrolled out of view inside its container%s)", sideWords(e.ClippedSide))
		}
	}
	return b.String()
}

// quoteOptions renders option labels as a list, the first 12 of them.
func quoteOptions(opts []string) string { return QuoteJoin(opts, 12, 30, ",") }

// QuoteJoin renders page strings as a list: the first n, each quoted and
// cut to width runes, joined by sep, and how many more there are.
func QuoteJoin(list []string, n, width int, sep string) string {
	more := 0
	if len(list) > n {
		more, list = len(list)-n, list[:n]
	}
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = Quote(s, width)
	}
	out := "[" + strings.Join(parts, sep)
	if more > 0 {
		out += fmt.Sprintf("%s+%d more", sep, more)
	}
	return out + "]"
}

// short renders an off-screen element for the above/below summaries.
func (e *Element) short() string {
	return strconv.Itoa(e.ID) + " " + e.Role + " " + Quote(e.Name, 40)
}

// makeElement merges what the snapshot and the accessibility tree say.
func makeElement(c *Candidate) *Element {
	n, a := c.Node, c.ax
	if a == nil {
		a = &axInfo{}
	}
	e := &Element{
		Role:     a.role,
		Name:     a.name,
		Value:    a.value,
		Checked:  a.checked,
		Pressed:  a.pressed,
		Selected: a.selected,
		Expanded: a.expanded,
		Disabled: a.disabled,
		Focused:  a.focused,
		Required: a.required,
		Readonly: a.readonly,
		Box:      Box{n.box.X, n.box.Y, n.box.W, n.box.H},
		Where:    c.Where,
		Tag:      strings.ToLower(n.name),
	}
	e.ClippedSide = clippedSide(c)
	if mapped, ok := chromeRoles[e.Role]; ok {
		e.Role = mapped
	}
	if genericRoles[e.Role] {
		switch {
		case isEditable(n):
			e.Role = "textbox"
		case c.scroll:
			e.Role = "region"
		case c.strong:
			e.Role = tagRole(n)
		default:
			e.Role = "clickable"
		}
	}
	if e.Name == "" {
		if l := domLabel(n); l != "" {
			e.Name = l // an element the accessibility tree ignores (inert) keeps its label
		} else {
			e.Name, e.NameFallback = fallbackName(n)
		}
		if a.inertModal && e.NameFallback && e.Name == n.textContent(80) {
			e.NameFallback = false // named by its content, as it would be were it not inert
		}
	}
	if n.name == "INPUT" {
		e.InputType = strings.ToLower(n.attrOr("type"))
		if e.InputType == "" {
			e.InputType = "text"
		}
		if e.Value == "" && e.InputType != "password" && e.InputType != "checkbox" && e.InputType != "radio" {
			e.Value = n.inputVal
		}
		if f, ok := inputFormats[e.InputType]; ok {
			e.Format = f
			// The field's value as typed into it, not as displayed in
			// the locale's form.
			e.Value = n.inputVal
		}
	}
	if e.InputType == "password" {
		e.Value = "" // never show a password field's content
	}
	if p := n.attrOr("placeholder"); p != "" {
		e.Placeholder = p
	} else if p := n.attrOr("aria-placeholder"); p != "" {
		e.Placeholder = p
	}
	if n.name == "SELECT" {
		var chosen []string
		e.Options, chosen = selectOptions(n)
		if _, multi := n.attr("multiple"); multi {
			e.Multiple, e.SelectedOptions = true, chosen
		}
	}
	if n.name == "A" || n.name == "AREA" {
		e.Href = resolveHref(n)
	}
	if c.scroll || (n.clipsOverflow() && (n.scrollsX() || n.scrollsY())) {
		switch {
		case n.scrollsX() && n.scrollsY():
			e.Scrollable = "both"
		case n.scrollsX():
			e.Scrollable = "horizontal"
		default:
			e.Scrollable = "vertical"
		}
	}
	if n.doc.owner != nil || c.Frame.Parent != nil {
		e.Frame = n.doc.url
	}
	return e
}

// inputFormats are the formats of the date, time and colour fields, by
// input type: what surf types into them (the HTML value formats, which
// input_text types as keys into the field's parts) and what their values
// read as. Chromium's accessibility tree gives these fields internal
// roles (Date, InputTime, DateTime for datetime-local, month and week,
// ColorWell); HTML-AAM maps none of them to an ARIA role ("no
// corresponding role", https://www.w3.org/TR/html-aam-1.0/#el-input-date
// and the sections after it). surf lists them as textbox, the role of a
// field the model types into, with its format.
var inputFormats = map[string]string{
	"date":           "YYYY-MM-DD",       // 2027-09-14
	"time":           "HH:MM",            // 13:45, 24-hour
	"datetime-local": "YYYY-MM-DDTHH:MM", // 2027-09-14T13:45
	"month":          "YYYY-MM",          // 2027-09
	"week":           "YYYY-Www",         // 2027-W37
	"color":          "#rrggbb",          // #3366cc
}

// chromeRoles maps Chromium's internal role names to ARIA ones the model
// knows. The date, time and colour fields' (Date, InputTime, DateTime,
// ColorWell) are mapped with their formats (see inputFormats).
var chromeRoles = map[string]string{
	"DisclosureTriangle":    "button",
	"PopUpButton":           "combobox",
	"MenuListPopup":         "listbox",
	"MenuListOption":        "option",
	"ListBoxOption":         "option",
	"ToggleButton":          "button",
	"TextField":             "textbox",
	"TextFieldWithComboBox": "combobox",
	"Audio":                 "audio",
	"Video":                 "video",
	"Date":                  "textbox",
	"InputTime":             "textbox",
	"DateTime":              "textbox",
	"ColorWell":             "textbox",
}

func tagRole(n *Node) string {
	switch n.name {
	case "A", "AREA":
		return "link"
	case "BUTTON", "SUMMARY":
		return "button"
	case "SELECT":
		return "combobox"
	case "TEXTAREA":
		return "textbox"
	case "INPUT":
		switch strings.ToLower(n.attrOr("type")) {
		case "checkbox":
			return "checkbox"
		case "radio":
			return "radio"
		case "button", "submit", "reset", "image":
			return "button"
		case "range":
			return "slider"
		}
		return "textbox"
	}
	return "clickable"
}

// fallbackName makes a name for an element without an accessible one.
func fallbackName(n *Node) (string, bool) {
	if t := n.textContent(80); t != "" {
		return t, true
	}
	for _, a := range []string{"title", "aria-label", "alt", "value", "name"} {
		if v := strings.TrimSpace(n.attrOr(a)); v != "" {
			return v, true
		}
	}
	// An image inside: its alt or file name.
	var img string
	var walk func(x *Node, d int)
	walk = func(x *Node, d int) {
		if img != "" || d > 8 {
			return
		}
		if x.name == "IMG" || x.name == "svg" || x.name == "SVG" {
			if v := x.attrOr("alt"); v != "" {
				img = v
				return
			}
			if v := x.attrOr("src"); v != "" {
				if u, err := url.Parse(v); err == nil {
					img = "image " + lastSegment(u.Path)
					return
				}
			}
		}
		for _, c := range x.children {
			walk(c, d+1)
		}
	}
	walk(n, 0)
	if img != "" {
		return img, true
	}
	if id := n.attrOr("id"); id != "" {
		return "#" + id, true
	}
	if cls := strings.Fields(n.attrOr("class")); len(cls) > 0 {
		return "." + strings.Join(cls[:min(len(cls), 2)], "."), true
	}
	return strings.ToLower(n.name), true
}

func lastSegment(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// selectOptions lists a <select>'s option labels, and those of the
// options selected now.
func selectOptions(n *Node) (labels, selected []string) {
	var out []string
	var walk func(x *Node, d int)
	walk = func(x *Node, d int) {
		if d > 3 || len(out) >= 200 {
			return
		}
		for _, c := range x.children {
			switch c.name {
			case "OPTION":
				label := c.attrOr("label")
				if label == "" {
					var b strings.Builder
					for _, t := range c.children {
						if t.nodeType == 3 {
							b.WriteString(t.value)
						}
					}
					label = strings.Join(strings.Fields(b.String()), " ")
				}
				out = append(out, label)
				if c.selected {
					selected = append(selected, label)
				}
			case "OPTGROUP":
				walk(c, d+1)
			}
		}
	}
	walk(n, 0)
	return out, selected
}

func resolveHref(n *Node) string {
	h, ok := n.attr("href")
	if !ok {
		return ""
	}
	base := n.doc.baseURL
	if base == "" {
		base = n.doc.url
	}
	b, err := url.Parse(base)
	if err != nil {
		return h
	}
	u, err := b.Parse(strings.TrimSpace(h))
	if err != nil {
		return h
	}
	return u.String()
}

// DescribeCover names what covers an element.
func DescribeCover(owner *Node, listed map[*Node]*Element) string {
	if e, ok := listed[owner]; ok {
		return e.Role + " " + Quote(e.Name, 40)
	}
	role := strings.ToLower(owner.attrOr("role"))
	if role == "" {
		if owner.name == "DIALOG" {
			role = "dialog"
		} else {
			role = strings.ToLower(owner.name)
		}
	}
	name := domLabel(owner)
	if name == "" {
		name = owner.textContent(40)
	}
	if name == "" {
		return owner.describe()
	}
	return role + " " + Quote(name, 40)
}

// CoverID is the id of the listed element that is the cover or the first
// listed one inside it.
func CoverID(owner *Node, listed map[*Node]*Element) int {
	if e, ok := listed[owner]; ok {
		return e.ID
	}
	best := 0
	for n, e := range listed {
		if n.isDescendantOf(owner) && (best == 0 || e.ID < best) {
			best = e.ID
		}
	}
	return best
}

// clippedSide is where a Clipped candidate lies relative to the view of
// what hides it (its scroll container, or else its clip): the way that
// container has to scroll to show it.
func clippedSide(c *Candidate) Location {
	if c.Where != Clipped {
		return ""
	}
	view := c.Node.clipFor()
	if c.container != nil {
		view = c.container.contentBox()
	}
	if view.Empty() {
		return ""
	}
	return side(c.Node.box, view)
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

// ScrollsSideways reports whether an element's content scrolls sideways.
func (e *Element) ScrollsSideways() bool {
	return e.Scrollable == "horizontal" || e.Scrollable == "both"
}

// Blocked summarizes what the policy stopped since the last observation.
type Blocked struct {
	// Navigations are the pages and actions stopped, each with why.
	Navigations []string `json:"navigations,omitempty"`
	// Requests counts subresource requests stopped, and Hosts names their
	// hosts (the first few).
	Requests int      `json:"requests,omitempty"`
	Hosts    []string `json:"hosts,omitempty"`
	// Unrecorded counts subresource requests a replayed session refused
	// because its recording does not hold them, and UnrecordedURLs names
	// the first few.
	Unrecorded     int      `json:"unrecorded,omitempty"`
	UnrecordedURLs []string `json:"unrecorded_urls,omitempty"`
}

// Lines are the observation's lines about what the policy stopped.
func (b Blocked) Lines() []string {
	var out []string
	for _, n := range b.Navigations {
		out = append(out, "blocked: "+n)
	}
	if b.Requests > 0 {
		out = append(out, fmt.Sprintf("blocked: %d subresource requests by the policy (hosts %s)", b.Requests, QuoteJoin(b.Hosts, 8, 40, ", ")))
	}
	if b.Unrecorded > 0 {
		urls := make([]string, len(b.UnrecordedURLs))
		for i, u := range b.UnrecordedURLs {
			urls[i] = Quote(u, 120)
		}
		more := ""
		if b.Unrecorded > len(urls) {
			more = ", ..."
		}
		out = append(out, fmt.Sprintf("blocked: %d subresource requests not in recording (%s%s)", b.Unrecorded, strings.Join(urls, ", "), more))
	}
	return out
}
