//go:build !linux

package sandbox

import "syscall"

// dieWithParent has no portable equivalent of Linux's parent-death signal;
// outside Linux the browser relies on Playwright closing it.
func dieWithParent() error { return nil }

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

func killGroup(pid int) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// ownedProcesses needs /proc; elsewhere leftovers are not detected.
func ownedProcesses(string) []int { return nil }

func cmdline(int) string { return "" }
