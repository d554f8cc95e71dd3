package websurfer

import (
	"github.com/surfkit/surf/internal/tokens"
	"github.com/surfkit/surf/perception"
)

// The observation's public types live in package perception; these
// aliases keep websurfer's API as it was.
type (
	// Element is an element the model can act on.
	Element = perception.Element
	// Box is a rectangle in viewport CSS pixels.
	Box = perception.Box
	// Viewport says where the viewport is on the page.
	Viewport = perception.Viewport
	// Location says where an element is relative to the viewport.
	Location = perception.Location
	// Metadata is what a page says about itself.
	Metadata = perception.Metadata
	// TabInfo is one open tab.
	TabInfo = perception.TabInfo
	// Event is something that happened since the last observation.
	Event = perception.Event
	// Blocked summarizes what the policy stopped since the last
	// observation.
	Blocked = perception.Blocked
)

// Where an element is; see perception.Location.
const (
	InViewport = perception.InViewport
	Covered    = perception.Covered
	Clipped    = perception.Clipped
	Above      = perception.Above
	Below      = perception.Below
	Left       = perception.Left
	Right      = perception.Right
)

// DefaultTokenBudget is the o200k token budget of an observation's text
// unless Config.TokenBudget says otherwise.
const DefaultTokenBudget = perception.DefaultTokenBudget

// The page model, as the capture pipeline and the actions use it.
type (
	rect      = perception.Rect
	snapNode  = perception.Node
	frameSnap = perception.Frame
	candidate = perception.Candidate
)

// droppedNoteTokens is the room an observation keeps for noteDropped.
const droppedNoteTokens = perception.DroppedNoteTokens

// tokensOf counts s in the model's tokens.
func tokensOf(s string) int { return tokens.Count(s) }

// q quotes a page-controlled string as JSON, cut to n runes.
func q(s string, n int) string { return perception.Quote(s, n) }
