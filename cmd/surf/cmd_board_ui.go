package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/boardui"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

var boardUIUsage = helpText("board-ui")

func init() { addBoardSub("ui", boardUIUsage, boardUI) }

// boardUI is surf board ui.
func boardUI(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	addr := fs.String("http", "127.0.0.1:8933", "")
	tokenFile := fs.String("token-file", "", "")
	remote := fs.Bool("allow-remote", false, "")
	public := fs.String("public-host", "", "")
	metrics := fs.String("metrics", "", "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(c, "ui takes no arguments")
	}
	o := mcpserver.HTTPOptions{AllowRemote: *remote, PublicHost: *public}
	if *tokenFile != "" {
		tok, err := mcpserver.ReadTokenFile("--token-file", *tokenFile)
		if err != nil {
			return err
		}
		o.Token = tok
	}
	if o.Token == "" && mcpserver.IsLoopbackBind(*addr) {
		o.Token = mcpserver.GenerateToken()
	}
	if err := mcpserver.CheckBind(*addr, o); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("--http: %w", err)}
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	ui, err := boardui.Open(ctx, boardui.OpenConfig{Board: b, Logger: cli.Logger})
	if err != nil {
		return err
	}
	defer ui.Close()
	m, err := cli.serveMetrics(ctx, *metrics)
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	m.BoardStates(ui.States)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--http: listening on %s: %w", *addr, err)
	}
	srv := &http.Server{
		Handler:           mcpserver.Guard(ui, ln.Addr().String(), o, true, cli.Logger),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(cli.Stderr, "surf: the board's page at %s\n", loginURL(ln.Addr(), o))
	select {
	case err = <-errc:
	case <-ctx.Done():
		ui.Close()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
		err = <-errc
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
