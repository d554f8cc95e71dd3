// Package cdpmux shares a local browser's DevTools pipe between
// Playwright's driver and surf. Playwright talks to Chromium over a pipe
// (--remote-debugging-pipe) through its node driver, which parses every
// reply and encodes it again for the Go client; for a page snapshot of a
// few megabytes that relay costs more than the capture. A Mux sits on the
// pipe itself: it passes the driver's traffic through unchanged and lets
// surf send its own commands, on its own sessions, whose replies come
// straight back to surf as raw JSON. It opens no port: the pipe's ends are
// handed to surf's process by its browser launcher.
//
// With Config.CBOR the browser's side of the pipe carries CBOR
// (--remote-debugging-pipe=cbor): the browser then passes its renderers'
// messages through instead of converting each to JSON on its UI thread,
// the thread that also encodes screenshots, and the Mux converts them
// itself (see package cdpcbor). The driver and surf still see JSON.
package cdpmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/surfkit/surf/internal/cdpcbor"
)

// Command ids are 32-bit in Chromium. Playwright numbers its own commands
// from 1 (and uses a negative id to close the browser), so surf takes the
// top half: ids from firstID to lastID are surf's.
const (
	firstID = 1 << 30
	lastID  = 1<<31 - 1
)

// ErrClosed is returned once the pipe has closed.
var ErrClosed = errors.New("cdpmux: the browser's DevTools pipe is closed")

// Error is an error the browser returned for a command.
type Error struct {
	Method  string
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s (%d)", e.Method, e.Message, e.Code)
	if e.Data != "" {
		msg += ": " + e.Data
	}
	return msg
}

// Mux relays one browser's DevTools pipe. Its zero value is not usable;
// see Start.
type Mux struct {
	toBrowser   io.WriteCloser
	toDriver    io.WriteCloser
	fromDriver  io.ReadCloser
	fromBrowser io.ReadCloser
	log         *slog.Logger
	cbor        bool

	wmu sync.Mutex // one message at a time to the browser

	next    atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan []byte
	closed  bool
	done    chan struct{}

	bmu     sync.Mutex
	browser string // surf's browser session, made by the first Attach
}

// Config configures a Mux. The zero value relays a JSON pipe.
type Config struct {
	// CBOR says the browser's pipe carries CBOR: it was started with
	// --remote-debugging-pipe=cbor.
	CBOR bool
	// Logger gets the relay's troubles; nil discards them.
	Logger *slog.Logger
}

// Start relays between the driver (fromDriver, toDriver: the pipe ends the
// browser would have had) and the browser (toBrowser, fromBrowser). It
// returns at once; the relay ends when either side closes, and Close ends
// it too.
func Start(fromDriver io.ReadCloser, toDriver io.WriteCloser, toBrowser io.WriteCloser, fromBrowser io.ReadCloser, cfg Config) *Mux {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Mux{toBrowser: toBrowser, toDriver: toDriver, fromDriver: fromDriver, fromBrowser: fromBrowser, log: log, cbor: cfg.CBOR, pending: map[int64]chan []byte{}, done: make(chan struct{})}
	m.next.Store(firstID)
	go m.driverToBrowser(fromDriver)
	if cfg.CBOR {
		go m.browserToDriverCBOR(fromBrowser)
	} else {
		go m.browserToDriver(fromBrowser)
	}
	return m
}

// driverToBrowser forwards the driver's commands whole, so that surf's
// never land inside one.
func (m *Mux) driverToBrowser(r io.ReadCloser) {
	defer r.Close()
	defer func() {
		m.wmu.Lock()
		m.toBrowser.Close()
		m.wmu.Unlock()
	}()
	buf := make([]byte, 0, 64<<10)
	var conv []byte // the CBOR of buf's messages
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if end := bytes.LastIndexByte(buf, 0); end >= 0 {
			out := buf[:end+1]
			if m.cbor {
				out = m.toCBOR(conv[:0], out)
				conv = out
			}
			m.wmu.Lock()
			_, werr := m.toBrowser.Write(out)
			m.wmu.Unlock()
			if werr != nil {
				return
			}
			buf = append(buf[:0], buf[end+1:]...)
		}
		if err != nil {
			return
		}
	}
}

