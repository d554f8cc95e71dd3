package proc

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
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

func TestWithEnvAndCmdline(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc on this system")
	}
	mark := "SURF_PROC_TEST=" + strconv.Itoa(os.Getpid())
	if got := WithEnv(mark); len(got) != 0 {
		t.Fatalf("before the child starts, WithEnv found %v", got)
	}
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	if got := WithEnv("SURF_PROC_TEST=other", mark); !slices.Equal(got, []int{pid}) {
		t.Fatalf("WithEnv = %v, want [%d]", got, pid)
	}
	if got := WithEnv(mark + "x"); len(got) != 0 {
		t.Fatalf("a mark that is only a prefix of an entry matched %v", got)
	}
	if got, want := Cmdline(pid), "sleep 60"; got != want {
		t.Fatalf("Cmdline = %q, want %q", got, want)
	}
	if Cmdline(0) != "" || WithEnv() != nil {
		t.Fatal("no pid and no mark must give nothing")
	}
}
