//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// dieWithParent makes the kernel kill this process (and, across exec, the
// browser) when its parent dies. The parent-death signal belongs to the
// thread, so the thread is locked: exec happens on it.
func dieWithParent() error {
	runtime.LockOSThread()
	const prSetPdeathsig = 1
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGKILL), 0); errno != 0 {
		return errno
	}
	if os.Getppid() == 1 {
		return errors.New("parent exited before the browser started")
	}
	return nil
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	state := b[i+2]
	return state != 'Z' && state != 'X'
}

// killGroup sends SIGKILL to the process group led by pid, and to pid.
func killGroup(pid int) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// ownedProcesses lists live processes whose environment carries marker
// (OwnerEnv=<pid>).
func ownedProcesses(marker string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(marker)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				if alive(pid) {
					pids = append(pids, pid)
				}
				break
			}
		}
	}
	return pids
}

// cmdline returns a process's command line for messages.
func cmdline(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	s := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}
