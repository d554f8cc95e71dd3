//go:build unix && !linux

package daemon

import (
	"errors"
	"net"
)

// peerCred is only implemented on Linux (SO_PEERCRED). Elsewhere every
// peer is refused: the gate fails closed, so sessions do not work.
func peerCred(c *net.UnixConn) (uid, pid int, err error) {
	return 0, 0, errors.New("checking the peer of a session socket needs Linux (SO_PEERCRED)")
}
