package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"filippo.io/age"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/sandbox"
)

// Saved logins on the board: a person seals a storage state (as surf
// login saves it) to the age recipients of the workers that may use it
// (SealState) and stores it with board.Board.PutState; a task names it
// (board.Task.SavedState); a worker with an identity that opens it
// (Config.StateIdentity) starts the task's session with it, filtered by
// the task's policy, and never writes it back.

// ErrNoStateIdentity is the error of a task that names a saved state on
// a worker that has no identity to decrypt it with.
var ErrNoStateIdentity = errors.New("this worker has no age identity to decrypt saved states with")

// ErrStateNotForWorker is the error of a task whose saved state is not
// encrypted to the worker's identity.
var ErrStateNotForWorker = errors.New("the saved state is not encrypted to this worker's identity")

// ParseRecipients parses age public keys (age1..., as age-keygen and
// KeyGen print them), one a string, or lines of a recipients file.
func ParseRecipients(keys ...string) ([]age.Recipient, error) {
	var out []age.Recipient
	for _, k := range keys {
		rs, err := age.ParseRecipients(strings.NewReader(k))
		if err != nil {
			msg := err.Error()
			if !strings.Contains(strings.TrimSpace(k), "\n") {
				msg = strings.TrimPrefix(msg, "error at line 1: ") // one key, not a file
			}
			return nil, fmt.Errorf("age recipient: %s (a public key is age1...)", msg)
		}
		out = append(out, rs...)
	}
	if len(out) == 0 {
		return nil, errors.New("no age recipient: a saved state on the board is encrypted to the workers' public keys")
	}
	return out, nil
}

// SealState encrypts st with age to recipients, for board.Board.PutState,
// and describes it (counts, hosts and the recipients' public keys,
// never a value).
func SealState(name string, st *sandbox.StorageState, recipients []age.Recipient) ([]byte, board.StateInfo, error) {
	info := board.StateInfo{Name: name}
	if err := board.CheckStateName(name); err != nil {
		return nil, info, err
	}
	if st == nil {
		return nil, info, errors.New("no state to seal")
	}
	for _, r := range recipients {
		s, ok := r.(fmt.Stringer)
		if !ok {
			return nil, info, fmt.Errorf("an age recipient of type %T has no public key to name it by", r)
		}
		info.Recipients = append(info.Recipients, s.String())
	}
	if len(info.Recipients) == 0 {
		return nil, info, errors.New("no age recipient to encrypt the state to")
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, info, err
	}
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, recipients...)
	if err != nil {
		return nil, info, fmt.Errorf("encrypting the state: %w", err)
	}
	if _, err := w.Write(raw); err != nil {
		return nil, info, fmt.Errorf("encrypting the state: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, info, fmt.Errorf("encrypting the state: %w", err)
	}
	info.Cookies, info.Origins = len(st.Cookies), len(st.Origins)
	for _, c := range st.Cookies {
		info.Hosts = append(info.Hosts, strings.TrimPrefix(c.Domain, "."))
	}
	for _, o := range st.Origins {
		info.Hosts = append(info.Hosts, o.Origin)
	}
	slices.Sort(info.Hosts)
	info.Hosts = slices.Compact(info.Hosts)
	return buf.Bytes(), info, nil
}

// KeyGen writes a new age X25519 identity to path (mode 0600, in
// age-keygen's format; an existing file is not replaced) and returns its
// public key, the recipient to seal states to.
func KeyGen(path string) (string, error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", err
	}
	pub := id.Recipient().String()
	text := fmt.Sprintf("# created: %s\n# public key: %s\n%s\n", time.Now().UTC().Format(time.RFC3339), pub, id.String())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", err
	}
	return pub, nil
}

// checkIdentity reads an age identity file: a worker with one that does
// not parse does not start.
func checkIdentity(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the state identity: %w", err)
	}
	if _, err := age.ParseIdentities(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("the state identity %s: %v", path, err)
	}
	return nil
}

// savedState fetches the task's saved state from the board into the run's
// directory, still encrypted, checks that the worker's identity opens it
// and gives the session's read-only state file. A state that cannot be
// used fails the task (another attempt would not do better); the board
// not answering is worth another attempt.
func (tr *taskRun) savedState(ctx context.Context) (sandbox.StateFile, error) {
	r, name := tr.r, tr.c.Task.SavedState
	if r.o.StateIdentity == "" {
		return sandbox.StateFile{}, fmt.Errorf("the task starts from the saved state %q: %w", name, ErrNoStateIdentity)
	}
	data, info, err := tr.c.SavedState(ctx)
	if errors.Is(err, board.ErrNoState) {
		return sandbox.StateFile{}, fmt.Errorf("the task starts from the saved state %q: the board no longer holds it", name)
	}
	if err != nil {
		return sandbox.StateFile{}, r.retryable(ctx, fmt.Errorf("the saved state %q: %w", name, err))
	}
	path := filepath.Join(tr.dir, "state.age")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return sandbox.StateFile{}, board.Retry(fmt.Errorf("the saved state %q: %w", name, err))
	}
	sf := sandbox.StateFile{Path: path, IdentityFile: r.o.StateIdentity, ReadOnly: true}
	if _, _, err := sandbox.ReadState(sf); err != nil {
		if errors.Is(err, sandbox.ErrStateKey) {
			return sandbox.StateFile{}, fmt.Errorf("the task starts from the saved state %q: %w (it is encrypted to %s)", name, ErrStateNotForWorker, strings.Join(info.Recipients, ", "))
		}
		return sandbox.StateFile{}, fmt.Errorf("the saved state %q: %w", name, err)
	}
	return sf, nil
}
