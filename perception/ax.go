package perception

import (
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// axInfo is what Chromium's accessibility tree says of an element.
type axInfo struct {
	ignored  bool
	hidden   bool // ignored because hidden, inert or not rendered
	role     string
	name     string
	desc     string
	value    string
	checked  string // "true", "false", "mixed" or ""
	pressed  string
	selected bool
	expanded string // "true", "false" or ""
	disabled bool
	focused  bool
	required bool
	readonly bool
	invalid  bool
	multi    bool // multiline text
	popup    string
	level    int
	valueNow string

	// inertModal: ignored because a modal dialog makes it inert (it
	// paints, behind the dialog's backdrop).
	inertModal bool
}

func parseAX(n *accessibility.Node) *axInfo {
	a := &axInfo{ignored: n.Ignored}
	for _, r := range n.IgnoredReasons {
		if r.Name == "activeModalDialog" {
			a.inertModal = true
		}
		switch string(r.Name) {
		case "ariaHiddenElement", "ariaHiddenSubtree", "inertElement", "inertSubtree", "notRendered", "notVisible":
			a.hidden = true
		}
	}
	a.role = axString(n.Role)
	a.name = axString(n.Name)
	a.desc = axString(n.Description)
	a.value = axString(n.Value)
	for _, p := range n.Properties {
		v := axString(p.Value)
		switch string(p.Name) {
		case "checked":
			a.checked = v
		case "pressed":
			a.pressed = v
		case "selected":
			a.selected = v == "true"
		case "expanded":
			a.expanded = v
		case "disabled":
			a.disabled = v == "true"
		case "focused":
			a.focused = v == "true"
		case "required":
			a.required = v == "true"
		case "readonly":
			a.readonly = v == "true"
		case "invalid":
			a.invalid = v != "" && v != "false"
		case "multiline":
			a.multi = v == "true"
		case "hasPopup":
			if v != "false" {
				a.popup = v
			}
		case "level":
			for _, ch := range v {
				if ch >= '0' && ch <= '9' {
					a.level = a.level*10 + int(ch-'0')
				}
			}
		case "valuetext":
			a.valueNow = v
		}
	}
	return a
}

// axString reads an AX value as a string: strings as they are, booleans and
// numbers in their JSON form.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if err := jsonv2.Unmarshal(v.Value, &s); err == nil {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(string(v.Value))
}

// genericRoles are AX roles that say nothing about how to act on an
// element.
var genericRoles = map[string]bool{
	"": true, "generic": true, "none": true, "presentation": true, "StaticText": true,
	"GenericContainer": true, "Section": true, "paragraph": true, "Unknown": true,
	"InlineTextBox": true, "LayoutTable": true, "LayoutTableCell": true, "LayoutTableRow": true,
	"group": true, "image": true, "img": true, "listitem": true, "Pre": true, "Div": true,
	"Span": true, "LabelText": true,
}
