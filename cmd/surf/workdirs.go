package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/surfkit/surf/internal/proc"
	"github.com/surfkit/surf/sandbox"
)

// A running surf work marks itself with an empty temp dir, surf-PID-work,
// beside the dirs it makes (its browser's, surf-PID-..., and its tasks',
// surf-PID-task-...). A surf work that is killed cannot remove them; the
// next surf work to start finds its mark, sees that PID is dead and
// removes them (sandbox.RemoveStale), as surf open does for a dead
// session daemon.
const workMarkSuffix = "-work"

// markWorker removes what dead surf work processes left in the temp dir,
// then marks this one. The returned func removes the mark, at exit.
func markWorker(log *slog.Logger) func() {
	removeDeadWorkers(log)
	mark := filepath.Join(os.TempDir(), fmt.Sprintf("surf-%d%s", os.Getpid(), workMarkSuffix))
	if err := os.Mkdir(mark, 0o700); err != nil && !os.IsExist(err) {
		// without a mark, only this run's leftovers after a kill are at stake
		log.Warn("marking the worker's temp dirs", "err", err)
		return func() {}
	}
	return func() { os.Remove(mark) }
}

// removeDeadWorkers removes the temp dirs of the surf work processes whose
// mark is there but whose process is not.
func removeDeadWorkers(log *slog.Logger) {
	marks, _ := filepath.Glob(filepath.Join(os.TempDir(), "surf-*"+workMarkSuffix))
	for _, m := range marks {
		pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "surf-"), workMarkSuffix))
		if err != nil || pid <= 0 || pid == os.Getpid() || proc.Alive(pid) {
			continue
		}
		removed, err := sandbox.RemoveStale(pid)
		for _, dir := range removed {
			log.Info("removed a dead worker's temp dir", "pid", pid, "dir", dir)
		}
		if err != nil {
			log.Warn("removing a dead worker's temp dirs", "pid", pid, "err", err)
		}
	}
}
