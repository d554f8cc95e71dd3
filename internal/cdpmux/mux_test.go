package cdpmux

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/surfkit/surf/internal/cdpcbor"
)

// rig is a Mux between a scripted driver and a scripted browser, over
// in-memory pipes (the real ones are OS pipes from the launcher).
type rig struct {
	m *Mux
	// driverW writes what the driver sends; toDriver has what it gets,
	// read as it comes (the real pipe has a buffer), and is closed at EOF.
	driverW  io.WriteCloser
	toDriver chan string
	// browserR reads what the browser gets; browserW writes its output.
	browserR *bufio.Reader
	browserW io.WriteCloser
}

// bothModes runs a test against a browser pipe of JSON and one of CBOR.
func bothModes(t *testing.T, test func(t *testing.T, cbor bool)) {
	t.Run("json", func(t *testing.T) { test(t, false) })
	t.Run("cbor", func(t *testing.T) { test(t, true) })
}

// newRig starts a Mux on in-memory pipes. With cbor, the browser's side of
// the pipe carries CBOR, as Chromium's --remote-debugging-pipe=cbor, and
// the rig converts it so that the scripted browser reads and writes JSON.
func newRig(t *testing.T, cbor bool) *rig {
	t.Helper()
	dIn, dW := io.Pipe()  // driver -> mux
	dR, dOut := io.Pipe() // mux -> driver
	bR, bIn := io.Pipe()  // mux -> browser
	bOut, bW := io.Pipe() // browser -> mux
	if cbor {
		bR, bOut = cborBrowser(t, bR, bOut)
	}
	r := &rig{
		m:       Start(dIn, dOut, bIn, bOut, Config{CBOR: cbor}),
		driverW: dW, toDriver: make(chan string, 100),
		browserR: bufio.NewReader(bR), browserW: bW,
	}
	go func() {
		defer close(r.toDriver)
		br := bufio.NewReader(dR)
		for {
			s, err := br.ReadString(0)
			if err != nil {
				return
			}
			r.toDriver <- strings.TrimSuffix(s, "\x00")
		}
	}()
	t.Cleanup(func() {
		dW.Close()
		bW.Close()
		dR.Close()
		bR.Close()
	})
	return r
}

