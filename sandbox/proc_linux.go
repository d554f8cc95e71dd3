//go:build linux

package sandbox

import (
	"errors"
	"os"
	"runtime"
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

// killGroup sends SIGKILL to the process group led by pid, and to pid.
func killGroup(pid int) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
