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