// cborBrowser puts converters between the mux and a scripted browser:
// what the mux writes as CBOR to fromMux the browser reads as JSON from
// the returned reader, and what the browser writes as JSON to the returned
// writer reaches the mux as CBOR.
func cborBrowser(t *testing.T, fromMux *io.PipeReader, toMux *io.PipeReader) (*io.PipeReader, *io.PipeReader) {
	jsR, jsW := io.Pipe() // to the scripted browser, as JSON
	go func() {
		defer jsW.Close()
		var buf []byte
		chunk := make([]byte, 32<<10)
		for {
			n, err := fromMux.Read(chunk)
			buf = append(buf, chunk[:n]...)
			for {
				size, ferr := cdpcbor.MessageLen(buf)
				if ferr != nil {
					t.Errorf("the browser got a message that is not CBOR: %v", ferr)
					return
				}
				if size == 0 {
					break
				}
				js, cerr := cdpcbor.ToJSON(nil, buf[:size])
				if cerr != nil {
					t.Errorf("the browser got bad CBOR: %v", cerr)
					return
				}
				buf = buf[size:]
				if _, err := jsW.Write(append(js, 0)); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	cbR, cbW := io.Pipe() // to the mux, as CBOR
	go func() {
		defer cbW.Close()
		br := bufio.NewReader(toMux)
		for {
			s, err := br.ReadBytes(0)
			if len(s) > 1 {
				c, cerr := cdpcbor.FromJSON(nil, bytes.TrimSuffix(s, []byte{0}))
				if cerr != nil {
					t.Errorf("the scripted browser wrote bad JSON %.80q: %v", s, cerr)
					return
				}
				if _, err := cbW.Write(c); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return jsR, cbR
}

// driverGot is the driver's next message.
func (r *rig) driverGot(t *testing.T) string {
	t.Helper()
	select {
	case s, ok := <-r.toDriver:
		if !ok {
			t.Fatal("the driver's pipe closed")
		}
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the driver got no message within 10s")
		return ""
	}
}

// next reads one NUL-terminated message.
func next(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	type res struct {
		s   string
		err error
	}
	c := make(chan res, 1)
	go func() {
		s, err := r.ReadString(0)
		c <- res{strings.TrimSuffix(s, "\x00"), err}
	}()
	select {
	case got := <-c:
		if got.err != nil {
			t.Fatalf("reading a message: %v", got.err)
		}
		return got.s
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10s")
		return ""
	}
}

func write(t *testing.T, w io.Writer, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		if _, err := io.WriteString(w, m+"\x00"); err != nil {
			if !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("writing %.80q: %v", m, err)
			}
			return
		}
	}
}

func TestDriverTrafficPassesUnchanged(t *testing.T) { bothModes(t, testDriverTrafficPassesUnchanged) }

func testDriverTrafficPassesUnchanged(t *testing.T, cbor bool) {
	r := newRig(t, cbor)
	cmds := []string{`{"id":1,"method":"Browser.getVersion"}`, `{"id":2,"method":"Target.setAutoAttach","params":{"autoAttach":true}}`}
	go write(t, r.driverW, cmds...)
	for _, want := range cmds {
		if got := next(t, r.browserR); got != want {
			t.Fatalf("browser got %q, want %q", got, want)
		}
	}
	big := `{"id":1,"result":{"product":"` + strings.Repeat("x", 3<<20) + `"}}`
	replies := []string{big, `{"method":"Target.attachedToTarget","params":{"sessionId":"A"}}`, `{"id":-9999,"result":{}}`, `{"id":2,"result":{},"sessionId":"A"}`}
	go write(t, r.browserW, replies...)
	for _, want := range replies {
		if got := r.driverGot(t); got != want {
			t.Fatalf("driver got %.80q (%d bytes), want %.80q (%d bytes)", got, len(got), want, len(want))
		}
	}
}

// fakeBrowser answers surf's commands by the given function, passing
// the sessionId back as Chromium does.
func fakeBrowser(t *testing.T, r *rig, answer func(id int64, method, session string, params jsonv2.Value) string) {
	go func() {
		for {
			s, err := r.browserR.ReadString(0)
			if err != nil {
				return
			}
			var cmd struct {
				ID        int64        `json:"id"`
				Method    string       `json:"method"`
				SessionID string       `json:"sessionId"`
				Params    jsonv2.Value `json:"params"`
			}
			if err := jsonv2.Unmarshal([]byte(strings.TrimSuffix(s, "\x00")), &cmd); err != nil {
				t.Errorf("the browser got a bad command %q: %v", s, err)
				return
			}
			if cmd.ID < 1000 {
				continue // the driver's
			}
			reply := answer(cmd.ID, cmd.Method, cmd.SessionID, cmd.Params)
			if reply == "" {
				continue
			}
			if _, err := io.WriteString(r.browserW, reply+"\x00"); err != nil {
				return
			}
		}
	}()
}

func TestCallGetsItsReplyAndTheDriverDoesNot(t *testing.T) {
	bothModes(t, testCallGetsItsReplyAndTheDriverDoesNot)
}

func testCallGetsItsReplyAndTheDriverDoesNot(t *testing.T, cbor bool) {
	r := newRig(t, cbor)
	fakeBrowser(t, r, func(id int64, method, session string, params jsonv2.Value) string {
		switch method {
		case "Target.attachToBrowserTarget":
			return fmt.Sprintf(`{"id":%d,"result":{"sessionId":"B"}}`, id)
		case "Target.attachToTarget":
			if session != "B" || !bytes.Contains(params, []byte(`"targetId":"T1"`)) || !bytes.Contains(params, []byte(`"flatten":true`)) {
				return fmt.Sprintf(`{"id":%d,"error":{"code":-32602,"message":"bad attach %s %s"}}`, id, session, params)
			}
			// An event of surf's browser session comes first, as in
			// Chromium: it goes to the driver, which ignores sessions it
			// does not know.
			io.WriteString(r.browserW, `{"method":"Target.attachedToTarget","params":{"sessionId":"S1"},"sessionId":"B"}`+"\x00")
			return fmt.Sprintf(`{"id":%d,"result":{"sessionId":"S1"},"sessionId":"B"}`, id)
		case "DOMSnapshot.captureSnapshot":
			if session != "S1" {
				return fmt.Sprintf(`{"id":%d,"error":{"code":-32001,"message":"Session with given id not found."}}`, id)
			}
			return fmt.Sprintf(`{"id":%d,"result":{"documents":[],"strings":["a\"sessionId\":\"x"]},"sessionId":"S1"}`, id)
		case "Page.bad":
			return fmt.Sprintf(`{"id":%d,"error":{"code":-32601,"message":"'Page.bad' wasn't found"},"sessionId":"S1"}`, id)
		}
		return ""
	})
	ctx := context.Background()
	s, err := r.m.Attach(ctx, "T1")
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "S1" {
		t.Fatalf("session %q, want S1", s.ID())
	}
	if got := r.driverGot(t); !strings.Contains(got, `"Target.attachedToTarget"`) {
		t.Fatalf("the driver got %q, want only the event", got)
	}
	raw, err := s.Call(ctx, "DOMSnapshot.captureSnapshot", map[string]any{"computedStyles": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"documents":[],"strings":["a\"sessionId\":\"x"]}`; string(raw) != want {
		t.Fatalf("result %s, want %s", raw, want)
	}
	_, err = s.Call(ctx, "Page.bad", nil)
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != -32601 || ce.Method != "Page.bad" {
		t.Fatalf("error %v (%T), want the browser's error for Page.bad", err, err)
	}
	// Nothing of surf's reached the driver: its next message is this one.
	go write(t, r.browserW, `{"id":7,"result":{}}`)
	if got := r.driverGot(t); got != `{"id":7,"result":{}}` {
		t.Fatalf("the driver got %q", got)
	}
}

// Commands sent without waiting reach the browser in the order sent, and
// each reply goes to its own command whatever order the replies come in.
func TestSendKeepsOrderAndMatchesReplies(t *testing.T) {
	bothModes(t, testSendKeepsOrderAndMatchesReplies)
}

func testSendKeepsOrderAndMatchesReplies(t *testing.T, cbor bool) {
	r := newRig(t, cbor)
	ctx := context.Background()
	type sent struct {
		rep *Reply
		err error
	}
	sends := make(chan sent, 3)
	go func() {
		for _, m := range []string{"Page.getFrameTree", "Runtime.evaluate", "DOMSnapshot.captureSnapshot"} {
			rep, err := r.m.Send(ctx, "S", m, nil)
			sends <- sent{rep, err}
		}
	}()
	var ids []int64
	for _, want := range []string{"Page.getFrameTree", "Runtime.evaluate", "DOMSnapshot.captureSnapshot"} {
		msg := next(t, r.browserR)
		var cmd struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		if err := jsonv2.Unmarshal([]byte(msg), &cmd); err != nil {
			t.Fatal(err)
		}
		if cmd.Method != want {
			t.Fatalf("the browser got %s, want %s next", cmd.Method, want)
		}
		ids = append(ids, cmd.ID)
	}
	var reps []*Reply
	for range 3 {
		s := <-sends
		if s.err != nil {
			t.Fatal(s.err)
		}
		reps = append(reps, s.rep)
	}
	// The replies come last first.
	go write(t, r.browserW,
		fmt.Sprintf(`{"id":%d,"result":{"n":3},"sessionId":"S"}`, ids[2]),
		fmt.Sprintf(`{"id":%d,"error":{"code":-32000,"message":"Cannot find context with specified id"},"sessionId":"S"}`, ids[1]),
		fmt.Sprintf(`{"id":%d,"result":{"n":1},"sessionId":"S"}`, ids[0]))
	if raw, err := reps[0].Wait(ctx); err != nil || string(raw) != `{"n":1}` {
		t.Fatalf("first reply %s, %v", raw, err)
	}
	var ce *Error
	if _, err := reps[1].Wait(ctx); !errors.As(err, &ce) || ce.Method != "Runtime.evaluate" {
		t.Fatalf("second reply: %v, want the browser's error for Runtime.evaluate", err)
	}
	if raw, err := reps[2].Wait(ctx); err != nil || string(raw) != `{"n":3}` {
		t.Fatalf("third reply %s, %v", raw, err)
	}
	// A reply nobody waits for is dropped, not handed to the driver, and
	// forgotten.
	go func() {
		if _, err := r.m.Send(ctx, "S", "Page.getLayoutMetrics", nil); err != nil {
			t.Error(err)
		}
	}()
	var cmd struct {
		ID int64 `json:"id"`
	}
	if err := jsonv2.Unmarshal([]byte(next(t, r.browserR)), &cmd); err != nil {
		t.Fatal(err)
	}
	go write(t, r.browserW, fmt.Sprintf(`{"id":%d,"result":{}}`, cmd.ID), `{"id":3,"result":{}}`)
	if got := r.driverGot(t); got != `{"id":3,"result":{}}` {
		t.Fatalf("the driver got %q", got)
	}
	r.m.mu.Lock()
	left := len(r.m.pending)
	r.m.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d replies still awaited", left)
	}
}

func TestCallGivesUpWithItsContext(t *testing.T) { bothModes(t, testCallGivesUpWithItsContext) }

func testCallGivesUpWithItsContext(t *testing.T, cbor bool) {
	r := newRig(t, cbor)
	ids := make(chan int64, 1)
	fakeBrowser(t, r, func(id int64, method, session string, params jsonv2.Value) string {
		ids <- id
		return "" // no answer yet
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.m.Call(ctx, "S", "Page.getLayoutMetrics", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
	// The late reply is dropped, not handed to the driver.
	id := <-ids
	go write(t, r.browserW, fmt.Sprintf(`{"id":%d,"result":{}}`, id), `{"id":3,"result":{}}`)
	if got := r.driverGot(t); got != `{"id":3,"result":{}}` {
		t.Fatalf("the driver got %q", got)
	}
}

func TestBrowserGoneFailsCalls(t *testing.T) { bothModes(t, testBrowserGoneFailsCalls) }

func testBrowserGoneFailsCalls(t *testing.T, cbor bool) {
	r := newRig(t, cbor)
	got := make(chan error, 1)
	go func() {
		_, err := r.m.Call(context.Background(), "S", "Page.getLayoutMetrics", nil)
		got <- err
	}()
	next(t, r.browserR) // the command arrived
	r.browserW.Close()
	select {
	case err := <-got:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end when the browser went")
	}
	select {
	case s, ok := <-r.toDriver:
		if ok {
			t.Fatalf("the driver got %q, want its pipe closed", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the driver's pipe stayed open")
	}
	// The driver's command pipe is closed too, as the browser's exit
	// would close it: the driver waits for that.
	if _, err := io.WriteString(r.driverW, `{"id":5,"method":"Browser.close"}`+"\x00"); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("writing to the driver's command pipe: %v, want it closed", err)
	}
	if _, err := r.m.Call(context.Background(), "S", "Page.getLayoutMetrics", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("a later call: %v, want ErrClosed", err)
	}
}

func TestDriverClosingClosesTheBrowserPipe(t *testing.T) {
	bothModes(t, testDriverClosingClosesTheBrowserPipe)
}

func testDriverClosingClosesTheBrowserPipe(t *testing.T, cbor bool) {
	r := newRig(t, cbor)
	r.driverW.Close()
	if _, err := r.browserR.ReadByte(); err != io.EOF {
		t.Fatalf("the browser's pipe: %v, want EOF", err)
	}
}

func TestSurfID(t *testing.T) {
	for msg, want := range map[string]int64{
		`{"id":1073741825,"result":{}}`:             1073741825,
		`{"id":2147483647,"error":{}}`:              2147483647,
		`{"id":1073741823,"result":{}}`:             0, // the driver's range
		`{"id":12,"result":{}}`:                     0,
		`{"id":-9999,"result":{}}`:                  0,
		`{"id":21474836470,"result":{}}`:            0, // out of range
		`{"method":"X","params":{"id":1073741825}}`: 0,
		`{"id":`: 0,
		``:       0,
	} {
		got, ok := surfID([]byte(msg))
		if ok != (want != 0) || got != want {
			t.Errorf("surfID(%q) = %d, %v; want %d", msg, got, ok, want)
		}
	}
}

// FuzzResult checks that a result cut out of a reply without parsing it
// is the result a full parse reads, or else not JSON at all (which the
// caller's decoding then rejects): never another valid value.
func FuzzResult(f *testing.F) {
	f.Add(`{"id":1073741825,"result":{"a":1}}`)
	f.Add(`{"id":1073741825,"result":{"a":"\"sessionId\":\"b"},"sessionId":"S"}`)
	f.Add(`{"id":1073741825,"error":{"code":1,"message":"m"}}`)
	f.Add(`{"id":1073741825,"result":{"s":"x\"}"}}`)
	f.Add(`{"id":1073741825,"result":{"a":1},"x":{"b":2}}`)
	f.Fuzz(func(t *testing.T, msg string) {
		raw, err := result("M", []byte(msg))
		var env struct {
			Result jsonv2.Value `json:"result"`
			Error  *Error       `json:"error"`
		}
		if jsonv2.Unmarshal([]byte(msg), &env) != nil {
			return // not JSON: no reply Chromium would write
		}
		if err != nil {
			if env.Error == nil && env.Result != nil {
				t.Fatalf("result(%q): %v, want %s", msg, err, env.Result)
			}
			return
		}
		var got, want any
		if jsonv2.Unmarshal(raw, &got) != nil {
			return // rejected downstream
		}
		if env.Result == nil || jsonv2.Unmarshal(env.Result, &want) != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("result(%q) = %s, want %s (error %v)", msg, raw, env.Result, env.Error)
		}
	})
}

// A browser pipe that carries something other than CBOR, or a message
// longer than any the relay takes, ends the relay as the browser's exit
// would: calls fail, the driver's pipe closes.
func TestCBORPipeWithGarbageEndsTheRelay(t *testing.T) {
	for name, garbage := range map[string][]byte{
		"json":      []byte(`{"id":1073741825,"result":{}}` + "\x00"),
		"too large": {0xd8, 0x18, 0x5a, 0xff, 0xff, 0xff, 0xff, 0xbf},
	} {
		t.Run(name, func(t *testing.T) {
			dIn, dW := io.Pipe()
			dR, dOut := io.Pipe()
			bR, bIn := io.Pipe()
			bOut, bW := io.Pipe()
			m := Start(dIn, dOut, bIn, bOut, Config{CBOR: true})
			defer func() { dW.Close(); bW.Close(); dR.Close(); bR.Close() }()
			go io.Copy(io.Discard, bR)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := m.Call(ctx, "", "Browser.getVersion", nil)
				errc <- err
			}()
			if _, err := bW.Write(garbage); err != nil {
				t.Fatal(err)
			}
			if err := <-errc; !errors.Is(err, ErrClosed) {
				t.Errorf("the call got %v, want ErrClosed", err)
			}
			if _, err := io.ReadAll(dR); err != nil {
				t.Errorf("the driver's pipe: %v", err)
			}
		})
	}
}
