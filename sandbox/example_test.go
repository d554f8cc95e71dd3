package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

// A session reports what its policy stopped. Here the page's image on
// 127.0.0.2 is refused by the request gate before the browser sends
// anything.
func ExampleSession_TakeDenials() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>hello</title><img src="http://127.0.0.2:9/pixel.png">`)
	}))
	defer srv.Close()

	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Config{
		Env:    sandbox.EnvFrom(os.Getenv),
		Policy: policy.MustNew(policy.Config{Allow: []policy.HostRule{{Host: "127.0.0.1"}}}),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	sess, err := sb.NewSession(ctx, sandbox.SessionConfig{})
	if err != nil {
		log.Fatal(err)
	}
	page, err := sess.NewPage(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := page.Goto(srv.URL); err != nil {
		log.Fatal(err)
	}
	for _, d := range sess.TakeDenials() {
		fmt.Println(d.Layer, d.Host, d.Decision.Rule)
	}
	// Output: request 127.0.0.2 private-networks
}

// A program that launches a local browser calls RunLauncher first in its
// main: surf starts the browser through the program's own binary, which
// then runs the launcher inside RunLauncher instead of the program. Without
// the call, New refuses with ErrNoLauncher.
func ExampleRunLauncher() {
	sandbox.RunLauncher() // first; returns at once in the program itself

	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Config{Env: sandbox.EnvFrom(os.Getenv)})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	// ... sb.NewSession(ctx, sandbox.SessionConfig{}) ...
}

// A session with a state file starts with the cookies the file holds and
// saves them when it closes, so a later session (of this program or
// another) is still logged in. Here the first session logs in; the
// second, over the same sandbox and file, is let in at once.
func ExampleStateFile() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s3cret", Path: "/", MaxAge: 3600})
			fmt.Fprint(w, `<title>Welcome</title>`)
			return
		}
		if c, err := r.Cookie("sid"); err == nil && c.Value == "s3cret" {
			fmt.Fprint(w, `<title>Signed in</title>`)
			return
		}
		fmt.Fprint(w, `<title>Signed out</title>`)
	}))
	defer srv.Close()
	dir, err := os.MkdirTemp("", "state")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	state := sandbox.StateFile{Path: filepath.Join(dir, "login.json")}

	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Config{
		Env:    sandbox.EnvFrom(os.Getenv),
		Policy: policy.MustNew(policy.Config{Allow: []policy.HostRule{{Host: "127.0.0.1"}}}),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	title := func(path string) string {
		sess, err := sb.NewSession(ctx, sandbox.SessionConfig{State: state})
		if err != nil {
			log.Fatal(err)
		}
		defer sess.Close() // saves the state file
		page, err := sess.NewPage(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := page.Goto(srv.URL + path); err != nil {
			log.Fatal(err)
		}
		t, _ := page.Title()
		return t
	}
	fmt.Println(title("/"))
	fmt.Println(title("/login"))
	fmt.Println(title("/")) // a new session, loaded from the file
	// Output:
	// Signed out
	// Welcome
	// Signed in
}
