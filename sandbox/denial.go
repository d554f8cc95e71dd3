package sandbox

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/surfkit/surf/policy"
)

// The layers that report denials, in Denial.Layer.
const (
	// LayerAction: the action gate (websurfer) refused a tool call or the
	// URL it would visit, and recorded it with RecordDenial.
	LayerAction = "action"
	// LayerRequest: the request gate refused a request or navigation
	// before the browser sent it.
	LayerRequest = "request"
	// LayerRedirect: the request gate refused a redirect hop before the
	// browser followed it.
	LayerRedirect = "redirect"
	// LayerProxy: the egress proxy refused a connection or request.
	LayerProxy = "proxy"
	// LayerReplay: a session replaying a recording (SessionConfig.ReplayHAR)
	// found no answer for a request in it and refused it; the reason reads
	// "not in recording: URL" (Decision.Rule is RuleReplay).
	LayerReplay = "replay"
)

// Denial is one thing the policy stopped: a request, a redirect hop, a
// connection or an action. URLs and reasons are redacted with the
// session's policy, so secrets never appear in them.
type Denial struct {
	Time time.Time `json:"time"`
	// Layer is the layer that stopped it: LayerRequest, LayerRedirect,
	// LayerProxy, LayerReplay or LayerAction.
	Layer string `json:"layer"`
	// Kind is what the URL was judged for.
	Kind policy.Kind `json:"kind"`
	// URL is what was denied; for the proxy's CONNECT it is host:port.
	URL string `json:"url"`
	// Host is the URL's host (for the proxy, the host it was asked for).
	Host string `json:"host"`
	// Decision is the policy's answer, with URL and Reason redacted.
	Decision policy.Decision `json:"decision"`
	// Navigation is true for a document navigation (page, frame, popup,
	// redirect hop of one) as opposed to a subresource.
	Navigation bool `json:"navigation"`
}

// MarshalJSON writes Kind as "navigation" or "request".
func (d Denial) MarshalJSON() ([]byte, error) {
	type plain Denial
	return json.Marshal(struct {
		plain
		Kind string `json:"kind"`
	}{plain(d), d.Kind.String()})
}

// maxDenials bounds a session's buffer of denials not yet taken; older
// ones are dropped first and counted.
const maxDenials = 256

// denialLog is a bounded buffer of denials plus a hook.
type denialLog struct {
	pol     *policy.Policy // for redaction
	hook    func(Denial)
	mu      sync.Mutex
	buf     []Denial
	dropped int
	// subs are the subscribers of Session.OnDenial, by id.
	subs  map[int]func(Denial)
	subID int
}

// subscribe adds f to the subscribers until the returned stop is called.
func (l *denialLog) subscribe(f func(Denial)) func() {
	if f == nil {
		return func() {}
	}
	l.mu.Lock()
	if l.subs == nil {
		l.subs = map[int]func(Denial){}
	}
	l.subID++
	id := l.subID
	l.subs[id] = f
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.subs, id)
			l.mu.Unlock()
		})
	}
}

func (l *denialLog) add(d Denial) Denial {
	if d.Time.IsZero() {
		d.Time = time.Now()
	}
	d.URL = l.pol.Redact(d.URL)
	d.Decision.URL = l.pol.Redact(d.Decision.URL)
	d.Decision.Reason = l.pol.Redact(d.Decision.Reason)
	l.mu.Lock()
	if len(l.buf) >= maxDenials {
		copy(l.buf, l.buf[1:])
		l.buf = l.buf[:len(l.buf)-1]
		l.dropped++
	}
	l.buf = append(l.buf, d)
	subs := make([]func(Denial), 0, len(l.subs))
	for _, f := range l.subs {
		subs = append(subs, f)
	}
	l.mu.Unlock()
	if l.hook != nil {
		l.hook(d)
	}
	for _, f := range subs {
		f(d)
	}
	return d
}

func (l *denialLog) take() ([]Denial, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out, dropped := l.buf, l.dropped
	l.buf, l.dropped = nil, 0
	return out, dropped
}
