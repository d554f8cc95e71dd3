package websurfer_test

import (
	"errors"
	"fmt"

	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// A refused action returns a tool error: its text is what the model reads,
// and errors.Is and errors.As tell a caller the cause and its data.
func ExampleCoveredError() {
	// What Click returns when a cookie banner covers the button.
	err := tools.NewError(&websurfer.CoveredError{ID: 7, Role: "button", Name: "Buy now", By: `dialog "Cookie consent"`, ByID: 9})

	fmt.Println(err)
	fmt.Println(tools.IsToolError(err), errors.Is(err, websurfer.ErrCovered), errors.Is(err, websurfer.ErrOffscreen))
	var covered *websurfer.CoveredError
	if errors.As(err, &covered) {
		fmt.Println("accept or close element", covered.ByID, "first")
	}
	// Output:
	// element 7 button "Buy now" is covered by dialog "Cookie consent", id 9; deal with that first (for example close or accept it)
	// true true false
	// accept or close element 9 first
}
