package main

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/surfkit/surf/cmd/surf/internal/boardui"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/liveui"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/telemetry"
)

// startServeUI makes surf serve's web pages (--http without --no-ui): the
// live view of its sessions (it sets scfg.Live), at / alone. With --board
// the board's page is at / instead (surf board ui's handler), listing
// every task and every worker's live sessions over the board's NATS,
// serve's own among them (its hub is published there as a worker); the
// live view moves to /live/ (boardui.LiveViewPath), which the page links
// to. With several principals (--tokens) the board's page stays off: it
// would show each principal the others' tasks. boardPage reports whether
// the board's page is on.
func startServeUI(ctx context.Context, cli *CLI, scfg *mcpserver.Config, o mcpserver.HTTPOptions, m *telemetry.Metrics) (ui http.Handler, boardPage bool, stop func(), err error) {
	hub := live.New(live.Config{Logger: cli.Logger})
	lv, err := liveui.New(liveui.Config{Hub: hub, Logger: cli.Logger})
	if err != nil {
		hub.Close()
		return nil, false, nil, err
	}
	scfg.Live = hub
	stopAfter := context.AfterFunc(ctx, lv.Close) // its streams would hold the shutdown up
	// closeLive is its own variable: a closure over the named result stop
	// would call itself once stop is reassigned below.
	closeLive := func() { lv.Close(); stopAfter(); hub.Close() }
	if scfg.Board == nil || len(o.Principals) > 0 {
		if scfg.Board != nil {
			fmt.Fprintln(cli.Stderr, "surf: the board's page is off with --tokens (it would show each principal the others' tasks): run surf board ui for it")
		}
		return lv, false, closeLive, nil
	}
	host, _ := os.Hostname()
	page, err := boardui.Open(ctx, boardui.OpenConfig{Board: scfg.Board, Hub: hub, Worker: "serve@" + host, LiveView: lv, Logger: cli.Logger})
	if err != nil {
		closeLive()
		return nil, false, nil, err
	}
	m.BoardStates(page.States)
	return page, true, func() { page.Close(); closeLive() }, nil
}
