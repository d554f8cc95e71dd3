package perception

import (
	"fmt"
	"strings"
)

// ElementList is an observation's element list as surf's golden files
// record it: the viewport position, the frames line of text, the notes,
// one line per element with its location, and the unlisted counts. Each
// of origins is replaced by a placeholder: {A}, {B}, ...
func ElementList(position, text string, notes []string, elements []Element, unlisted map[Location]int, origins ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "viewport: %s\n", position)
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "frames: ") {
			b.WriteString(l + "\n")
		}
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, e := range elements {
		fmt.Fprintf(&b, "%s @%s\n", e.Line(), e.Where)
	}
	for _, loc := range []Location{InViewport, Above, Below, Clipped} {
		if n := unlisted[loc]; n > 0 {
			fmt.Fprintf(&b, "unlisted %s: %d\n", loc, n)
		}
	}
	out := b.String()
	for i, o := range origins {
		out = strings.ReplaceAll(out, o, "{"+string(rune('A'+i))+"}")
	}
	return out
}
