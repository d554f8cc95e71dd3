package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/surfkit/surf/internal/bounded"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// Saved identity. A session with a StateFile starts with the cookies and
// local storage the file holds and writes them back when it closes (and on
// SaveState), in Playwright's storage-state JSON, so files interoperate
// with Playwright's storageState. Only what the session's policy allows
// crosses the file boundary either way: a cookie or an origin for a host
// the policy denies is neither loaded nor saved. Files are written
// atomically with mode 0600 and, given a key, encrypted with age
// (filippo.io/age). Nothing here ever hands cookie values to the model.

// StateFile is where a session keeps its identity. The zero value keeps
// none: the session starts empty and forgets everything at close.
type StateFile struct {
	// Path is the storage-state file. A missing file is not an error: the
	// session starts empty and Close creates it.
	Path string
	// Passphrase encrypts the file with age's scrypt recipient, and
	// decrypts it.
	Passphrase string
	// IdentityFile is an age identity file (as age-keygen writes it): the
	// file is encrypted to its recipients and decrypted with it. It
	// excludes Passphrase.
	IdentityFile string
	// ReadOnly loads the file but never writes it.
	ReadOnly bool
}

// ErrStateEncrypted is the error of reading an age-encrypted state file
// without a key.
var ErrStateEncrypted = errors.New("the state file is encrypted")

// ErrStateKey is the error of reading an encrypted state file with a key
// that does not open it.
var ErrStateKey = errors.New("the state file cannot be decrypted with this key")

// StateSummary counts what crossed a state file's boundary. It never holds
// a cookie value.
type StateSummary struct {
	// Path is the state file.
	Path string `json:"path"`
	// Cookies and Origins are the cookies and local-storage origins loaded
	// or saved.
	Cookies int `json:"cookies"`
	Origins int `json:"origins"`
	// DroppedCookies and DroppedOrigins are those left out because the
	// policy denies their host.
	DroppedCookies int `json:"dropped_cookies,omitempty"`
	DroppedOrigins int `json:"dropped_origins,omitempty"`
	// Encrypted says the file is age-encrypted.
	Encrypted bool `json:"encrypted,omitempty"`
}

// StorageState is the content of a state file: Playwright's storage state.
type StorageState = playwright.StorageState

// maxStateBytes bounds a state file.
const maxStateBytes = 64 << 20

// stateSaveTimeout bounds reading the context's storage at Close.
const stateSaveTimeout = 15 * time.Second

// age's binary and armored headers.
var (
	ageHeader   = []byte("age-encryption.org/v1")
	armorHeader = []byte("-----BEGIN AGE ENCRYPTED FILE-----")
)

// check validates the key settings.
func (f StateFile) check() error {
	if f.Path == "" && (f.Passphrase != "" || f.IdentityFile != "") {
		return errors.New("a state file key was given without a state file")
	}
	if f.Passphrase != "" && f.IdentityFile != "" {
		return errors.New("a state file takes a passphrase or an identity file, not both")
	}
	return nil
}

// encrypted reports whether the file has a key to encrypt with.
func (f StateFile) encrypted() bool { return f.Passphrase != "" || f.IdentityFile != "" }

// identities are the age identities that open the file.
func (f StateFile) identities() ([]age.Identity, error) {
	switch {
	case f.Passphrase != "":
		id, err := age.NewScryptIdentity(f.Passphrase)
		if err != nil {
			return nil, fmt.Errorf("the state passphrase: %w", err)
		}
		return []age.Identity{id}, nil
	case f.IdentityFile != "":
		b, err := os.ReadFile(f.IdentityFile)
		if err != nil {
			return nil, fmt.Errorf("reading the age identity file: %w", err)
		}
		ids, err := age.ParseIdentities(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("the age identity file %s: %w", f.IdentityFile, err)
		}
		return ids, nil
	}
	return nil, nil
}

// recipients are the age recipients the file is encrypted to.
func (f StateFile) recipients() ([]age.Recipient, error) {
	if f.Passphrase != "" {
		r, err := age.NewScryptRecipient(f.Passphrase)
		if err != nil {
			return nil, fmt.Errorf("the state passphrase: %w", err)
		}
		return []age.Recipient{r}, nil
	}
	ids, err := f.identities()
	if err != nil {
		return nil, err
	}
	var out []age.Recipient
	for _, id := range ids {
		switch id := id.(type) {
		case *age.X25519Identity:
			out = append(out, id.Recipient())
		case *age.HybridIdentity:
			out = append(out, id.Recipient())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the age identity file %s holds no X25519 or hybrid identity to encrypt to", f.IdentityFile)
	}
	return out, nil
}

// ReadState reads a state file with its key. A missing file gives
// fs.ErrNotExist. The content is not filtered: see Session for that.
// Errors never quote the file's content (its values are secrets).
func ReadState(f StateFile) (*StorageState, bool, error) {
	if err := f.check(); err != nil {
		return nil, false, err
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return nil, false, err
	}
	defer fh.Close()
	raw, err := io.ReadAll(io.LimitReader(fh, maxStateBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("reading state file %s: %w", f.Path, err)
	}
	if len(raw) > maxStateBytes {
		return nil, false, fmt.Errorf("state file %s is over %d MB", f.Path, maxStateBytes>>20)
	}
	enc := bytes.HasPrefix(raw, ageHeader) || bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), armorHeader)
	if enc {
		raw, err = f.decrypt(raw)
		if err != nil {
			return nil, true, err
		}
	}
	st, err := ParseState(raw)
	if err != nil {
		return nil, enc, fmt.Errorf("state file %s: %w", f.Path, err)
	}
	return st, enc, nil
}