// browserToDriver hands replies to surf's commands to their callers and
// passes everything else to the driver. When the browser's side ends, the
// driver's pipe is closed both ways, as the browser's exit would have
// closed it: the driver waits for that to call the browser gone.
func (m *Mux) browserToDriver(r io.ReadCloser) {
	defer r.Close()
	defer m.shut()
	defer m.fromDriver.Close()
	defer m.toDriver.Close()
	buf := make([]byte, 0, 256<<10)
	driverOK := true
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		old := len(buf) // buf[:old] holds no message end
		n, err := r.Read(buf[old:cap(buf)])
		buf = buf[:old+n]
		if bytes.IndexByte(buf[old:], 0) >= 0 {
			rest := buf
			pass := 0 // rest[:pass] goes to the driver
			for {
				i := bytes.IndexByte(rest[pass:], 0)
				if i < 0 {
					break
				}
				msg := rest[pass : pass+i]
				if id, ok := surfID(msg); ok {
					if driverOK && pass > 0 {
						driverOK = m.writeDriver(rest[:pass])
					}
					m.deliver(id, bytes.Clone(msg))
					rest = rest[pass+i+1:]
					pass = 0
					continue
				}
				pass += i + 1
			}
			if driverOK && pass > 0 {
				driverOK = m.writeDriver(rest[:pass])
			}
			buf = append(buf[:0], rest[pass:]...)
		}
		if err != nil {
			return
		}
	}
}

// toCBOR appends to dst the CBOR of the driver's NUL-terminated JSON
// messages in msgs. One it cannot convert (the driver writes none) is
// dropped.
func (m *Mux) toCBOR(dst, msgs []byte) []byte {
	for len(msgs) > 0 {
		i := bytes.IndexByte(msgs, 0)
		if i < 0 {
			i = len(msgs)
		}
		if i > 0 {
			c, err := cdpcbor.FromJSON(dst, msgs[:i])
			if err != nil {
				m.log.Warn("devtools relay: dropped a command of the driver's", "err", err, "command", fmt.Sprintf("%.200s", msgs[:i]))
			} else {
				dst = c
			}
		}
		msgs = msgs[min(i+1, len(msgs)):]
	}
	return dst
}

// maxMessage bounds a message from the browser on a CBOR pipe, whose
// length comes first: a full-page screenshot or a response body is large,
// but not this large.
const maxMessage = 1 << 30

// browserToDriverCBOR is browserToDriver for a CBOR pipe: replies to
// surf's commands go to their callers as they are, everything else to the
// driver as JSON. A stream that is not CBOR ends the relay, as the
// browser's end would: nothing after it can be read.
func (m *Mux) browserToDriverCBOR(r io.ReadCloser) {
	defer r.Close()
	defer m.shut()
	defer m.fromDriver.Close()
	defer m.toDriver.Close()
	buf := make([]byte, 0, 256<<10)
	var out []byte // JSON for the driver
	driverOK := true
	for {
		if need := cdpcbor.Size(buf); need > maxMessage {
			m.log.Error("devtools relay: the browser sent a message too large to take", "bytes", need)
			return
		} else if need > cap(buf) {
			buf = append(make([]byte, 0, need), buf...)
		} else if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		rest := buf
		out = out[:0]
		for {
			size, ferr := cdpcbor.MessageLen(rest)
			if ferr != nil {
				m.log.Error("devtools relay: the browser's pipe carries something other than CBOR", "err", ferr)
				if driverOK && len(out) > 0 {
					m.writeDriver(out)
				}
				return
			}
			if size == 0 {
				break
			}
			msg := rest[:size]
			rest = rest[size:]
			if id, ok := cdpcbor.ID(msg); ok && id >= firstID && id <= lastID {
				m.deliver(id, bytes.Clone(msg))
				continue
			}
			if !driverOK {
				continue
			}
			js, cerr := cdpcbor.ToJSON(out, msg)
			if cerr != nil {
				m.log.Warn("devtools relay: dropped a message the driver could not have read", "err", cerr)
				continue
			}
			out = append(js, 0)
		}
		if driverOK && len(out) > 0 {
			driverOK = m.writeDriver(out)
		}
		if len(rest) != len(buf) {
			buf = append(buf[:0], rest...)
		}
		if err != nil {
			return
		}
	}
}

