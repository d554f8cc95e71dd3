package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

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
