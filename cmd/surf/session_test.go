package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/internal/proc"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/sandbox"
)

// The session scripts (testdata/script/session_*.txtar) run "surf open" and
// the action commands against the demo site on loopback ($DEMO_URL,
// $DEMO_HOST) and the fixture pages of testdata/sites ($FIX_URL,
// $FIX_HOST), each script with its own runtime directory
// ($SURF_RUNTIME_DIR), so that their daemons never meet. The daemons are
// this test binary re-executed as "surf session-daemon"; whatever a failed
// script leaves running is killed when it ends.
func init() {
	scriptSetups = append(scriptSetups, sessionSetup)
	scriptCmds["session-pid"] = cmdSessionPID
	scriptCmds["kill-pid"] = cmdKillPID
	scriptCmds["no-leftovers"] = cmdNoLeftovers
	scriptCmds["surf-code"] = cmdSurfCode
	scriptCmds["is-image"] = cmdIsImage
}

func sessionSetup(env *testscript.Env) error {
	// The fixture pages of testdata/sites (file inputs, popups, ...).
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "sites"))
	if err != nil {
		return err
	}
	fix := httptest.NewServer(http.FileServer(http.Dir(root)))
	env.Defer(fix.Close)
	env.Setenv("FIX_URL", fix.URL)
	env.Setenv("FIX_HOST", strings.TrimPrefix(fix.URL, "http://"))

	// A short path: unix socket paths are limited to 107 bytes.
	dir, err := os.MkdirTemp("", "surfrt-")
	if err != nil {
		return err
	}
	env.Setenv("SURF_RUNTIME_DIR", dir)
	env.Defer(func() {
		killDaemons(dir)
		os.RemoveAll(dir)
	})

	return nil
}

// killDaemons stops the daemons a script left running: SIGTERM (they
// close their browsers), then SIGKILL.
func killDaemons(dir string) {
	pidFiles, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	var pids []int
	for _, f := range pidFiles {
		if pid := daemon.ReadPID(f); pid > 0 && proc.Alive(pid) {
			syscall.Kill(pid, syscall.SIGTERM)
			pids = append(pids, pid)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, pid := range pids {
		for proc.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if proc.Alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// session-pid NAME VAR: the pid of session NAME's daemon, which must be
// running, goes into $VAR and to stdout.
func cmdSessionPID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: session-pid NAME VAR")
	}
	pid := daemon.ReadPID(filepath.Join(ts.Getenv("SURF_RUNTIME_DIR"), args[0]+".pid"))
	if pid == 0 || !proc.Alive(pid) {
		ts.Fatalf("no live daemon for session %q (pid file says %d)", args[0], pid)
	}
	ts.Setenv(args[1], strconv.Itoa(pid))
	fmt.Fprintf(ts.Stdout(), "%d\n", pid)
}

// kill-pid [-TERM] PID: signals a process (SIGKILL by default).
func cmdKillPID(ts *testscript.TestScript, neg bool, args []string) {
	sig := syscall.SIGKILL
	if len(args) == 2 && args[0] == "-TERM" {
		sig, args = syscall.SIGTERM, args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: kill-pid [-TERM] PID")
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil || pid <= 0 {
		ts.Fatalf("bad pid %q", args[0])
	}
	ts.Check(syscall.Kill(pid, sig))
}

// no-leftovers [-procs] PID...: waits (up to 30s) until the daemons PID...
// are gone with everything they started: no live process carries their
// sandbox owner mark or this script's runtime directory in its
// environment. Without -procs it also checks that their sockets, pid files
// and sandbox temp dirs are gone, and that no daemon log reports a data
// race or a panic.
func cmdNoLeftovers(ts *testscript.TestScript, neg bool, args []string) {
	procsOnly := len(args) > 0 && args[0] == "-procs"
	if procsOnly {
		args = args[1:]
	}
	if neg {
		ts.Fatalf("no-leftovers does not support !")
	}
	var pids []int
	for _, a := range args {
		pid, err := strconv.Atoi(a)
		if err != nil || pid <= 0 {
			ts.Fatalf("bad pid %q", a)
		}
		pids = append(pids, pid)
	}
	dir := ts.Getenv("SURF_RUNTIME_DIR")
	check := func() []string {
		var left []string
		for _, pid := range pids {
			if proc.Alive(pid) {
				left = append(left, fmt.Sprintf("daemon %d is alive", pid))
			}
		}
		marks := []string{"SURF_RUNTIME_DIR=" + dir}
		for _, pid := range pids {
			marks = append(marks, sandbox.OwnerEnv+"="+strconv.Itoa(pid))
		}
		for _, pid := range proc.WithEnv(marks...) {
			left = append(left, fmt.Sprintf("process %d (%s)", pid, textcut.Bytes(proc.Cmdline(pid), 120)))
		}
		if procsOnly {
			return left
		}
		for _, pat := range []string{"*.sock", "*.pid"} {
			m, _ := filepath.Glob(filepath.Join(dir, pat))
			left = append(left, m...)
		}
		for _, pid := range pids {
			m, _ := filepath.Glob(filepath.Join(ts.Getenv("TMPDIR"), fmt.Sprintf("surf-%d-*", pid)))
			left = append(left, m...)
		}
		return left
	}
	deadline := time.Now().Add(30 * time.Second)
	left := check()
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		left = check()
	}
	if len(left) > 0 {
		ts.Fatalf("left behind:\n  %s", strings.Join(left, "\n  "))
	}
	if !procsOnly {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			if bytes.Contains(b, []byte("DATA RACE")) || bytes.Contains(b, []byte("panic:")) {
				ts.Fatalf("daemon log %s reports a problem:\n%s", l, b)
			}
		}
	}
}

// surf-code N ARGS...: runs surf ARGS in this process and checks that it
// exits with code N; its output is the command's stdout and stderr. Only
// for commands that do not start a daemon (this binary is not named surf).
func cmdSurfCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: surf-code N ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("bad exit code %q", args[0])
	}
	cli := &CLI{Stdin: strings.NewReader(""), Stdout: ts.Stdout(), Stderr: ts.Stderr(), Getenv: ts.Getenv}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if got := cli.Run(ctx, args[1:]); got != want {
		ts.Fatalf("surf %s exited with %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// is-image FILE FORMAT: FILE decodes as an image of FORMAT (png, jpeg).
func cmdIsImage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: is-image FILE png|jpeg")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	img, format, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	if format != args[1] {
		ts.Fatalf("%s is %s, want %s", args[0], format, args[1])
	}
	if r := img.Bounds(); r.Dx() < 100 || r.Dy() < 100 {
		ts.Fatalf("%s is only %dx%d", args[0], r.Dx(), r.Dy())
	}
}
