package board

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Saved logins. A task may start signed in: it names a saved state
// (Task.SavedState), which the board keeps in an object store of its own
// (StatesBucket), encrypted with age to the recipients of the workers
// that may use it. The board never holds one in clear: PutState refuses
// what is not age-encrypted, and a task record holds only the state's
// name. The worker decrypts it with its identity (see package worker).

// StatesBucket is the object store of the board's saved states.
const StatesBucket = "surf_states"

// maxStateBytes bounds a stored state's ciphertext.
const maxStateBytes = 64 << 20

// ErrNoState is returned for a saved state the board does not hold.
var ErrNoState = errors.New("no such saved state")

// StateInfo describes a saved state on the board; it never holds a value
// of the state, only counts, hosts and the public keys it is encrypted
// to.
type StateInfo struct {
	Name string `json:"name"`
	// Size is the ciphertext's size in bytes.
	Size int64 `json:"size"`
	// Recipients are the age public keys (age1...) whose identities open
	// it.
	Recipients []string `json:"recipients"`
	// Cookies and Origins count what it holds; Hosts are their domains
	// and origins.
	Cookies int      `json:"cookies"`
	Origins int      `json:"origins"`
	Hosts   []string `json:"hosts,omitempty"`
	// Put is when it was stored.
	Put time.Time `json:"put"`
}

var stateNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// CheckStateName refuses names that are not usable as a saved state's:
// letters, digits, '-' and '_', at most 64, starting with a letter or a
// digit.
func CheckStateName(name string) error {
	if len(name) > maxTaskIDLen || !stateNamePattern.MatchString(name) {
		return fmt.Errorf("saved state name %q: use letters, digits, '-' and '_' (at most %d, starting with a letter or digit)", cut(name, 80), maxTaskIDLen)
	}
	return nil
}

// age's binary and armored headers: what PutState accepts.
var (
	ageHeader   = []byte("age-encryption.org/v1\n")
	armorHeader = []byte("-----BEGIN AGE ENCRYPTED FILE-----")
)

// IsAgeEncrypted reports whether data starts like an age file (binary or
// armored).
func IsAgeEncrypted(data []byte) bool {
	return bytes.HasPrefix(data, ageHeader) || bytes.HasPrefix(data, armorHeader)
}

// PutState stores ciphertext, an age-encrypted storage state, as the
// saved state info.Name, replacing one of that name. Ciphertext that is
// not age-encrypted is refused: the board never holds a login in clear.
// info.Recipients must name the public keys it is encrypted to.
func (b *Board) PutState(ctx context.Context, info StateInfo, ciphertext []byte) error {
	if err := CheckStateName(info.Name); err != nil {
		return err
	}
	if !IsAgeEncrypted(ciphertext) {
		return errors.New("a saved state is stored encrypted with age, and this is not")
	}
	if len(ciphertext) > maxStateBytes {
		return fmt.Errorf("saved state %s is over %d MB", info.Name, maxStateBytes>>20)
	}
	if len(info.Recipients) == 0 {
		return fmt.Errorf("saved state %s: no recipients", info.Name)
	}
	for _, r := range info.Recipients {
		if !strings.HasPrefix(r, "age1") || strings.ContainsAny(r, ", \t\n") {
			return fmt.Errorf("saved state %s: %q is not an age public key", info.Name, cut(r, 80))
		}
	}
	meta := map[string]string{
		"recipients": strings.Join(info.Recipients, ","),
		"cookies":    strconv.Itoa(info.Cookies),
		"origins":    strconv.Itoa(info.Origins),
		"hosts":      strings.Join(info.Hosts, ","),
	}
	return retry(ctx, func(ctx context.Context) error {
		st, err := b.stateStore(ctx, true)
		if err != nil {
			return err
		}
		_, err = st.Put(ctx, jetstream.ObjectMeta{Name: info.Name, Description: "surf saved state (age)", Metadata: meta}, bytes.NewReader(ciphertext))
		return err
	})
}

// State returns the ciphertext of the saved state name, and what it is.
func (b *Board) State(ctx context.Context, name string) ([]byte, StateInfo, error) {
	if err := CheckStateName(name); err != nil {
		return nil, StateInfo{}, err
	}
	var data []byte
	var info StateInfo
	err := retry(ctx, func(ctx context.Context) error {
		st, err := b.stateStore(ctx, false)
		if errors.Is(err, ErrNoState) {
			return permanent(fmt.Errorf("%w: %s", ErrNoState, name))
		}
		if err != nil {
			return err
		}
		r, err := st.Get(ctx, name)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return permanent(fmt.Errorf("%w: %s", ErrNoState, name))
		}
		if err != nil {
			return err
		}
		defer r.Close()
		oi, err := r.Info()
		if err != nil {
			return err
		}
		data, err = io.ReadAll(io.LimitReader(r, maxStateBytes+1))
		if err != nil {
			return err
		}
		if len(data) > maxStateBytes {
			return permanent(fmt.Errorf("saved state %s is over %d MB", name, maxStateBytes>>20))
		}
		info = stateInfo(oi)
		return nil
	})
	return data, info, err
}