func (m *Mux) writeDriver(b []byte) bool {
	if _, err := m.toDriver.Write(b); err != nil {
		m.log.Debug("devtools relay: the driver's pipe closed", "err", err)
		return false
	}
	return true
}

// surfID returns the id of a reply to one of surf's commands. Chromium
// writes a reply's id first.
func surfID(msg []byte) (int64, bool) {
	const prefix = `{"id":`
	if !bytes.HasPrefix(msg, []byte(prefix)) {
		return 0, false
	}
	rest := msg[len(prefix):]
	n := 0
	for n < len(rest) && n < 11 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	if err != nil || id < firstID || id > lastID {
		return 0, false
	}
	return id, true
}

func (m *Mux) deliver(id int64, msg []byte) {
	m.mu.Lock()
	ch := m.pending[id]
	delete(m.pending, id)
	m.mu.Unlock()
	if ch != nil {
		ch <- msg
	}
}

// shut fails every waiting call: the browser is gone.
func (m *Mux) shut() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.closed = true
		close(m.done)
	}
}

// Close ends the relay: waiting and later calls fail with ErrClosed, and
// both pipes are closed (the driver sees the browser gone). Call it once
// the browser is closed.
func (m *Mux) Close() {
	m.shut()
	m.fromDriver.Close()
	m.toDriver.Close()
	m.fromBrowser.Close()
	m.wmu.Lock()
	m.toBrowser.Close()
	m.wmu.Unlock()
}

// Call sends a command on a session ("" for the browser itself) and
// returns its result as raw JSON. A context that ends first abandons the
// reply.
func (m *Mux) Call(ctx context.Context, session, method string, params any) ([]byte, error) {
	r, err := m.Send(ctx, session, method, params)
	if err != nil {
		return nil, err
	}
	return r.Wait(ctx)
}

// Reply is a command sent to the browser whose reply is still to come.
type Reply struct {
	m      *Mux
	id     int64
	method string
	ch     chan []byte
}

// Send sends a command on a session ("" for the browser itself) and
// returns once it is written to the browser's pipe, without waiting for
// the reply: commands sent one after another reach the browser in that
// order, and a renderer runs those of one session in the order they
// came. Wait for the reply with Reply.Wait; one never waited for is
// dropped as it comes.
func (m *Mux) Send(ctx context.Context, session, method string, params any) (*Reply, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := m.next.Add(1)
	if id > lastID {
		m.next.CompareAndSwap(id, firstID)
		id = m.next.Add(1)
	}
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.WriteString(strconv.FormatInt(id, 10))
	b.WriteString(`,"method":`)
	mj, _ := jsonv2.Marshal(method)
	b.Write(mj)
	if session != "" {
		b.WriteString(`,"sessionId":`)
		sj, _ := jsonv2.Marshal(session)
		b.Write(sj)
	}
	if params != nil {
		pj, err := jsonv2.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", method, err)
		}
		b.WriteString(`,"params":`)
		b.Write(pj)
	}
	b.WriteString("}\x00")
	msg := b.Bytes()
	if m.cbor {
		c, err := cdpcbor.FromJSON(nil, msg[:len(msg)-1])
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", method, err)
		}
		msg = c
	}

	r := &Reply{m: m, id: id, method: method, ch: make(chan []byte, 1)}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	m.pending[id] = r.ch
	m.mu.Unlock()

	m.wmu.Lock()
	_, err := m.toBrowser.Write(msg)
	m.wmu.Unlock()
	if err != nil {
		r.forget()
		return nil, fmt.Errorf("%s: %w (%v)", method, ErrClosed, err)
	}
	return r, nil
}

// Wait returns the command's result as raw JSON. A context that ends
// first abandons the reply; Wait must not be called again after it
// returned.
func (r *Reply) Wait(ctx context.Context) ([]byte, error) {
	res, _, err := r.wait(ctx, false)
	return res, err
}

// WaitCBOR is Wait for a caller that also reads CBOR: on a CBOR pipe it
// returns the result as the browser wrote it, with cbor true, and nothing
// is converted; on a JSON pipe, and for an error, it is Wait.
func (r *Reply) WaitCBOR(ctx context.Context) (res []byte, cbor bool, err error) {
	return r.wait(ctx, true)
}

