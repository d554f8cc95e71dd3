package tokens_test

import (
	"fmt"

	"github.com/surfkit/surf/internal/tokens"
)

func ExampleCount() {
	fmt.Println(tokens.Count("hello world"))
	// Output: 2
}

func ExampleTruncate() {
	s := "The quick brown fox jumps over the lazy dog."
	fmt.Printf("%q\n", tokens.Truncate(s, 4))
	// Output: "The quick brown fox"
}

func ExampleImageTokens() {
	// A 1280x720 screenshot at high detail covers 3x2 tiles of 512 px.
	fmt.Println(tokens.ImageTokens(1280, 720, "high"))
	fmt.Println(tokens.ImageTokens(1280, 720, "low"))
	// Output:
	// 1105
	// 85
}
