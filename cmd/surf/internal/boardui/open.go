package boardui

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
)

// OpenConfig configures Open. Board is required.
type OpenConfig struct {
	Board *board.Board
	// Hub, when set, holds this process's own live sessions (surf serve's):
	// they are published on the board's NATS as Worker's, so the page
	// (and every other page of the board) lists them like a worker's.
	Hub    *live.Hub
	Worker string
	// LiveView, when set, is this process's own live view (package
	// liveui's handler): the page serves it under LiveViewPath and links
	// to it from its header.
	LiveView http.Handler
	// Who, Links and Logger are the page's (Config).
	Who    string
	Links  []Link
	Logger *slog.Logger
}

// LiveViewPath is where a page of Open serves OpenConfig.LiveView.
const LiveViewPath = "/live/"

// Page is a board's page that follows the workers' live sessions over
// the board's NATS itself (livebus.Follow). Close it to stop.
type Page struct {
	*Handler
	bus    *livebus.Follower
	bridge *livebus.Bridge
	live   http.Handler // OpenConfig.LiveView under LiveViewPath
}

func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.live != nil && strings.HasPrefix(r.URL.Path, LiveViewPath) {
		p.live.ServeHTTP(w, r)
		return
	}
	p.Handler.ServeHTTP(w, r)
}

// Open makes the board's page, following the board's NATS, and publishes
// cfg.Hub's sessions there when set (until Close).
func Open(ctx context.Context, cfg OpenConfig) (*Page, error) {
	if cfg.Board == nil {
		return nil, errors.New("boardui: OpenConfig.Board is required")
	}
	p := &Page{}
	links := cfg.Links
	if cfg.LiveView != nil {
		p.live = http.StripPrefix(strings.TrimSuffix(LiveViewPath, "/"), cfg.LiveView)
		links = append([]Link{{Text: "this server's live view", Path: LiveViewPath}}, links...)
	}
	var err error
	if p.bus, err = livebus.Follow(cfg.Board.Conn()); err != nil {
		return nil, err
	}
	if cfg.Hub != nil {
		p.bridge, err = livebus.Publish(ctx, livebus.Config{Conn: cfg.Board.Conn(), Hub: cfg.Hub, Worker: cfg.Worker, Logger: cfg.Logger})
		if err != nil {
			p.Close()
			return nil, err
		}
	}
	p.Handler, err = New(ctx, Config{Board: cfg.Board, Bus: p.bus, Who: cfg.Who, Links: links, Logger: cfg.Logger})
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Close closes the page, stops publishing the hub and stops following
// the board's NATS.
func (p *Page) Close() {
	if p.Handler != nil {
		p.Handler.Close()
	}
	if p.bridge != nil {
		p.bridge.Close()
	}
	if p.bus != nil {
		p.bus.Close()
	}
}
