package mcpserver

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// closeTracker is a writer that records whether it was closed.
type closeTracker struct {
	io.Writer
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

// TestServeIO: a client on a pair of pipes lists the tools and calls one
// through ServeIO; when the client goes away the server returns, having
// closed its reader and not its writer (a program's stdout stays open).
func TestServeIO(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inR, inW := io.Pipe()   // client -> server
	outR, outW := io.Pipe() // server -> client
	w := &closeTracker{Writer: outW}
	done := make(chan error, 1)
	go func() { done <- s.ServeIO(ctx, inR, w) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := cs.ListTools(ctx, nil)
	if err != nil || len(tl.Tools) == 0 {
		t.Fatalf("tools/list over ServeIO: %v %v", tl, err)
	}
	mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
	inW.Close() // the client goes away
	select {
	case err := <-done:
		if err != nil && err != io.EOF {
			t.Logf("ServeIO ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeIO did not return after its client went away")
	}
	if w.closed {
		t.Error("ServeIO closed its writer")
	}
	if _, err := inR.Read(make([]byte, 1)); err != io.ErrClosedPipe {
		t.Errorf("ServeIO left its reader open: a read gives %v", err)
	}
	cs.Close()
}
