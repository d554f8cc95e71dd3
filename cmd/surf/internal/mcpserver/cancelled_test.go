package mcpserver

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCancelledCallGetsNoResponse: a client that cancels a call
// (notifications/cancelled) gets no response to it. The call is to a page
// that never loads, so only the cancellation ends it; the call's event
// stream then ends without the response the handler returned.
func TestCancelledCallGetsNoResponse(t *testing.T) {
	f := serveFixture(t)
	st := serveStuck(t)
	s := stuckServer(t, f, st, nil)
	endpoint := serveHTTP(t, s, HTTPOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	session := ""
	post := func(body string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, "POST", endpoint, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`)
	session = resp.Header.Get("Mcp-Session-Id")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if session == "" {
		t.Fatalf("no session id (status %d)", resp.StatusCode)
	}
	resp = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()

	// The call's response headers come with its first event: read it in
	// the background.
	events := make(chan string, 64)
	go func() {
		defer close(events)
		stream := post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"visit_url","arguments":{"url":"` + st.URL + `"}}}`)
		defer stream.Body.Close()
		sc := bufio.NewScanner(stream.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			events <- sc.Text()
		}
	}()
	select {
	case <-st.arrived:
	case <-time.After(time.Minute):
		t.Fatal("the stuck page never started loading")
	}
	resp = post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user gave up"}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the cancellation: status %d", resp.StatusCode)
	}
	for line := range events {
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"id":7`) {
			t.Errorf("the cancelled call was answered: %s", line)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the call's stream did not end after the cancellation")
	}
	// The session goes on: the next call is answered.
	next := post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"visit_url","arguments":{"url":"` + f.URL + `/"}}}`)
	b, _ := io.ReadAll(next.Body)
	next.Body.Close()
	if !strings.Contains(string(b), `"id":8`) {
		t.Errorf("the call after the cancelled one: %s", b)
	}
}

// TestCancelledCallGetsNoResponseStdio is TestCancelledCallGetsNoResponse
// on a stream transport (what stdio is): after the cancellation, the next
// answer the client reads is to its next call, not the cancelled one.
func TestCancelledCallGetsNoResponseStdio(t *testing.T) {
	f := serveFixture(t)
	st := serveStuck(t)
	s := stuckServer(t, f, st, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	serverT, clientT := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	sctx, stop := context.WithCancel(context.Background())
	go func() { served <- s.ServeTransport(sctx, serverT) }()
	t.Cleanup(func() { stop(); <-served })
	conn, err := clientT.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(msg string) {
		t.Helper()
		m, err := jsonrpc.DecodeMessage([]byte(msg))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		m, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := jsonrpc.EncodeMessage(m)
		return string(b)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"visit_url","arguments":{"url":"` + st.URL + `"}}}`)
	select {
	case <-st.arrived:
	case <-time.After(time.Minute):
		t.Fatal("the stuck page never started loading")
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	// The session's calls run one at a time: this one's answer comes after
	// the cancelled call has ended.
	send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"visit_url","arguments":{"url":"` + f.URL + `/"}}}`)
	for {
		got := read()
		if strings.Contains(got, `"id":7`) {
			t.Fatalf("the cancelled call was answered: %s", got)
		}
		if strings.Contains(got, `"id":8`) {
			break
		}
	}
}
