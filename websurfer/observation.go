package websurfer

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/surfkit/surf/internal/tokens"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/som"
)

// DefaultTokenBudget is the o200k token budget of an observation's text
// unless Config.TokenBudget says otherwise.
const DefaultTokenBudget = 2500

// Observation is the active tab as the model sees it: where the page is,
// the elements it can act on (numbered 1..N, on-screen ones first), the
// visible text, what happened since the last step, and the set-of-mark
// screenshot. Observing changes nothing in the page.
type Observation struct {
	// Seq numbers the observations of a surfer; ids are only valid for
	// the observation that made them.
	Seq      int       `json:"seq"`
	URL      string    `json:"url"`
	Title    string    `json:"title"`
	Viewport Viewport  `json:"viewport"`
	Elements []Element `json:"elements"`
	// Unlisted counts elements found but left out of the text by the
	// budget, by location.
	Unlisted map[Location]int `json:"unlisted,omitempty"`
	// Focused is the id of the focused element, 0 if none is listed.
	Focused     int       `json:"focused,omitempty"`
	VisibleText string    `json:"visible_text"`
	Metadata    *Metadata `json:"metadata,omitempty"`
	Tabs        []TabInfo `json:"tabs"`
	Events      []Event   `json:"events,omitempty"`
	// Blocked is what the policy stopped since the last observation.
	Blocked Blocked `json:"blocked"`
	// Notes say what surf could not see: canvas pixels, frames it could
	// not read.
	Notes []string `json:"notes,omitempty"`
	// Tokens is the o200k token count of Text().
	Tokens int `json:"tokens"`
	// Image is the set-of-mark screenshot as sent to the model.
	Image       []byte `json:"-"`
	ImageMIME   string `json:"image_mime,omitempty"`
	ImageWidth  int    `json:"image_width,omitempty"`
	ImageHeight int    `json:"image_height,omitempty"`
	Timing      Timing `json:"timing"`

	text  string
	refs  map[int]*elementRef
	texts []som.Rect // the text boxes the labels avoided
	nav   int        // the tab's navigation count when observed
	tab   *tab
	taken time.Time

	// marked is how many on-screen elements the text lists, ids 1 to
	// marked: the set-of-mark image draws those only.
	marked int
}

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
	Href       string `json:"href,omitempty"`

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

// Timing is how long an observation's phases took. The screenshot is
// taken (Screenshot) and decoded for drawing (Decode) while the page is
// read (Snapshot, AX, Parse, Text); Image is drawing and encoding the
// set-of-mark image once both are done.
type Timing struct {
	Total      time.Duration `json:"total"`
	Screenshot time.Duration `json:"screenshot"`
	Decode     time.Duration `json:"decode"`
	Snapshot   time.Duration `json:"snapshot"`
	AX         time.Duration `json:"ax"`
	Image      time.Duration `json:"image"`
	Parse      time.Duration `json:"parse"`
	Text       time.Duration `json:"text"`
}

// timingJSON is Timing as JSON: milliseconds, as every duration surf
// writes (the journal's too), with the unit in the name.
type timingJSON struct {
	Total      journal.Duration `json:"total_ms"`
	Screenshot journal.Duration `json:"screenshot_ms"`
	Decode     journal.Duration `json:"decode_ms"`
	Snapshot   journal.Duration `json:"snapshot_ms"`
	AX         journal.Duration `json:"ax_ms"`
	Image      journal.Duration `json:"image_ms"`
	Parse      journal.Duration `json:"parse_ms"`
	Text       journal.Duration `json:"text_ms"`
}

// MarshalJSON writes the phases in milliseconds ("total_ms": 63.125).
func (t Timing) MarshalJSON() ([]byte, error) {
	return json.Marshal(timingJSON{journal.Duration(t.Total), journal.Duration(t.Screenshot), journal.Duration(t.Decode), journal.Duration(t.Snapshot),
		journal.Duration(t.AX), journal.Duration(t.Image), journal.Duration(t.Parse), journal.Duration(t.Text)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Timing) UnmarshalJSON(b []byte) error {
	var j timingJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = Timing{time.Duration(j.Total), time.Duration(j.Screenshot), time.Duration(j.Decode), time.Duration(j.Snapshot),
		time.Duration(j.AX), time.Duration(j.Image), time.Duration(j.Parse), time.Duration(j.Text)}
	return nil
}

// elementRef is what surf keeps of an id: where the element lives and
// where it was.
type elementRef struct {
	el      *Element
	src     *frameSnap
	backend cdp.BackendNodeID
	node    *snapNode
	clickX  float64
	clickY  float64
	vis     rect
	cand    *candidate
}

// Text is the observation as the model reads it: compact, one line per
// element, page-controlled strings quoted or fenced, within the token
// budget.
func (o *Observation) Text() string { return o.text }

// Element returns the listed element with the given id.
func (o *Observation) Element(id int) (*Element, bool) {
	r, ok := o.refs[id]
	if !ok {
		return nil, false
	}
	return r.el, true
}

// q quotes a page-controlled string as JSON, truncated to n runes.
func q(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n]) + "…"
	}
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

// line renders one element.
func (e *Element) line() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(e.ID))
	b.WriteByte(' ')
	b.WriteString(e.Role)
	b.WriteByte(' ')
	b.WriteString(q(e.Name, 80))
	if e.NameFallback {
		b.WriteString(" (unlabelled)")
	}
	if e.Value != "" && e.Value != e.Name {
		b.WriteString(" value=" + q(e.Value, 60))
	}
	if e.Placeholder != "" && e.Placeholder != e.Name {
		b.WriteString(" placeholder=" + q(e.Placeholder, 40))
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
func quoteOptions(opts []string) string { return quoteJoin(opts, 12, 30, ",") }

// quoteJoin renders page strings as a list: the first n, each quoted and
// cut to width runes, joined by sep, and how many more there are.
func quoteJoin(list []string, n, width int, sep string) string {
	more := 0
	if len(list) > n {
		more, list = len(list)-n, list[:n]
	}
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = q(s, width)
	}
	out := "[" + strings.Join(parts, sep)
	if more > 0 {
		out += fmt.Sprintf("%s+%d more", sep, more)
	}
	return out + "]"
}

// short renders an off-screen element for the above/below summaries.
func (e *Element) short() string {
	return strconv.Itoa(e.ID) + " " + e.Role + " " + q(e.Name, 40)
}

// newNonce makes the per-observation delimiter of the page text, so page
// text cannot close the block and pose as surf's own words.
func newNonce() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

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
