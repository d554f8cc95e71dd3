package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"

	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/sandbox"
)

// A server on stdio, as "surf serve" runs it: one browser, one isolated
// context per MCP session.
func Example() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Config{Env: sandbox.EnvFrom(os.Getenv)})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	srv, err := mcpserver.New(ctx, mcpserver.Config{Sandbox: sb})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := srv.ServeStdio(ctx); err != nil {
		log.Fatal(err)
	}
}

// Streamable HTTP: check the address, listen, serve.
func ExampleServer_Serve() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Config{Env: sandbox.EnvFrom(os.Getenv)})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	srv, err := mcpserver.New(ctx, mcpserver.Config{Sandbox: sb, MaxSessions: 4})
	if err != nil {
		log.Fatal(err)
	}
	// A token, on loopback too: every local user can reach the port.
	opts := mcpserver.HTTPOptions{Token: mcpserver.GenerateToken()}
	fmt.Fprintf(os.Stderr, "send Authorization: Bearer %s\n", opts.Token)
	if err := mcpserver.CheckBind(mcpserver.DefaultHTTPAddr, opts); err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", mcpserver.DefaultHTTPAddr)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(srv.Serve(ctx, ln, opts))
}

func ExampleCheckBind() {
	fmt.Println(mcpserver.CheckBind("127.0.0.1:8931", mcpserver.HTTPOptions{Token: mcpserver.GenerateToken()}))
	err := mcpserver.CheckBind("127.0.0.1:8931", mcpserver.HTTPOptions{})
	fmt.Println(errors.Is(err, mcpserver.ErrNoToken))
	err = mcpserver.CheckBind("0.0.0.0:8931", mcpserver.HTTPOptions{})
	fmt.Println(errors.Is(err, mcpserver.ErrRemoteBind))
	err = mcpserver.CheckBind("0.0.0.0:8931", mcpserver.HTTPOptions{
		AllowRemote: true, Token: "8b1e0c0f5d7a4e2f9c3b6a1d", PublicHost: "surf.internal",
	})
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// true
	// <nil>
}

func ExampleParseImageMode() {
	for _, s := range []string{"som", "plain", "none", "jpeg"} {
		m, err := mcpserver.ParseImageMode(s)
		fmt.Println(m, err)
	}
	// Output:
	// som <nil>
	// plain <nil>
	// none <nil>
	// som image mode must be som, plain or none, not "jpeg"
}