// HasState reports, without error, whether the board holds the saved
// state name; it errs only when the board cannot be asked.
func (b *Board) HasState(ctx context.Context, name string) (bool, error) {
	if err := CheckStateName(name); err != nil {
		return false, err
	}
	var ok bool
	err := retry(ctx, func(ctx context.Context) error {
		st, err := b.stateStore(ctx, false)
		if errors.Is(err, ErrNoState) {
			ok = false
			return nil
		}
		if err != nil {
			return err
		}
		_, err = st.GetInfo(ctx, name)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			ok = false
			return nil
		}
		ok = err == nil
		return err
	})
	return ok, err
}

// States lists the saved states, by name.
func (b *Board) States(ctx context.Context) ([]StateInfo, error) {
	var out []StateInfo
	err := retry(ctx, func(ctx context.Context) error {
		out = out[:0]
		st, err := b.stateStore(ctx, false)
		if errors.Is(err, ErrNoState) {
			return nil
		}
		if err != nil {
			return err
		}
		list, err := st.List(ctx)
		if errors.Is(err, jetstream.ErrNoObjectsFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, oi := range list {
			out = append(out, stateInfo(oi))
		}
		return nil
	})
	slices.SortFunc(out, func(a, b StateInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

// RemoveState deletes the saved state name. Tasks that name it and have
// not run yet then fail when they run.
func (b *Board) RemoveState(ctx context.Context, name string) error {
	if err := CheckStateName(name); err != nil {
		return err
	}
	return retry(ctx, func(ctx context.Context) error {
		st, err := b.stateStore(ctx, false)
		if errors.Is(err, ErrNoState) {
			return permanent(fmt.Errorf("%w: %s", ErrNoState, name))
		}
		if err != nil {
			return err
		}
		if _, err := st.GetInfo(ctx, name); errors.Is(err, jetstream.ErrObjectNotFound) {
			return permanent(fmt.Errorf("%w: %s", ErrNoState, name))
		} else if err != nil {
			return err
		}
		err = st.Delete(ctx, name)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return permanent(fmt.Errorf("%w: %s", ErrNoState, name))
		}
		return err
	})
}

// stateStore is the board's object store of saved states; create makes
// it when the board has none yet, else its absence is ErrNoState.
func (b *Board) stateStore(ctx context.Context, create bool) (jetstream.ObjectStore, error) {
	st, err := b.js.ObjectStore(ctx, StatesBucket)
	if err == nil || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return st, err
	}
	if !create {
		return nil, ErrNoState
	}
	r, err := b.replicas(ctx)
	if err != nil {
		return nil, err
	}
	return b.createStateStore(ctx, r)
}

func (b *Board) createStateStore(ctx context.Context, replicas int) (jetstream.ObjectStore, error) {
	return b.js.CreateOrUpdateObjectStore(ctx, stateStoreConfig(replicas))
}

// stateStoreConfig is the saved states' store's configuration.
func stateStoreConfig(replicas int) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{
		Bucket: StatesBucket, Description: "surf saved states, encrypted with age",
		Storage: jetstream.FileStorage, Replicas: replicas,
	}
}

func stateInfo(oi *jetstream.ObjectInfo) StateInfo {
	m := oi.Metadata
	info := StateInfo{Name: oi.Name, Size: int64(oi.Size), Put: oi.ModTime.UTC()}
	info.Recipients = splitList(m["recipients"])
	info.Hosts = splitList(m["hosts"])
	info.Cookies, _ = strconv.Atoi(m["cookies"])
	info.Origins, _ = strconv.Atoi(m["origins"])
	return info
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// SavedState is the ciphertext of the saved state the claimed task names
// (Task.SavedState), and what it is; ErrNoState when the task names none
// or the board no longer holds it.
func (c *Claim) SavedState(ctx context.Context) ([]byte, StateInfo, error) {
	if c.Task.SavedState == "" {
		return nil, StateInfo{}, fmt.Errorf("%w: the task names none", ErrNoState)
	}
	return c.b.State(ctx, c.Task.SavedState)
}
