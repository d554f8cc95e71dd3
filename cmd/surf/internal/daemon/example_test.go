package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/surfkit/surf/cmd/surf/internal/daemon"
)

// A daemon serves requests on its session's socket; a client dials it and
// calls.
func Example() {
	dir, _ := os.MkdirTemp("", "dmn")
	defer os.RemoveAll(dir)
	if err := daemon.EnsureDir(dir); err != nil {
		fmt.Println(err)
		return
	}
	p, _ := daemon.PathsFor(dir, "default")

	stop := make(chan struct{})
	srv, err := daemon.Listen(daemon.Config{
		Socket: p.Socket,
		Stop:   stop,
		Handler: daemon.HandlerFunc(func(ctx context.Context, req daemon.Request) daemon.Response {
			if req.Tool == "close" {
				close(stop)
				return daemon.Response{OK: true, Text: "closed"}
			}
			return daemon.Response{OK: true, Text: "did " + req.Tool}
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error)
	go func() { done <- srv.Serve(context.Background()) }()

	c, err := daemon.Dial(context.Background(), p.Socket)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for _, tool := range []string{"observe", "close"} {
		resp, err := c.Call(context.Background(), daemon.Request{Tool: tool})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(resp.Text)
	}
	fmt.Println(<-done, srv.Reason())
	_, err = os.Stat(filepath.Join(dir, "default.sock"))
	fmt.Println("socket removed:", os.IsNotExist(err))
	// Output:
	// did observe
	// closed
	// <nil> stopped
	// socket removed: true
}
