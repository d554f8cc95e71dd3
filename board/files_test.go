package board

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openCapped(t *testing.T, max int64) *Board {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Open(ctx, Config{Dir: t.TempDir(), MaxFileBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func bytesOpener(data []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}

// TestAttachments: a task's attachments are stored on the board when it
// is added, listed in its record by name, size and digest only, and read
// back byte-identical; a run's downloads are stored under its attempt.
func TestAttachments(t *testing.T) {
	ctx := testCtx(t)
	b := openCapped(t, 1<<20)
	data := make([]byte, 200<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "photo.bin")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	task := Task{ID: "up", Instruction: "Upload the photo."}
	task.AttachFile(path)
	task.Attach("note.txt", bytesOpener([]byte("hello\n")))
	recs, err := b.Add(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := b.Get(ctx, "up")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	want := []File{
		{Name: "photo.bin", Path: "up/attachments/photo.bin", Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])},
		{Name: "note.txt", Path: "up/attachments/note.txt", Size: 6, SHA256: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"},
	}
	for _, got := range [][]File{recs[0].Task.Attachments, rec.Task.Attachments} {
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("attachments %+v, want %+v", got, want)
		}
	}
	// the record is small: the bytes are in the file store
	raw, _ := json.Marshal(rec)
	if len(raw) > 2000 {
		t.Errorf("the record is %d bytes", len(raw))
	}
	f, err := rec.FindFile("photo.bin")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := b.ReadFile(ctx, f, &buf); err != nil || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("read back %d bytes (%v), want %d identical", buf.Len(), err, len(data))
	}
	if _, err := rec.FindFile("nope"); err == nil || !strings.Contains(err.Error(), "it has note.txt, photo.bin") {
		t.Errorf("an unknown name: %v", err)
	}
	// a file that does not match its record is refused
	bad := f
	bad.SHA256 = strings.Repeat("0", 64)
	if err := b.ReadFile(ctx, bad, io.Discard); err == nil || !strings.Contains(err.Error(), "not what its task recorded") {
		t.Errorf("a mismatched digest: %v", err)
	}

	// a run's downloads
	c := &Claim{Task: rec.Task, Attempt: 2, b: b}
	df, err := c.PutDownload(ctx, "report.csv", bytesOpener([]byte("a,b\n1,2\n")))
	if err != nil || df.Path != "up/attempt-2/downloads/report.csv" || df.Size != 8 {
		t.Fatalf("PutDownload: %+v %v", df, err)
	}
	buf.Reset()
	if err := b.ReadFile(ctx, df, &buf); err != nil || buf.String() != "a,b\n1,2\n" {
		t.Fatalf("the download reads back %q, %v", buf.String(), err)
	}
	if _, err := c.PutDownload(ctx, "../x", bytesOpener(nil)); err == nil {
		t.Error("PutDownload took a name with a path")
	}
	if _, err := c.PutDownload(ctx, "big.bin", bytesOpener(make([]byte, 1<<20+1))); err == nil || !strings.Contains(err.Error(), "over the cap of 1048576 bytes") {
		t.Errorf("a download over the cap: %v", err)
	}
}

// TestAttachmentsRefused: bad names, too many files, a file over the cap,
// attachments set by hand, or one that cannot be read refuse the batch,
// and nothing is added: no record, no file.
func TestAttachmentsRefused(t *testing.T) {
	ctx := testCtx(t)
	b := openCapped(t, 1000)
	one := func(name string, data []byte) Task {
		t := Task{ID: "x", Instruction: "do it"}
		t.Attach(name, bytesOpener(data))
		return t
	}
	many := Task{ID: "x", Instruction: "do it"}
	for i := range MaxAttachments + 1 {
		many.Attach(strings.Repeat("a", i+1), bytesOpener(nil))
	}
	twice := one("a.txt", nil)
	twice.Attach("a.txt", bytesOpener(nil))
	set := Task{ID: "x", Instruction: "do it", Attachments: []File{{Name: "a", Path: "other/attachments/a"}}}
	unreadable := Task{ID: "x", Instruction: "do it"}
	unreadable.Attach("gone.txt", func() (io.ReadCloser, error) { return nil, errors.New("no such file") })
	cases := map[string]struct {
		task Task
		want string
	}{
		"traversal":  {one("../../etc/passwd", nil), "path separator"},
		"dotdot":     {one("..", nil), "starts with a dot"},
		"hidden":     {one(".env", nil), "starts with a dot"},
		"backslash":  {one(`..\x`, nil), "path separator"},
		"control":    {one("a\nb", nil), "control character"},
		"empty":      {one("", nil), "cannot be empty"},
		"too many":   {many, "at most 16"},
		"twice":      {twice, "two attachments are named a.txt"},
		"over cap":   {one("big.bin", make([]byte, 1001)), "over the cap of 1000 bytes"},
		"set":        {set, "attach files with Task.Attach"},
		"unreadable": {unreadable, "no such file"},
	}
	for name, c := range cases {
		_, err := b.Add(ctx, Task{ID: "ok", Instruction: "fine"}, c.task)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if recs, err := b.List(ctx); err != nil || len(recs) != 0 {
		t.Errorf("refused batches left %d records (%v)", len(recs), err)
	}
	if _, err := b.File(ctx, "x/attachments/a.txt"); err == nil {
		t.Error("a refused batch left a file")
	}
	// An id already on the board: its files are not written over.
	keep := one("a.txt", []byte("first"))
	if _, err := b.Add(ctx, keep); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(ctx, one("a.txt", []byte("second"))); err == nil {
		t.Fatal("an id taken was added again")
	}
	rec, _ := b.Get(ctx, "x")
	var buf bytes.Buffer
	if err := b.ReadFile(ctx, rec.Task.Attachments[0], &buf); err != nil || buf.String() != "first" {
		t.Errorf("the first task's attachment is now %q (%v)", buf.String(), err)
	}
}

// TestAttachingStaysPending: while Add stores a task's attachments, the
// task is on the board but stays pending, even when a worker's sweep
// settles the board meanwhile: no worker runs it before its files are
// there.
func TestAttachingStaysPending(t *testing.T) {
	ctx := testCtx(t)
	b := openCapped(t, 0)
	opens := 0
	var during Record
	var sweepErr error
	task := Task{ID: "slow", Instruction: "upload it"}
	task.Attach("a.txt", func() (io.ReadCloser, error) {
		opens++
		if opens == 2 { // storing: the record is written
			sweepErr = b.sweep(ctx)
			during, _ = b.Get(ctx, "slow")
		}
		return io.NopCloser(strings.NewReader("data")), nil
	})
	recs, err := b.Add(ctx, task)
	if err != nil || sweepErr != nil {
		t.Fatal(err, sweepErr)
	}
	if during.State != Pending || !during.Attaching {
		t.Errorf("while its attachments were stored the task was %s (attaching %v)", during.State, during.Attaching)
	}
	if recs[0].State != Ready || recs[0].Attaching {
		t.Errorf("once added the task is %s (attaching %v)", recs[0].State, recs[0].Attaching)
	}
}