func (f StateFile) decrypt(raw []byte) ([]byte, error) {
	if !f.encrypted() {
		return nil, fmt.Errorf("%w with age: %s needs its key, a passphrase or an age identity file", ErrStateEncrypted, f.Path)
	}
	ids, err := f.identities()
	if err != nil {
		return nil, err
	}
	var src io.Reader = bytes.NewReader(raw)
	if !bytes.HasPrefix(raw, ageHeader) {
		src = armor.NewReader(bytes.NewReader(bytes.TrimLeft(raw, " \t\r\n")))
	}
	r, err := age.Decrypt(src, ids...)
	if err != nil {
		var nomatch *age.NoIdentityMatchError
		if errors.As(err, &nomatch) || errors.Is(err, age.ErrIncorrectIdentity) {
			return nil, fmt.Errorf("%w: %s (a wrong passphrase or identity file)", ErrStateKey, f.Path)
		}
		return nil, fmt.Errorf("decrypting state file %s: %w", f.Path, err)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxStateBytes+1))
	if err != nil {
		return nil, fmt.Errorf("decrypting state file %s: %w", f.Path, err)
	}
	if len(out) > maxStateBytes {
		return nil, fmt.Errorf("state file %s is over %d MB", f.Path, maxStateBytes>>20)
	}
	return out, nil
}

// ParseState parses Playwright's storage-state JSON. Its errors never quote
// the input.
func ParseState(raw []byte) (*StorageState, error) {
	var st StorageState
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&st); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("not storage-state JSON: a syntax error at byte %d", se.Offset)
		case errors.As(err, &te):
			return nil, fmt.Errorf("not storage-state JSON: %s holds a %s where a %s belongs", te.Field, te.Value, te.Type)
		}
		return nil, errors.New("not storage-state JSON")
	}
	if dec.More() {
		return nil, errors.New("not storage-state JSON: more than one value")
	}
	for i, c := range st.Cookies {
		if c.Name == "" && c.Value == "" {
			return nil, fmt.Errorf("cookie %d has no name", i)
		}
		if c.Domain == "" {
			return nil, fmt.Errorf("cookie %d (%s) has no domain", i, cookieLabel(c.Name))
		}
	}
	for i, o := range st.Origins {
		if o.Origin == "" {
			return nil, fmt.Errorf("origin %d has no URL", i)
		}
	}
	return &st, nil
}

// cookieLabel is a cookie's name as errors may show it.
func cookieLabel(name string) string {
	if len(name) > 40 {
		name = name[:40] + "..."
	}
	return fmt.Sprintf("%q", name)
}

// FilterState keeps what pol allows: cookies the browser could send to a
// host it allows (policy.DecideCookie; an Ask verdict counts, since the
// cookie is sent only once the visit is approved) and origins it may
// navigate to. It counts the rest.
func FilterState(st *StorageState, pol *policy.Policy) (*StorageState, StateSummary) {
	var sum StateSummary
	out := &StorageState{Cookies: []playwright.Cookie{}, Origins: []playwright.Origin{}}
	if st == nil {
		return out, sum
	}
	for _, c := range st.Cookies {
		if d := pol.DecideCookie(c.Domain); d.Verdict == policy.Deny {
			sum.DroppedCookies++
			continue
		}
		out.Cookies = append(out.Cookies, c)
	}
	for _, o := range st.Origins {
		if !originAllowed(pol, o.Origin) {
			sum.DroppedOrigins++
			continue
		}
		out.Origins = append(out.Origins, o)
	}
	sum.Cookies, sum.Origins = len(out.Cookies), len(out.Origins)
	return out, sum
}

// originAllowed reports whether an origin (scheme://host[:port]) is one
// pol lets the session visit.
func originAllowed(pol *policy.Policy, origin string) bool {
	if !strings.HasPrefix(origin, "http://") && !strings.HasPrefix(origin, "https://") {
		return false
	}
	u, err := policy.ParseURL(origin, nil)
	if err != nil || u.Origin().String() != strings.TrimSuffix(origin, "/") {
		return false
	}
	return pol.Decide(policy.Navigation, u).Verdict != policy.Deny
}

