//go:build !linux

package sandbox

import "syscall"

// dieWithParent has no portable equivalent of Linux's parent-death signal;
// outside Linux the browser relies on Playwright closing it.
func dieWithParent() error { return nil }

func killGroup(pid int) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func cmdline(int) string { return "" }
