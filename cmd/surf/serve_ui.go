package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/boardui"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
	"github.com/surfkit/surf/cmd/surf/internal/liveui"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/telemetry"
)

// serveLivePath is where surf serve --board --http puts its own live view,
// since the board's page takes /.
const serveLivePath = "/live/"

// startServeUI makes surf serve's web pages (--http without --no-ui): the
// live view of its sessions (it sets scfg.Live), at / alone. With --board
// the board's page is at / instead (surf board ui's handler), listing
// every task and every worker's live sessions over the board's NATS,
// serve's own among them (its hub is published there as a worker); the
// live view moves to serveLivePath, which the page links to. With
// several principals (--tokens) the board's page stays off: it would
// show each principal the others' tasks. boardPage reports whether
// the board's page is on.
func startServeUI(ctx context.Context, cli *CLI, scfg *mcpserver.Config, o mcpserver.HTTPOptions, m *telemetry.Metrics) (ui http.Handler, boardPage bool, stop func(), err error) {
	hub := live.New(live.Config{Logger: cli.Logger})
	lv, err := liveui.New(liveui.Config{Hub: hub, Logger: cli.Logger})
	if err != nil {
		hub.Close()
		return nil, false, nil, err
	}
	stopAfter := context.AfterFunc(ctx, lv.Close) // its streams would hold the shutdown up
	closers := []func(){hub.Close, func() { stopAfter() }, lv.Close}
	stop = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	scfg.Live = hub
	if scfg.Board == nil {
		return lv, false, stop, nil
	}
	if len(o.Principals) > 0 {
		fmt.Fprintln(cli.Stderr, "surf: the board's page is off with --tokens (it would show each principal the others' tasks): run surf board ui for it")
		return lv, false, stop, nil
	}
	host, _ := os.Hostname()
	page, closePage, err := openBoardPage(ctx, cli, scfg.Board, hub, "serve@"+host,
		[]boardui.Link{{Text: "this server's live view", Path: serveLivePath}})
	if err != nil {
		stop()
		return nil, false, nil, err
	}
	closers = append(closers, closePage)
	m.BoardStates(page.States)
	mux := http.NewServeMux()
	mux.Handle(serveLivePath, http.StripPrefix(strings.TrimSuffix(serveLivePath, "/"), lv))
	mux.Handle("/", page)
	return mux, true, stop, nil
}

// openBoardPage makes the board's page (surf board ui's, and surf serve
// --board's): it follows the workers' live sessions over the board's
// NATS and, with a hub, publishes that hub's sessions there too, as the
// worker name. stop closes the page, then the bus.
func openBoardPage(ctx context.Context, cli *CLI, b *board.Board, hub *live.Hub, name string, links []boardui.Link) (_ *boardui.Handler, stop func(), err error) {
	bus, err := livebus.Follow(b.Conn())
	if err != nil {
		return nil, nil, err
	}
	var bridge *livebus.Bridge
	if hub != nil {
		if bridge, err = livebus.Publish(ctx, livebus.Config{Conn: b.Conn(), Hub: hub, Worker: name, Logger: cli.Logger}); err != nil {
			bus.Close()
			return nil, nil, err
		}
	}
	stop = func() {
		if bridge != nil {
			bridge.Close()
		}
		bus.Close()
	}
	ui, err := boardui.New(ctx, boardui.Config{Board: b, Bus: bus, Links: links, Logger: cli.Logger})
	if err != nil {
		stop()
		return nil, nil, err
	}
	return ui, func() { ui.Close(); stop() }, nil
}
