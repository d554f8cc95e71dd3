package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may itself
	// hold parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	state := b[i+2]
	return state != 'Z' && state != 'X'
}

func withEnv(marks []string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
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
		if holdsAny(env, marks) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// holdsAny reports whether the NUL-separated environment env holds one of
// marks as a whole entry.
func holdsAny(env []byte, marks []string) bool {
	for _, kv := range bytes.Split(env, []byte{0}) {
		for _, m := range marks {
			if string(kv) == m {
				return true
			}
		}
	}
	return false
}

func cmdline(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}