// WriteState writes st to f's path atomically (a temp file in the same
// directory, synced, renamed over it) with mode 0600, encrypted when f has
// a key.
func WriteState(f StateFile, st *StorageState) error {
	if err := f.check(); err != nil {
		return err
	}
	if f.Path == "" {
		return errors.New("no state file")
	}
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if f.encrypted() {
		rs, err := f.recipients()
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		w, err := age.Encrypt(&buf, rs...)
		if err != nil {
			return fmt.Errorf("encrypting the state: %w", err)
		}
		if _, err := w.Write(raw); err != nil {
			return fmt.Errorf("encrypting the state: %w", err)
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("encrypting the state: %w", err)
		}
		raw = buf.Bytes()
	} else {
		raw = append(raw, '\n')
	}
	dir := filepath.Dir(f.Path)
	tmp, err := os.CreateTemp(dir, ".surf-state-*")
	if err != nil {
		return fmt.Errorf("writing state file %s: %w", f.Path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("writing state file %s: %w", f.Path, err)
	}
	w := bufio.NewWriter(tmp)
	_, err = w.Write(raw)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.Path)
	}
	if err != nil {
		return fmt.Errorf("writing state file %s: %w", f.Path, err)
	}
	return nil
}

// loadState reads the session's state file and filters it by the policy:
// what Playwright's NewContext gets. A missing file gives nil.
func (s *Session) loadState() (*playwright.OptionalStorageState, error) {
	f := s.state
	if f.Path == "" {
		return nil, nil
	}
	st, enc, err := ReadState(f)
	if errors.Is(err, fs.ErrNotExist) {
		s.stateLoaded = StateSummary{Path: f.Path, Encrypted: f.encrypted()}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	kept, sum := FilterState(st, s.pol)
	sum.Path, sum.Encrypted = f.Path, enc
	s.stateLoaded = sum
	s.log.Info("state loaded", "file", f.Path, "cookies", sum.Cookies, "origins", sum.Origins,
		"dropped_cookies", sum.DroppedCookies, "dropped_origins", sum.DroppedOrigins)
	opt := &playwright.OptionalStorageState{Cookies: make([]playwright.OptionalCookie, 0, len(kept.Cookies)), Origins: kept.Origins}
	for _, c := range kept.Cookies {
		opt.Cookies = append(opt.Cookies, playwright.OptionalCookie{
			Name: c.Name, Value: c.Value, Domain: playwright.String(c.Domain), Path: playwright.String(c.Path),
			Expires: playwright.Float(c.Expires), HttpOnly: playwright.Bool(c.HttpOnly), Secure: playwright.Bool(c.Secure),
			SameSite: c.SameSite,
		})
	}
	return opt, nil
}

// StateLoaded reports what the session loaded from its state file at open
// (the zero value when it has none).
func (s *Session) StateLoaded() StateSummary { return s.stateLoaded }

// SaveState writes the session's cookies and local storage to its state
// file now. It is an error for a session without a StateFile, or a
// read-only one.
func (s *Session) SaveState(ctx context.Context) (StateSummary, error) {
	if err := ctx.Err(); err != nil {
		return StateSummary{}, err
	}
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.saveState(ctx)
}

// saveState is SaveState under stateMu.
func (s *Session) saveState(ctx context.Context) (StateSummary, error) {
	f := s.state
	switch {
	case f.Path == "":
		return StateSummary{}, errors.New("this session has no state file")
	case f.ReadOnly:
		return StateSummary{}, fmt.Errorf("the state file %s is read-only for this session", f.Path)
	}
	var st *StorageState
	wait := stateSaveTimeout
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl))
	}
	err := bounded.Call(wait, func() error {
		var err error
		st, err = s.bctx.StorageState()
		return err
	})
	if err != nil {
		return StateSummary{}, fmt.Errorf("reading the session's cookies and storage: %w", cleanPlaywrightError(err))
	}
	kept, sum := FilterState(st, s.pol)
	sum.Path, sum.Encrypted = f.Path, f.encrypted()
	if err := WriteState(f, kept); err != nil {
		return StateSummary{}, err
	}
	s.log.Info("state saved", "file", f.Path, "cookies", sum.Cookies, "origins", sum.Origins,
		"dropped_cookies", sum.DroppedCookies, "dropped_origins", sum.DroppedOrigins)
	return sum, nil
}

// DetachState makes the session forget its state file: Close then leaves
// the file as it is.
func (s *Session) DetachState() {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	s.state = StateFile{}
}

// saveAtClose saves the state before the context closes, when the session
// keeps one and its browser is still there.
func (s *Session) saveAtClose() error {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	if s.state.Path == "" || s.state.ReadOnly {
		return nil
	}
	if b := s.sb.browser; b != nil && !b.IsConnected() {
		return fmt.Errorf("the state file %s was not saved: the browser has gone away", s.state.Path)
	}
	_, err := s.saveState(context.Background())
	return err
}
