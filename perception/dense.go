package perception

import "fmt"

// MaxListed bounds how many on-screen elements an observation's text can
// list within a token budget: the element lines get at most 65% of it, and
// no line is shorter than 4 tokens. The image drawn before the text is
// built marks no more than that.
func MaxListed(budget int) int {
	if budget <= 0 {
		budget = DefaultTokenBudget
	}
	return max(1, budget*65/100/4)
}

// CrowdedMarks is the number of marks from which an image may leave tags
// out; DroppedNoteTokens is the room kept for saying so.
const (
	CrowdedMarks      = 60
	DroppedNoteTokens = 64
)

// moreOnScreen is the line for the on-screen elements the budget left out:
// they have ids but no line and no mark, and come after the listed ones
// in reading order.
func moreOnScreen(n, first, last int, marks, canScroll bool) string {
	how := "they come after the listed ones in reading order"
	if canScroll {
		how += "; scroll down to list them"
	}
	if marks {
		return fmt.Sprintf("… and %d more on screen (ids %d-%d, not listed and not marked in the screenshot: %s)", n, first, last, how)
	}
	return fmt.Sprintf("… and %d more on screen (ids %d-%d, not listed: %s)", n, first, last, how)
}
