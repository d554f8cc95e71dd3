package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// Client is a connection to a daemon. Its calls run one at a time.
type Client struct {
	c   *net.UnixConn
	r   *bufio.Reader
	pid int
}

// Dial connects to the daemon listening on socket. It returns an error
// matching ErrNoDaemon when there is no socket or nothing listens on it
// (the daemon died: a stale socket), and ErrPeer when the listener is a
// process of another user.
func Dial(ctx context.Context, socket string) (*Client, error) {
	var d net.Dialer
	if _, ok := ctx.Deadline(); !ok {
		d.Timeout = 5 * time.Second
	}
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w (%s)", ErrNoDaemon, socket)
		}
		return nil, fmt.Errorf("connecting to the session daemon: %w", err)
	}
	uc := conn.(*net.UnixConn)
	uid, pid, err := peerCred(uc)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("checking the session daemon: %w", err)
	}
	if uid != os.Getuid() {
		uc.Close()
		return nil, fmt.Errorf("%w: %s is served by uid %d", ErrPeer, socket, uid)
	}
	return &Client{c: uc, r: bufio.NewReaderSize(uc, 64<<10), pid: pid}, nil
}

// PID is the daemon's process id, as the kernel reported it.
func (c *Client) PID() int { return c.pid }

// Call sends a request and waits for its response, or for ctx to end (which
// closes the connection: the daemon still finishes the request).
func (c *Client) Call(ctx context.Context, req Request) (*Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.c.SetDeadline(time.Now()) })
	defer stop()
	if _, err := c.c.Write(append(b, '\n')); err != nil {
		return nil, c.callErr(ctx, err)
	}
	line, err := readLine(c.r, MaxResponseBytes)
	if err != nil {
		return nil, c.callErr(ctx, err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("reading the session daemon's response: %w", err)
	}
	if !resp.OK && resp.ExitCode == 0 {
		resp.ExitCode = ExitFailed
	}
	return &resp, nil
}

func (c *Client) callErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, errTooLong) {
		return fmt.Errorf("the session daemon's response is over the limit of %d bytes", MaxResponseBytes)
	}
	return fmt.Errorf("talking to the session daemon: %w", err)
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }
