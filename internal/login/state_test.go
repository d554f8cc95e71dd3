package login_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/internal/login"
	"github.com/surfkit/surf/sandbox"
)

func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

// parse registers the state flags and parses args.
func parse(t *testing.T, args ...string) *login.StateFlags {
	t.Helper()
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	f := login.AddStateFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestStateFlagsFile(t *testing.T) {
	dir := t.TempDir()
	pass := filepath.Join(dir, "pass")
	if err := os.WriteFile(pass, []byte("s3cret\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := filepath.Join(dir, "id.txt")
	if err := os.WriteFile(id, []byte("AGE-SECRET-KEY-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fromEnv := env(login.PassphraseEnv, "from-env")
	for _, tc := range []struct {
		args []string
		want sandbox.StateFile
	}{
		{nil, sandbox.StateFile{}},
		{[]string{"--state=s.json"}, sandbox.StateFile{Path: "s.json", Passphrase: "from-env"}},
		{[]string{"--state=s.json", "--state-passphrase-file=" + pass}, sandbox.StateFile{Path: "s.json", Passphrase: "s3cret"}},
		{[]string{"--state=s.json", "--state-identity=" + id}, sandbox.StateFile{Path: "s.json", IdentityFile: id}},
	} {
		got, err := parse(t, tc.args...).File(fromEnv)
		if err != nil || got != tc.want {
			t.Errorf("%q: File = %+v, %v, want %+v", tc.args, got, err, tc.want)
		}
	}
	if got, err := parse(t, "--state=s.json").File(nil); err != nil || got.Passphrase != "" {
		t.Errorf("a nil getenv gives %+v, %v", got, err)
	}
	var none *login.StateFlags
	if got, err := none.File(fromEnv); err != nil || got != (sandbox.StateFile{}) {
		t.Errorf("nil flags give %+v, %v", got, err)
	}

	usage := map[string][]string{
		"need --state FILE":  {"--state-identity=" + id},
		"exclude each other": {"--state=s.json", "--state-identity=" + id, "--state-passphrase-file=" + pass},
	}
	for msg, args := range usage {
		_, err := parse(t, args...).File(fromEnv)
		var ue *login.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: File = %v, want a *login.UsageError saying %q", args, err, msg)
		}
	}
	if _, err := parse(t, "--state=s.json", "--state-passphrase-file="+empty).File(fromEnv); err == nil || err.Error() != "--state-passphrase-file "+empty+" is empty" {
		t.Errorf("an empty passphrase file gives %v", err)
	}
	missing := filepath.Join(dir, "nokey.txt")
	_, err := parse(t, "--state=s.json", "--state-identity="+missing).File(fromEnv)
	var h interface{ Hint() string }
	if !errors.As(err, &h) || h.Hint() != "make one with 'age-keygen -o "+missing+"'" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing identity file gives %v, want os.ErrNotExist with an age-keygen hint", err)
	}
}

func TestStateFlagsServeFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "states")
	fromEnv := env(login.PassphraseEnv, "pw")
	got, err := parse(t).ServeFile(dir, fromEnv)
	if err != nil || got != (sandbox.StateFile{Passphrase: "pw"}) {
		t.Fatalf("ServeFile(dir) = %+v, %v, want only the key", got, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the state dir is not created 0700: %v, %v", fi, err)
	}
	got, err = parse(t, "--state=s.json").ServeFile(dir, fromEnv)
	if err != nil || got != (sandbox.StateFile{Path: "s.json", Passphrase: "pw"}) {
		t.Errorf("ServeFile(dir) with --state = %+v, %v", got, err)
	}
	_, err = parse(t, "--state-identity=x").ServeFile("", fromEnv)
	var ue *login.UsageError
	if !errors.As(err, &ue) || ue.Msg != "--state-passphrase-file and --state-identity need --state FILE or --state-dir DIR" {
		t.Errorf("ServeFile without --state or a dir = %v", err)
	}
}

func TestStateHint(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("loading x: %w", sandbox.ErrStateEncrypted): "give its key: --state-passphrase-file FILE, $SURF_STATE_PASSPHRASE or --state-identity FILE",
		fmt.Errorf("loading x: %w", sandbox.ErrStateKey):       "it was saved with another passphrase or identity; without that key it cannot be read (log in again into a new file)",
		errors.New("disk full"):                                "",
	} {
		if got := login.StateHint(err); got != want {
			t.Errorf("StateHint(%v) = %q, want %q", err, got, want)
		}
	}
}

func TestParseURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://example.com/login": true, "http://127.0.0.1:8080/": true,
		"ftp://example.com/": false, "example.com": false, "http:///path": false, "://": false,
	} {
		u, err := login.ParseURL(raw)
		if ok != (err == nil) {
			t.Errorf("ParseURL(%q) = %v, %v", raw, u, err)
		}
		if !ok && err != nil && err.Error() != fmt.Sprintf("%q is not an http(s) URL", raw) {
			t.Errorf("ParseURL(%q): %v", raw, err)
		}
	}
}

func TestHasDisplay(t *testing.T) {
	if login.HasDisplay(env()) || login.HasDisplay(nil) {
		t.Error("no display variables, yet a display")
	}
	if !login.HasDisplay(env("DISPLAY", ":0")) || !login.HasDisplay(env("WAYLAND_DISPLAY", "wayland-0")) {
		t.Error("a display variable, yet no display")
	}
}

func TestEnterPressed(t *testing.T) {
	for _, tc := range []struct {
		in       string
		headless bool
	}{
		{"\n", false},  // Enter, with a window
		{"\n", true},   // Enter, headless
		{"", true},     // end of stdin, headless: a script's
		{"ok\n", true}, // a line
	} {
		<-login.EnterPressed(strings.NewReader(tc.in), tc.headless) // closes, or the test times out
	}
}
