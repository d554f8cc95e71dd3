package main

import (
	"context"
	"os"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
	"github.com/surfkit/surf/worker"
)

// startLive puts each task of surf work in a live hub, published on the
// board's NATS for the board's page ('surf board ui'), and served on
// --ui when given. A person answers approvals and requests for help
// with --approve live (or --ui without --approve); otherwise the hub
// only shows the sessions (takeovers still pause them).
func (f *workFlags) startLive(ctx context.Context, cli *CLI, b *board.Board, wcfg *worker.Config) (stop func(), err error) {
	var hub *live.Hub
	var lv *liveView
	if f.withUI {
		if lv, err = startLiveView(ctx, cli, *f.uf.addr, f.uiOpts); err != nil {
			return nil, err
		}
		hub = lv.hub
	} else {
		hub = live.New(live.Config{Logger: cli.Logger})
	}
	name := f.name
	if name == "" {
		host, _ := os.Hostname()
		name = host
	}
	bridge, err := livebus.Publish(ctx, livebus.Config{Conn: b.Conn(), Hub: hub, Worker: name, Logger: cli.Logger})
	if err != nil {
		lv.Close()
		hub.Close()
		return nil, err
	}
	person := f.approve == "live" || (f.withUI && !f.approveSet)
	wcfg.Watcher = liveWatcher{hub: hub, alone: person, noHuman: !person && !f.withUI}
	return func() {
		bridge.Close()
		hub.Close()
		lv.Close()
	}, nil
}
