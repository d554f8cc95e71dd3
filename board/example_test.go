package board_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/surfkit/surf/board"
)

// A program puts a small graph of tasks on a board and runs them with its
// own workers. A real RunFunc would drive a surfer (surf work does); this
// one answers from the instruction.
func Example() {
	dir, err := os.MkdirTemp("", "board-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	b, err := board.Open(ctx, board.Config{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Add(ctx,
		board.Task{ID: "hotels", Instruction: "find three hotels near the harbour"},
		board.Task{ID: "sights", Instruction: "find the harbour's sights"},
		board.Task{ID: "plan", Instruction: "plan a day", After: []string{"hotels", "sights"}},
	); err != nil {
		log.Fatal(err)
	}

	work, stop := context.WithCancel(ctx)
	defer stop()
	go b.Work(work, board.WorkConfig{Workers: 2, Run: func(ctx context.Context, c *board.Claim) (*board.Result, error) {
		return &board.Result{Answer: strings.ToUpper(c.Task.Instruction), EndReason: "answered"}, nil
	}})

	recs, err := b.Wait(ctx, "hotels", "sights", "plan")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		fmt.Printf("%s: %s, %s\n", r.Task.ID, r.State, r.Result.Answer)
	}
	// Output:
	// hotels: done, FIND THREE HOTELS NEAR THE HARBOUR
	// sights: done, FIND THE HARBOUR'S SIGHTS
	// plan: done, PLAN A DAY
}
