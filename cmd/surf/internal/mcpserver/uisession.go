package mcpserver

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"strconv"
	"sync"
	"time"
)

// The live view's sessions. A browser logs in once with the token
// (?token=); what it keeps is a session of its own, never the token:
// browsers send a host's cookies to every port of it, so any other web
// server the person opens on the same host receives the cookie. A UI
// session opens this server's UI and nothing else (not HTTPPath), and
// expires.

// UISessionTTL is how long a live-view login lasts.
const UISessionTTL = 12 * time.Hour

// maxUISessions bounds the sessions a server keeps; the oldest go first.
const maxUISessions = 64

// UICookiePrefix starts the name of the live view's session cookie; the
// rest is the server's port (or a random id), so that two servers on one
// host keep their logins apart.
const UICookiePrefix = "surf_ui_"

// uiSessions are the live view's logins. It is safe for concurrent use.
type uiSessions struct {
	name string // the cookie's name
	ttl  time.Duration
	now  func() time.Time

	mu sync.Mutex
	m  map[[32]byte]time.Time // SHA-256 of a session value → its expiry
}

func newUISessions(listen string) *uiSessions {
	return &uiSessions{name: uiCookieName(listen), ttl: UISessionTTL, now: time.Now, m: map[[32]byte]time.Time{}}
}

// uiCookieName is the cookie name of a server listening on listen.
func uiCookieName(listen string) string {
	if _, port, err := net.SplitHostPort(listen); err == nil {
		if n, err := strconv.Atoi(port); err == nil && n > 0 {
			return UICookiePrefix + port
		}
	}
	b := make([]byte, 6)
	rand.Read(b)
	return UICookiePrefix + hex.EncodeToString(b)
}

// issue starts a session and returns its value.
func (u *uiSessions) issue() string {
	b := make([]byte, 32)
	rand.Read(b)
	v := hex.EncodeToString(b)
	now := u.now()
	u.mu.Lock()
	defer u.mu.Unlock()
	for k, exp := range u.m {
		if !now.Before(exp) {
			delete(u.m, k)
		}
	}
	for len(u.m) >= maxUISessions {
		var oldest [32]byte
		var first time.Time
		for k, exp := range u.m {
			if first.IsZero() || exp.Before(first) {
				oldest, first = k, exp
			}
		}
		delete(u.m, oldest)
	}
	u.m[sha256.Sum256([]byte(v))] = now.Add(u.ttl)
	return v
}

// valid reports whether v is a session that has not expired. (Looked up
// by its hash, so the lookup's timing tells nothing of a value.)
func (u *uiSessions) valid(v string) bool {
	if len(v) != 64 {
		return false
	}
	h := sha256.Sum256([]byte(v))
	u.mu.Lock()
	defer u.mu.Unlock()
	exp, ok := u.m[h]
	if ok && !u.now().Before(exp) {
		delete(u.m, h)
		return false
	}
	return ok
}
