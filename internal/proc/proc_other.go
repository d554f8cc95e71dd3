//go:build !linux

package proc

import "syscall"

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// withEnv needs /proc; elsewhere no process is found.
func withEnv([]string) []int { return nil }

// cmdline needs /proc; elsewhere it is unknown.
func cmdline(int) string { return "" }