func (r *Reply) wait(ctx context.Context, takeCBOR bool) ([]byte, bool, error) {
	msg, err := r.receive(ctx)
	if err != nil {
		return nil, false, err
	}
	if r.m.cbor {
		if takeCBOR {
			if res, ok := cdpcbor.Result(msg); ok {
				return res, true, nil
			}
		}
		js, err := cdpcbor.ToJSON(nil, msg)
		if err != nil {
			return nil, false, fmt.Errorf("%s: decoding the reply: %w", r.method, err)
		}
		msg = js
	}
	res, err := result(r.method, msg)
	return res, false, err
}

// receive waits for the reply's message.
func (r *Reply) receive(ctx context.Context) ([]byte, error) {
	select {
	case msg := <-r.ch:
		return msg, nil
	case <-ctx.Done():
		r.forget()
		return nil, fmt.Errorf("%s: %w", r.method, ctx.Err())
	case <-r.m.done:
		r.forget()
		return nil, fmt.Errorf("%s: %w", r.method, ErrClosed)
	}
}

func (r *Reply) forget() {
	r.m.mu.Lock()
	delete(r.m.pending, r.id)
	r.m.mu.Unlock()
}

// result takes the result out of a reply: without a second parse when it
// has the shape Chromium writes ({"id":N,"result":R} or
// {"id":N,"result":R,"sessionId":"S"}), with one otherwise.
func result(method string, msg []byte) ([]byte, error) {
	i := bytes.IndexByte(msg, ',')
	if i > 0 && bytes.HasPrefix(msg[i:], []byte(`,"result":`)) && bytes.HasSuffix(msg, []byte("}")) {
		r := msg[i+len(`,"result":`) : len(msg)-1]
		if bytes.HasSuffix(r, []byte(`"`)) {
			// A top-level string last: the session id.
			if j := bytes.LastIndex(r, []byte(`,"sessionId":"`)); j >= 0 {
				r = r[:j]
			}
		}
		if len(r) > 1 && r[0] == '{' && r[len(r)-1] == '}' {
			return r, nil
		}
	}
	var env struct {
		Result jsonv2.Value `json:"result"`
		Error  *Error       `json:"error"`
	}
	if err := jsonv2.Unmarshal(msg, &env); err != nil {
		return nil, fmt.Errorf("%s: decoding the reply: %w", method, err)
	}
	if env.Error != nil {
		env.Error.Method = method
		return nil, env.Error
	}
	if env.Result == nil {
		return nil, fmt.Errorf("%s: the reply has no result", method)
	}
	return env.Result, nil
}

// Session is a DevTools session of surf's own on one target.
type Session struct {
	m  *Mux
	id string
}

// Call sends a command on the session and returns its result as raw JSON.
func (s *Session) Call(ctx context.Context, method string, params any) ([]byte, error) {
	return s.m.Call(ctx, s.id, method, params)
}

// Send sends a command on the session without waiting for its reply (see
// Mux.Send).
func (s *Session) Send(ctx context.Context, method string, params any) (*Reply, error) {
	return s.m.Send(ctx, s.id, method, params)
}

// ID is the session's DevTools id.
func (s *Session) ID() string { return s.id }

// Attach opens a session on a target (a page, or an out-of-process
// frame). Surf's sessions hang off a browser session of its own, so that
// their attach and detach events never reach Playwright's.
func (m *Mux) Attach(ctx context.Context, targetID string) (*Session, error) {
	if targetID == "" {
		return nil, errors.New("cdpmux: no target id")
	}
	browser, err := m.browserSession(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := m.Call(ctx, browser, "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		return nil, err
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := jsonv2.Unmarshal(raw, &res); err != nil || res.SessionID == "" {
		return nil, fmt.Errorf("Target.attachToTarget: no session id in %.200s", raw)
	}
	return &Session{m: m, id: res.SessionID}, nil
}

func (m *Mux) browserSession(ctx context.Context) (string, error) {
	m.bmu.Lock()
	defer m.bmu.Unlock()
	if m.browser != "" {
		return m.browser, nil
	}
	raw, err := m.Call(ctx, "", "Target.attachToBrowserTarget", nil)
	if err != nil {
		return "", err
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := jsonv2.Unmarshal(raw, &res); err != nil || res.SessionID == "" {
		return "", fmt.Errorf("Target.attachToBrowserTarget: no session id in %.200s", raw)
	}
	m.browser = res.SessionID
	return m.browser, nil
}
