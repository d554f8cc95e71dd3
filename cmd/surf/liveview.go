package main

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/liveui"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// uiFlags are the live view's flags of run and work.
type uiFlags struct {
	addr        *string
	token       *string // refused: see errTokenFlag
	tokenFile   *string
	allowRemote *bool
	publicHost  *string
}

func addUIFlags(fs *pflag.FlagSet) *uiFlags {
	u := &uiFlags{
		addr:        fs.String("ui", "", ""),
		token:       fs.String("ui-token", "", ""),
		tokenFile:   fs.String("ui-token-file", "", ""),
		allowRemote: fs.Bool("allow-remote", false, ""),
		publicHost:  fs.String("public-host", "", ""),
	}
	fs.Lookup("ui-token").Hidden = true
	return u
}

// options checks the flags and returns the live view's HTTP options; ok
// is false without --ui.
func (u *uiFlags) options(c *command) (mcpserver.HTTPOptions, bool, error) {
	if *u.token != "" {
		return mcpserver.HTTPOptions{}, false, errTokenFlag(c, "--ui-token", "put the token in a file only you can read and pass --ui-token-file FILE (or leave it out: surf makes one)")
	}
	if *u.addr == "" {
		if *u.tokenFile != "" || *u.allowRemote || *u.publicHost != "" {
			return mcpserver.HTTPOptions{}, false, usagef(c, "--ui-token-file, --allow-remote and --public-host apply to --ui only")
		}
		return mcpserver.HTTPOptions{}, false, nil
	}
	o := mcpserver.HTTPOptions{AllowRemote: *u.allowRemote, PublicHost: *u.publicHost}
	if *u.tokenFile != "" {
		tok, err := mcpserver.ReadTokenFile("--ui-token-file", *u.tokenFile)
		if err != nil {
			return o, false, err
		}
		o.Token = tok
	}
	if o.Token == "" && mcpserver.IsLoopbackBind(*u.addr) {
		o.Token = mcpserver.GenerateToken()
	}
	if err := mcpserver.CheckBind(*u.addr, o); err != nil {
		return o, false, &exitError{code: 2, err: fmt.Errorf("--ui: %w", err)}
	}
	return o, true, nil
}

// liveView is a live view served on its own address (surf run --ui,
// surf work --ui).
type liveView struct {
	hub *live.Hub
	srv *liveui.Server
}

// startLiveView serves a live view on addr and says where on stderr.
func startLiveView(ctx context.Context, cli *CLI, addr string, o mcpserver.HTTPOptions) (*liveView, error) {
	srv, err := liveui.Serve(ctx, addr, o, cli.Logger)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cli.Stderr, "surf: live view at %s\n", srv.LoginURL)
	return &liveView{hub: srv.Hub, srv: srv}, nil
}

// Close ends the sessions, the streams and the server.
func (lv *liveView) Close() {
	if lv != nil {
		lv.srv.Close()
	}
}

// loginURL is the address a person opens first (mcpserver.LoginURL).
func loginURL(addr net.Addr, o mcpserver.HTTPOptions) string { return mcpserver.LoginURL(addr, o) }

// attachLive gives a live session its surfer and sandbox session.
func attachLive(ls *live.Session, surf *websurfer.Surfer, sess *sandbox.Session) {
	if ls == nil {
		return
	}
	var denials func(func(live.Denial)) func()
	if sess != nil {
		denials = live.SandboxDenials(sess)
	}
	ls.Attach(surf, denials)
}

// tee reports progress to every non-nil reporter.
func tee(fs ...func(string)) func(string) {
	var all []func(string)
	for _, f := range fs {
		if f != nil {
			all = append(all, f)
		}
	}
	return func(msg string) {
		for _, f := range all {
			f(msg)
		}
	}
}
