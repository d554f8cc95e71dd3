package main

import (
	"context"
	"fmt"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
	"github.com/surfkit/surf/websurfer"
	"github.com/surfkit/surf/worker"
)

// liveWatcher puts each task of a worker in the live view while it runs,
// a session there named by its worker and task. With alone, the live view
// alone answers "ask" actions (the surfer's Approver is not asked).
// The live view may be the worker's own (--ui) or the board's page, over
// NATS (worklivebus.go).
type liveWatcher struct {
	hub   *live.Hub
	alone bool
	// noHuman leaves request_help unanswered by the live view (nobody
	// is expected there).
	noHuman bool
}

var _ worker.Watcher = liveWatcher{}

func (w liveWatcher) Watch(_ context.Context, r *worker.Run) (worker.Watch, error) {
	ls, err := w.hub.Open(live.SessionOptions{Owner: fmt.Sprintf("worker %s task %s", r.Claim.Worker, r.Claim.Task.ID), Task: r.Claim.Task.ID, Redact: r.Session.Policy().Redact})
	if err != nil {
		return nil, err
	}
	other := r.Surf.Approver
	if w.alone {
		other = nil
	}
	r.Surf.Approver = ls.Approver(other)
	if !w.noHuman {
		r.Surf.Human = ls
	}
	return &liveWatch{ls: ls, r: r}, nil
}

// liveWatch is one task's session in the live view.
type liveWatch struct {
	ls *live.Session
	r  *worker.Run
}

func (w *liveWatch) Begin(ctx context.Context, s *websurfer.Surfer, opts *websurfer.RunOptions) (context.Context, func()) {
	attachLive(w.ls, s, w.r.Session)
	opts.Between = w.ls.Between
	unstop := livebus.StopCancelsTask(ctx, w.ls, w.r.Claim)
	end := w.ls.Begin()
	return websurfer.WithProgress(ctx, w.ls.Progress), func() { unstop(); end() }
}

func (w *liveWatch) Step(st *websurfer.Step) { w.ls.Step(st) }

func (w *liveWatch) Close() { w.ls.Close() }
