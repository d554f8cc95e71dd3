package websurfer

import (
	"encoding/json"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/som"
)

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
	// Again is set when the page had not changed since observation Seq,
	// which is handed out again without reading the page (see
	// unchanged.go).
	Again bool `json:"again,omitempty"`

	text string
	refs map[int]*elementRef
	// frames are the page's perceived frames, the page's first: what
	// click_at and drag hit-test a point in.
	frames []*frameSnap
	texts  []som.Rect // the text boxes the labels avoided
	nav    int        // the tab's navigation count when observed
	tab    *tab
	taken  time.Time

	// marked is how many on-screen elements the text lists, ids 1 to
	// marked: the set-of-mark image draws those only.
	marked int

	// watch is what watchScript saw when the observation started, and
	// acts the surfer's action count then (see unchanged.go).
	watch pageWatch
	acts  int
	// axSent counts the accessibility reads sent ahead of knowing what
	// it lists, and axAhead those it took its data from (see axAhead).
	axSent, axAhead int
	// boxSent and boxAhead are the same for the frame boxes (boxAhead).
	boxSent, boxAhead int
}

// Timing is how long an observation's phases took. The screenshot is
// taken (Screenshot) and decoded for drawing (Decode) while the page is
// read (Snapshot) and perceived (Parse); then the set-of-mark image is
// drawn and encoded (Image) while the accessibility data is read (AX) and
// the text written (Text).
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

// sess is the CDP session of the element's frame.
func (r *elementRef) sess() *cdpSession { return sessOf(r.src) }

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
