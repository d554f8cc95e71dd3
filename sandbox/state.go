package sandbox

import (
	"context"
	"errors"
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

// StateLoaded reports what the session loaded from its state file at open
// (the zero value when it has none).
func (s *Session) StateLoaded() StateSummary { return s.stateLoaded }

// SaveState writes the session's cookies and local storage to its state
// file now. It is an error for a session without a StateFile, or a
// read-only one.
func (s *Session) SaveState(ctx context.Context) (StateSummary, error) {
	return StateSummary{}, errors.New("sandbox: SaveState is not implemented yet")
}
