package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/surfkit/surf/sandbox"
)

// The recording scripts (testdata/script/har_*.txtar) record and replay
// HAR files. Each script gets a live loopback site that counts every
// connection and request ($HAR_SITE_URL, $HAR_SITE_HOST), to show that
// replay never reaches it:
//
//	har-hits reset     forget the count
//	har-hits N         the site got exactly N connections and requests
//	har-hits some      the site got at least one
//	har-origin FILE V  set $V to the one origin the recording FILE holds
func init() {
	scriptSetups = append(scriptSetups, harSetup)
	scriptCmds["har-hits"] = cmdHARHits
	scriptCmds["har-origin"] = cmdHAROrigin
}

type harLiveSite struct{ hits atomic.Int64 }

type harKey struct{}

func harSetup(env *testscript.Env) error {
	site := &harLiveSite{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site.hits.Add(1)
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>Live site</title><h1>live page</h1><p id=n>waiting</p>
<script>fetch("/count.json").then(r => r.json()).then(j => document.getElementById("n").textContent = "count " + j.n)</script>`)
		case "/count.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"n": 42}`)
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Listener = countConns{ln, &site.hits}
	srv.Start()
	env.Defer(srv.Close)
	env.Values[harKey{}] = site
	env.Setenv("HAR_SITE_URL", srv.URL)
	env.Setenv("HAR_SITE_HOST", ln.Addr().(*net.TCPAddr).IP.String())

	return nil
}

type countConns struct {
	net.Listener
	n *atomic.Int64
}

func (l countConns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func cmdHARHits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: har-hits reset|some|N")
	}
	site := ts.Value(harKey{}).(*harLiveSite)
	got := site.hits.Load()
	switch args[0] {
	case "reset":
		site.hits.Store(0)
	case "some":
		if got == 0 {
			ts.Fatalf("the live site got no connection or request")
		}
	default:
		want, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			ts.Fatalf("usage: har-hits reset|some|N")
		}
		if got != want {
			ts.Fatalf("the live site got %d connections and requests; want %d", got, want)
		}
	}
}

func cmdHAROrigin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: har-origin FILE VAR")
	}
	info, err := sandbox.InspectHAR(ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	if len(info.Origins) != 1 {
		ts.Fatalf("%s holds origins %v; want one", args[0], info.Origins)
	}
	ts.Setenv(args[1], info.Origins[0])
}
