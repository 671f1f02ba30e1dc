package http

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerOf reads the peer of a unix-socket connection (LOCAL_PEERCRED for
// the uid, LOCAL_PEERPID for the pid).
func peerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var p Peer
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			credErr = err
			return
		}
		p.UID = int(cred.Uid)
		pid, err := unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		if err != nil {
			credErr = err
			return
		}
		p.PID = pid
	}); err != nil {
		return Peer{}, err
	}
	return p, credErr
}
