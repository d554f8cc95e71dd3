package proc

import (
	"os"
	"os/exec"
	"testing"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	if Alive(0) || Alive(-1) {
		t.Fatal("no pid is alive")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Fatal("a started child is not alive")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Killed but not yet reaped: a zombie is not alive.
	for i := 0; i < 1000 && Alive(pid); i++ {
		exec.Command("true").Run() // give the kill time to land
	}
	if Alive(pid) {
		t.Fatal("a killed child (a zombie) is still alive")
	}
	cmd.Wait()
	if Alive(pid) {
		t.Fatal("a reaped child is alive")
	}
}
