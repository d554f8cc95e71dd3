package board

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
)

// Files that travel with a task. A task's attachments (Task.Attach) are
// stored on the board when it is added, as ID/attachments/NAME, and the
// worker that runs it places them in the run's uploads directory; what a
// run downloads is stored as ID/attempt-N/downloads/NAME and listed in
// Result.Downloads. Records hold only names, sizes and digests: the
// bytes are in the file store.

// Bounds of the files that travel with a task.
const (
	// DefaultMaxFileBytes caps one attachment or stored download unless
	// Config.MaxFileBytes says otherwise: websurfer's cap of one download.
	DefaultMaxFileBytes = 100 << 20
	// MaxAttachments is how many files one task may have attached.
	MaxAttachments = 16
	// MaxDownloads is how many of a run's downloads are stored.
	MaxDownloads = 64
	maxFileName  = 120
)

// File is a file of a task in the board's file store: an attachment or a
// download.
type File struct {
	// Name is the file's name: in the uploads directory for an
	// attachment, in the downloads directory for a download.
	Name string `json:"name"`
	// Path is the file's name in the board's file store (see Board.File).
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// attachment is a file to store with a task when it is added.
type attachment struct {
	name string
	open func() (io.ReadCloser, error)
}

// Attach adds a file to the task's uploads: Add stores it on the board (as
// ID/attachments/NAME, at most Config.MaxFileBytes) and the worker that
// runs the task places it in the run's uploads directory under name,
// where upload_file finds it. open is called when the task is added, up
// to twice. Add refuses a name that is not a plain file name (no
// directories, no leading dot, no control characters).
func (t *Task) Attach(name string, open func() (io.ReadCloser, error)) {
	t.attach = append(t.attach, attachment{name: name, open: open})
}

// AttachFile attaches the local file at path under its base name (see
// Attach).
func (t *Task) AttachFile(path string) {
	t.Attach(filepath.Base(path), func() (io.ReadCloser, error) { return os.Open(path) })
}

// CheckFileName refuses a name that is not a plain file name: empty,
// longer than 120 bytes, not UTF-8, with a path separator, a control
// character or a leading dot ("..", hidden files).
func CheckFileName(name string) error {
	switch {
	case name == "":
		return errors.New("a file name cannot be empty")
	case len(name) > maxFileName:
		return fmt.Errorf("file name %q is longer than %d bytes", cut(name, 40), maxFileName)
	case !utf8.ValidString(name):
		return fmt.Errorf("file name %q is not UTF-8", name)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("file name %q has a path separator: give a plain file name", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("file name %q starts with a dot", name)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("file name %q has a control character", name)
	}
	return nil
}

// checkAttachments refuses a task whose attachments are malformed.
func checkAttachments(t *Task) error {
	if len(t.Attachments) > 0 {
		return errors.New("attachments cannot be set in a task's fields: attach files with Task.Attach (surf board add --attach)")
	}
	if len(t.attach) > MaxAttachments {
		return fmt.Errorf("%d attachments; at most %d", len(t.attach), MaxAttachments)
	}
	seen := map[string]bool{}
	for _, a := range t.attach {
		if err := CheckFileName(a.name); err != nil {
			return fmt.Errorf("attachment: %v", err)
		}
		if a.open == nil {
			return fmt.Errorf("attachment %s: nothing to read it from", a.name)
		}
		if seen[a.name] {
			return fmt.Errorf("two attachments are named %s", a.name)
		}
		seen[a.name] = true
	}
	return nil
}

func (b *Board) maxFile() int64 {
	if b.cfg.MaxFileBytes > 0 {
		return b.cfg.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

// measure reads what open gives, up to the cap: its size and SHA-256.
func (b *Board) measure(name string, open func() (io.ReadCloser, error)) (int64, string, error) {
	r, err := open()
	if err != nil {
		return 0, "", err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, b.maxFile()+1))
	if err != nil {
		return 0, "", fmt.Errorf("reading %s: %w", name, err)
	}
	if n > b.maxFile() {
		return 0, "", fmt.Errorf("%s is over the cap of %d bytes", name, b.maxFile())
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// storeFile stores what open gives as path in the file store, checked
// against the cap, and returns it as a File named name. It fails when
// what was stored is not what was measured (the source changed).
func (b *Board) storeFile(ctx context.Context, path, name string, open func() (io.ReadCloser, error)) (File, error) {
	size, sum, err := b.measure(name, open)
	if err != nil {
		return File{}, err
	}
	f := File{Name: name, Path: path, Size: size, SHA256: sum}
	return f, b.storeMeasured(ctx, f, open)
}

// storeMeasured stores f, measured already, from open.
func (b *Board) storeMeasured(ctx context.Context, f File, open func() (io.ReadCloser, error)) error {
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	// no more than was measured; a file is streamed (PutFile reads it
	// again on a retry), anything else is read into memory
	var src io.Reader = io.LimitReader(r, f.Size+1)
	if ra, ok := r.(io.ReaderAt); ok {
		src = io.NewSectionReader(ra, 0, f.Size+1)
	}
	if err := b.PutFile(ctx, f.Path, src); err != nil {
		return err
	}
	var info *jetstream.ObjectInfo
	if err := retry(ctx, func(ctx context.Context) error {
		info, err = b.files.GetInfo(ctx, f.Path)
		return err
	}); err != nil {
		return fmt.Errorf("storing %s: %w", f.Name, err)
	}
	if int64(info.Size) != f.Size || digestHex(info.Digest) != f.SHA256 {
		return fmt.Errorf("storing %s: it changed while it was stored", f.Name)
	}
	return nil
}

// digestHex is an object store digest ("SHA-256=" and base64) in hex.
func digestHex(d string) string {
	raw, err := jetstream.DecodeObjectDigest(d)
	if err != nil {
		return ""
	}
	return hex.EncodeToString(raw)
}

// measureAttachments reads the batch's attachments, checking them
// against the cap, and sets each task's Attachments (stored later by
// storeAttachments).
func (b *Board) measureAttachments(tasks []Task) error {
	for i := range tasks {
		t := &tasks[i]
		for _, a := range t.attach {
			size, sum, err := b.measure(a.name, a.open)
			if err != nil {
				return fmt.Errorf("task %s: attachment %s: %w", t.ID, a.name, err)
			}
			t.Attachments = append(t.Attachments, File{Name: a.name, Path: t.ID + "/attachments/" + a.name, Size: size, SHA256: sum})
		}
	}
	return nil
}

// storeAttachments stores the attachments measureAttachments listed;
// stored gets each path stored.
func (b *Board) storeAttachments(ctx context.Context, tasks []Task, stored *[]string) error {
	for _, t := range tasks {
		for i, a := range t.attach {
			f := t.Attachments[i]
			*stored = append(*stored, f.Path)
			if err := b.storeMeasured(ctx, f, a.open); err != nil {
				return fmt.Errorf("task %s: attachment %s: %w", t.ID, a.name, err)
			}
		}
	}
	return nil
}

// PutDownload stores a file the run downloaded as
// TASK/attempt-N/downloads/NAME, at most Config.MaxFileBytes, and
// returns it for Result.Downloads. open is called twice.
func (c *Claim) PutDownload(ctx context.Context, name string, open func() (io.ReadCloser, error)) (File, error) {
	if err := CheckFileName(name); err != nil {
		return File{}, err
	}
	path := fmt.Sprintf("%s/attempt-%d/downloads/%s", c.Task.ID, c.Attempt, name)
	return c.b.storeFile(ctx, path, name, open)
}

// ReadFile writes f, a task's attachment or download, to w, checking its
// size and SHA-256 against the record's: a file that does not match is
// an error (what was written to w by then is not to be used).
func (b *Board) ReadFile(ctx context.Context, f File, w io.Writer) error {
	if f.Size > b.maxFile() {
		return fmt.Errorf("%s is %d bytes, over the cap of %d", f.Name, f.Size, b.maxFile())
	}
	r, err := b.File(ctx, f.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(r, f.Size+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", f.Name, err)
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return fmt.Errorf("%w: %s is %d bytes, want %d with SHA-256 %s", ErrFileMismatch, f.Name, n, f.Size, f.SHA256)
	}
	return nil
}

// ErrFileMismatch is the error of a file on the board that is not what
// its task's record says it is.
var ErrFileMismatch = errors.New("the file on the board is not what its task recorded")

// Files lists a task's files: its last run's downloads, then its
// attachments.
func (r Record) Files() []File {
	var out []File
	if r.Result != nil {
		out = append(out, r.Result.Downloads...)
	}
	return append(out, r.Task.Attachments...)
}

// FindFile is the task's file named name: a download of its last run
// (by the name it was saved under), an attachment, or either by its
// path in the file store.
func (r Record) FindFile(name string) (File, error) {
	files := r.Files()
	for _, f := range files {
		if f.Name == name || f.Path == name {
			return f, nil
		}
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return File{}, fmt.Errorf("task %s has no files", r.Task.ID)
	}
	return File{}, fmt.Errorf("task %s has no file %q; it has %s", r.Task.ID, cut(name, 80), strings.Join(names, ", "))
}

// FetchAttachments writes the task's attachments into dir (which must
// exist), each under its name, checked against its record: the run's
// uploads directory. A name that is not a plain file name, or a file
// already in dir, is an error.
func (c *Claim) FetchAttachments(ctx context.Context, dir string) error {
	for _, f := range c.Task.Attachments {
		if err := CheckFileName(f.Name); err != nil {
			return fmt.Errorf("attachment: %w", err)
		}
		if err := c.b.fetch(ctx, f, filepath.Join(dir, f.Name)); err != nil {
			return fmt.Errorf("attachment %s: %w", f.Name, err)
		}
	}
	return nil
}

// fetch writes f to a new file at path, removed again if it cannot be
// written whole.
func (b *Board) fetch(ctx context.Context, f File, path string) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = b.ReadFile(ctx, f, out)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
