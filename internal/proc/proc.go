// Package proc answers questions about operating-system processes that
// surf asks in more than one place.
package proc

// Alive reports whether pid is a live process: one that exists and, where
// the system tells, is not a zombie waiting to be reaped.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return alive(pid)
}

// WithEnv lists the live processes, other than this one, whose environment
// holds one of marks ("KEY=value") as a whole entry. It needs /proc: on
// systems without it, it finds none.
func WithEnv(marks ...string) []int {
	if len(marks) == 0 {
		return nil
	}
	return withEnv(marks)
}

// Cmdline returns pid's command line with its arguments joined by spaces,
// or "" when it cannot be read (no such process, or no /proc).
func Cmdline(pid int) string {
	if pid <= 0 {
		return ""
	}
	return cmdline(pid)
}
