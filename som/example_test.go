package som_test

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"

	"github.com/surfkit/surf/som"
)

func ExampleDraw() {
	// A screenshot, e.g. from png.Decode or jpeg.Decode.
	screenshot := image.NewRGBA(image.Rect(0, 0, 320, 200))
	draw.Draw(screenshot, screenshot.Rect, image.NewUniform(color.White), image.Point{}, draw.Src)

	// Element boxes in image pixels: CSS pixels times the device scale
	// factor (or pass the factor as Options.Scale).
	marks := []som.Mark{
		{ID: 1, Box: som.Rect{X: 20, Y: 40, W: 120, H: 24}}, // a text field
		{ID: 2, Box: som.Rect{X: 150, Y: 40, W: 60, H: 24}}, // its button
		{ID: 3, Box: som.Rect{X: 20, Y: 180, W: 80, H: 40}}, // cut by the bottom edge
		{ID: 4, Box: som.Rect{X: 20, Y: 400, W: 80, H: 20}}, // below the fold: left out
	}
	annotated := som.Draw(screenshot, marks, som.Options{})
	fmt.Printf("%T %v\n", annotated, annotated.Bounds())

	// Layout tells where each tag went, for the text part of the
	// observation or for tests.
	for _, l := range som.Layout(screenshot.Bounds(), marks, som.Options{}) {
		fmt.Printf("mark %d: box %v, tag %v %v\n", l.ID, l.Box, l.Rect, l.Place)
	}
	// Output:
	// *image.RGBA (0,0)-(320,200)
	// mark 1: box (20,40)-(140,64), tag (20,26)-(34,40) outside
	// mark 2: box (150,40)-(210,64), tag (150,26)-(164,40) outside
	// mark 3: box (20,180)-(100,200), tag (20,166)-(34,180) outside
}

func ExampleMeasure() {
	bounds := image.Rect(0, 0, 400, 300)
	var marks []som.Mark
	for i := range 12 { // a tight row of small buttons
		marks = append(marks, som.Mark{ID: i + 1, Box: som.Rect{X: float64(10 + i*30), Y: 100, W: 26, H: 20}})
	}
	m := som.Measure(bounds, som.Layout(bounds, marks, som.Options{}))
	fmt.Printf("tags %d, overlapping %d, on other boxes %.0f%%, misleading %d\n", m.Tags, m.Overlapping, 100*m.CoverOther, m.Misleading)
	// Output:
	// tags 12, overlapping 0, on other boxes 0%, misleading 0
}
