package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/board"
)

// boardFlags are how commands (board, work, serve --board, bench board)
// find the task board: the embedded server over a data directory by
// default, or a NATS server or cluster.
type boardFlags struct {
	data     string
	nats     string
	creds    string
	tls      tlsFlags
	replicas int
}

// tlsFlags are the files of a NATS connection's TLS and nkey: paths on
// the command line (or in the environment), never what is in them.
type tlsFlags struct{ ca, cert, key, nkey string }

// boardFlagNames are the flags that say where the board is and how to
// reach it.
var boardFlagNames = []string{"data", "nats", "creds", "tls-ca", "tls-cert", "tls-key", "nkey"}

func addBoardFlags(fs *pflag.FlagSet) *boardFlags {
	f := &boardFlags{}
	fs.StringVar(&f.data, "data", "", "")
	fs.StringVar(&f.nats, "nats", "", "")
	fs.StringVar(&f.creds, "creds", "", "")
	fs.StringVar(&f.tls.ca, "tls-ca", "", "")
	fs.StringVar(&f.tls.cert, "tls-cert", "", "")
	fs.StringVar(&f.tls.key, "tls-key", "", "")
	fs.StringVar(&f.tls.nkey, "nkey", "", "")
	fs.IntVar(&f.replicas, "replicas", 0, "")
	return f
}

// config is the board.Config the flags (and the environment) describe.
func (f *boardFlags) config(cli *CLI) (board.Config, error) {
	cfg := board.Config{
		Dir: f.data, URL: f.nats, Creds: f.creds, Replicas: f.replicas, Logger: cli.Logger,
		TLSCA: f.tls.ca, TLSCert: f.tls.cert, TLSKey: f.tls.key, NKeySeed: f.tls.nkey, TracerProvider: cli.Tracer,
	}
	if f.replicas < 0 || f.replicas > 5 {
		return cfg, &exitError{code: 2, err: fmt.Errorf("--replicas must be 1 to 5")}
	}
	if urlHasSecret(f.nats) {
		fmt.Fprintln(cli.Stderr, "surf: warning: the user or password in --nats shows in ps to every user of this machine; put the URL in $SURF_NATS_URL, or use --creds or --nkey")
	}
	if cfg.Dir == "" {
		cfg.Dir = cli.Getenv("SURF_BOARD_DIR")
	}
	if cfg.URL == "" {
		cfg.URL = cli.Getenv("SURF_NATS_URL")
	}
	for _, v := range []struct {
		dst *string
		env string
	}{{&cfg.Creds, "SURF_NATS_CREDS"}, {&cfg.TLSCA, "SURF_NATS_TLS_CA"}, {&cfg.TLSCert, "SURF_NATS_TLS_CERT"}, {&cfg.TLSKey, "SURF_NATS_TLS_KEY"}, {&cfg.NKeySeed, "SURF_NATS_NKEY"}} {
		if *v.dst == "" {
			*v.dst = cli.Getenv(v.env)
		}
	}
	if (cfg.Creds != "" || cfg.TLSCA != "" || cfg.TLSCert != "" || cfg.TLSKey != "" || cfg.NKeySeed != "") && cfg.URL == "" {
		return cfg, &exitError{code: 2, err: fmt.Errorf("--creds, --tls-ca, --tls-cert, --tls-key and --nkey are for a NATS server named with --nats")}
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return cfg, &exitError{code: 2, err: fmt.Errorf("--tls-cert and --tls-key go together")}
	}
	if cfg.URL != "" && f.data != "" {
		return cfg, &exitError{code: 2, err: fmt.Errorf("--data is for the embedded server; with --nats the board lives on that server")}
	}
	if cfg.Dir == "" && cfg.URL == "" {
		d, err := board.DefaultDir()
		if err != nil {
			return cfg, err
		}
		cfg.Dir = d
	}
	if cfg.Creds != "" {
		if _, err := os.Stat(cfg.Creds); err != nil {
			return cfg, fmt.Errorf("--creds: %v", err)
		}
	}
	return cfg, nil
}

// open opens the board the flags describe.
func (f *boardFlags) open(ctx context.Context, cli *CLI, mutate func(*board.Config)) (*board.Board, error) {
	cfg, err := f.config(cli)
	if err != nil {
		return nil, err
	}
	if mutate != nil {
		mutate(&cfg)
	}
	b, err := board.Open(ctx, cfg)
	if err != nil {
		where := cfg.Dir
		if cfg.URL != "" {
			where = board.RedactURL(cfg.URL)
		}
		hint := "the board lives at " + where + "; check --data or --nats"
		if cfg.URL != "" {
			hint += " (and --creds, --tls-ca, --tls-cert, --tls-key, --nkey)"
		}
		return nil, withHint(fmt.Errorf("opening the board: %w", err), hint)
	}
	return b, nil
}

// urlHasSecret reports whether one of the NATS URLs u (comma-separated)
// carries a user, token or password.
func urlHasSecret(u string) bool {
	for _, p := range strings.Split(u, ",") {
		if pu, err := url.Parse(strings.TrimSpace(p)); err == nil && pu.User != nil {
			return true
		}
	}
	return false
}
