package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The browser is started by Playwright's driver (a node process). To own
// the process anyway, surf gives Playwright its own executable as the
// browser: started with launcherEnv set, the binary runs launch() from
// RunLauncher, the first call of its main, instead of the rest of main.
// That sets the parent-death signal, writes the pid file, and execs the
// real browser (or bubblewrap wrapping it) in place, so the pid Playwright
// sees, the pid surf records and the browser's process group are all the
// same.
//
// Every binary that calls RunLauncher first (the surf CLI, test binaries
// through their TestMain, programs embedding surf) can act as the
// launcher. New refuses to launch a local browser from one that does not
// (ErrNoLauncher): re-executing it would run the program's own main.
const (
	launcherEnv = "SURF_SANDBOX_LAUNCH"
	// OwnerEnv marks every browser process surf starts with the pid of the
	// process that owns it, so leftovers can be found (see Leftovers).
	OwnerEnv = "SURF_SANDBOX_OWNER"
)

// launchSpec is what the launcher needs, passed as JSON in launcherEnv.
type launchSpec struct {
	Exec    string `json:"exec"`
	PIDFile string `json:"pidfile"`
	// Bwrap, when set, runs Exec inside bubblewrap (the OS sandbox). The
	// recorded pid is then bwrap's: it leads the process group, and the
	// browser dies with it.
	Bwrap *bwrapSpec `json:"bwrap,omitempty"`
	// Prefs, when set, is written as the profile's Default/Preferences
	// before the browser starts (Playwright hands over an empty profile).
	Prefs map[string]any `json:"prefs,omitempty"`
	// Relay, when set, is the Unix socket the launcher hands the DevTools
	// pipe's ends to (see relay_linux.go), with RelayToken.
	Relay      string `json:"relay,omitempty"`
	RelayToken string `json:"relay_token,omitempty"`
}

// launchRecord is what the launcher writes to the pid file.
type launchRecord struct {
	PID         int    `json:"pid"`
	UserDataDir string `json:"user_data_dir,omitempty"`
}

// launcherCalled records that this process called RunLauncher.
var launcherCalled atomic.Bool

// ErrNoLauncher is returned by New, for a local browser, when the program
// has not called RunLauncher.
var ErrNoLauncher = errors.New("sandbox: the program did not call sandbox.RunLauncher() at the start of main (and of TestMain in tests): " +
	"surf starts a local browser by running the program's own binary as its launcher, and without that call the binary would run the program instead")

// RunLauncher must be the first call in main of every program that starts
// a local browser with this package, and in TestMain of every test binary
// that does. Started by surf as its browser launcher, the process runs the
// launcher and exits there: RunLauncher does not return. Otherwise it
// returns at once, having recorded that the program can act as the
// launcher; New refuses to launch a local browser (ErrNoLauncher) until it
// has.
func RunLauncher() {
	if spec := os.Getenv(launcherEnv); spec != "" {
		os.Exit(launch(spec, os.Args[1:]))
	}
	launcherCalled.Store(true)
}

// launch runs in the re-executed binary. It returns only on failure.
func launch(specJSON string, args []string) int {
	var spec launchSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil || spec.Exec == "" {
		fmt.Fprintf(os.Stderr, "surf launcher: bad launch spec: %v\n", err)
		return 127
	}
	os.Unsetenv(launcherEnv)
	if err := dieWithParent(); err != nil {
		fmt.Fprintf(os.Stderr, "surf launcher: %v\n", err)
		return 127
	}
	rec := launchRecord{PID: os.Getpid()}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
			rec.UserDataDir = v
		}
	}
	if spec.Prefs != nil && rec.UserDataDir != "" {
		if err := writePrefs(rec.UserDataDir, spec.Prefs); err != nil {
			fmt.Fprintf(os.Stderr, "surf launcher: writing browser preferences: %v\n", err)
			return 127
		}
	}
	b, _ := json.Marshal(rec)
	tmp := spec.PIDFile + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "surf launcher: writing pid file: %v\n", err)
		return 127
	}
	if err := os.Rename(tmp, spec.PIDFile); err != nil {
		fmt.Fprintf(os.Stderr, "surf launcher: writing pid file: %v\n", err)
		return 127
	}
	if spec.Relay != "" && slices.Contains(args, "--remote-debugging-pipe") {
		if err := handOverPipe(spec.Relay, spec.RelayToken); err != nil {
			fmt.Fprintf(os.Stderr, "surf launcher: %v\n", err)
			return 127
		}
		// The relay speaks CBOR to the browser (see cdpmux.Config.CBOR)
		// and JSON to the driver.
		args = slices.Clone(args)
		args[slices.Index(args, "--remote-debugging-pipe")] = "--remote-debugging-pipe=cbor"
	}
	var argv []string
	if spec.Bwrap != nil {
		argv = spec.Bwrap.args(rec.UserDataDir)
	}
	argv = append(append(argv, spec.Exec), mergeFeatureSwitches(args)...)
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "surf launcher: exec %s: %v\n", argv[0], err)
	return 127
}

// mergeFeatureSwitches joins each of --enable-features and
// --disable-features, when given more than once, into one switch (at the
// place of its first) listing every feature once: Chromium keeps only the
// last of a repeated switch, and Playwright passes its own before surf's.
func mergeFeatureSwitches(args []string) []string {
	out := make([]string, 0, len(args))
	at := map[string]int{}            // where each switch goes in out
	features := map[string][]string{} // its features, in order, once each
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok || (name != "--enable-features" && name != "--disable-features") {
			out = append(out, a)
			continue
		}
		if _, again := at[name]; !again {
			at[name] = len(out)
			out = append(out, "")
		}
		for _, f := range strings.Split(value, ",") {
			if f != "" && !slices.Contains(features[name], f) {
				features[name] = append(features[name], f)
			}
		}
	}
	for name, i := range at {
		out[i] = name + "=" + strings.Join(features[name], ",")
	}
	return out
}

// writePrefs writes the profile's initial preferences, unless the
// profile already has some.
func writePrefs(userDataDir string, prefs map[string]any) error {
	dir := filepath.Join(userDataDir, "Default")
	path := filepath.Join(dir, "Preferences")
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(prefs)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// readLaunchRecord waits briefly for the launcher's pid file.
func readLaunchRecord(path string) (launchRecord, error) {
	var rec launchRecord
	deadline := time.Now().Add(2 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			if err := json.Unmarshal(b, &rec); err != nil {
				return rec, fmt.Errorf("reading the browser's pid file: %w", err)
			}
			return rec, nil
		}
		if time.Now().After(deadline) {
			return rec, fmt.Errorf("the browser did not start through surf's launcher (no pid file): %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// selfExecutable is the binary used as launcher.
func selfExecutable() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding surf's own executable for the browser launcher: %w", err)
	}
	return filepath.EvalSymlinks(p)
}

// ownerMarker is the environment entry put on every browser surf starts.
func ownerMarker() string { return OwnerEnv + "=" + strconv.Itoa(os.Getpid()) }
