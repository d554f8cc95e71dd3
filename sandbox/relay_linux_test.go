//go:build linux

package sandbox

import (
	"bytes"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/cdpcbor"
)

// TestRelayTakesOnlyTheLauncher checks the hand-over: a connection
// without the token is dropped (its descriptors closed), and the one with
// it gets a relay that carries the driver's traffic to the browser.
func TestRelayTakesOnlyTheLauncher(t *testing.T) {
	rl, err := listenRelay()
	if err != nil {
		t.Fatal(err)
	}
	defer rl.close()
	if fi, err := os.Stat(rl.dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the socket's directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	type accepted struct {
		err error
		ok  bool
	}
	got := make(chan accepted, 1)
	var relayClose func()
	go func() {
		m, err := rl.accept(time.Now().Add(20*time.Second), nil)
		if m != nil {
			relayClose = m.Close
		}
		got <- accepted{err, m != nil}
	}()

	// pipes returns four pipes' ends for the hand-over, and the ends the
	// test keeps: [driver writes, driver reads, browser reads, browser writes].
	pipes := func() (send []int, keep []*os.File) {
		var p [4][2]int
		for i := range p {
			if err := syscall.Pipe2(p[i][:], syscall.O_CLOEXEC); err != nil {
				t.Fatal(err)
			}
		}
		// The relay gets: the driver's commands (read), the driver's
		// replies (write), the browser's commands (write), the browser's
		// replies (read).
		send = []int{p[0][0], p[1][1], p[2][1], p[3][0]}
		keep = []*os.File{os.NewFile(uintptr(p[0][1]), "dw"), os.NewFile(uintptr(p[1][0]), "dr"), os.NewFile(uintptr(p[2][0]), "br"), os.NewFile(uintptr(p[3][1]), "bw")}
		return send, keep
	}
	handOver := func(token string, fds []int) *net.UnixConn {
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: rl.path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.WriteMsgUnix([]byte(token), syscall.UnixRights(fds...), nil); err != nil {
			t.Fatal(err)
		}
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return c
	}

	// An impostor: wrong token. Its pipes are closed by the relay, so the
	// far ends see EOF, and it gets no acknowledgement.
	send, keep := pipes()
	c := handOver("not-the-token", send)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("the impostor got an acknowledgement (%d bytes, %v)", n, err)
	}
	keep[2].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := keep[2].Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the impostor's pipe: %v, want EOF (closed by the relay)", err)
	}
	select {
	case a := <-got:
		t.Fatalf("the relay took the impostor: %+v", a)
	default:
	}

	// The launcher.
	send, keep = pipes()
	c = handOver(rl.token, send)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("no acknowledgement: %d bytes, %v", n, err)
	}
	if a := <-got; a.err != nil || !a.ok {
		t.Fatalf("accept: %+v", a)
	}
	defer relayClose()
	if _, err := keep[0].Write([]byte(`{"id":1,"method":"Browser.getVersion"}` + "\x00")); err != nil {
		t.Fatal(err)
	}
	// The relay speaks CBOR to the browser (--remote-debugging-pipe=cbor).
	want, err := cdpcbor.FromJSON(nil, []byte(`{"id":1,"method":"Browser.getVersion"}`))
	if err != nil {
		t.Fatal(err)
	}
	msg := make([]byte, len(want))
	if _, err := io.ReadFull(keep[2], msg); err != nil || !bytes.Equal(msg, want) {
		t.Fatalf("the browser got % x, %v; want % x", msg, err, want)
	}
	for _, f := range keep {
		f.Close()
	}
}
