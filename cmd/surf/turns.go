package main

import (
	"github.com/surfkit/surf/internal/admit"
)

// A board worker's surfers share one browser. A task holds a turn
// (admit.Turn, carried by its context) while it drives the browser:
// opening its session, acting, observing. It lets the turn go while it
// waits on anything else: the model, a person approving an action or
// helping, a takeover between steps (package away), and while its files
// are stored. Package admit says why that serves more tasks a minute.

// turnQueue is the queue of --max-active n; 0 means admit.DefaultCapacity.
func turnQueue(n int) *admit.Queue {
	if n == 0 {
		n = admit.DefaultCapacity()
	}
	return admit.New(n)
}
