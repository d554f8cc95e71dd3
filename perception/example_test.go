package perception_test

import (
	"fmt"
	"log"

	"github.com/surfkit/surf/perception"
)

// Example perceives a page from recorded CDP payloads, step by step: parse
// and locate the candidates, attach the accessibility nodes Chromium gave
// for the ones perception asked about, number them, render the text.
func Example() {
	rec, err := perception.ReadRecording("testdata/recorded/native.json.gz")
	if err != nil {
		log.Fatal(err)
	}
	// Each frame carries the caller's handle for it (websurfer puts its CDP
	// session there); here, the frame's index in the recording.
	c := rec.Capture
	c.Handle = 0
	for i := range c.Frames {
		c.Frames[i].Handle = i + 1
	}
	page, err := perception.Perceive(c)
	if err != nil {
		log.Fatal(err)
	}
	// A live surfer asks Chromium (Accessibility.getPartialAXTree) for
	// these; the recording holds what it answered, by frame.
	for _, cand := range perception.AXTargets(page) {
		i, _ := cand.Frame.Handle.(int)
		if i >= 0 && i < len(rec.AX) {
			cand.SetAX(rec.AX[i][cand.Node.Backend()])
		}
	}
	out := perception.Render(perception.Number(page, 1), perception.RenderInput{TokenBudget: perception.DefaultTokenBudget})
	for _, e := range out.Elements[:3] {
		fmt.Println(e.Line())
	}
	// Output:
	// 1 link "link to ARIA widgets"
	// 2 link "same-page link"
	// 3 button "Go"
}
