package http

import (
	"context"
	"net"
	"os"

	"github.com/the-loop-dev/the-loop/internal/proctree"
)

// The owner's channel: the service's unix socket. Every
// connection on it carries its peer's uid and pid, read by the kernel
// (SO_PEERCRED; LOCAL_PEERCRED and LOCAL_PEERPID on macOS), so a request
// there needs no token: a peer of another uid is refused, a peer whose
// process tree reaches a session's agent pane is that agent, and any other
// peer of the operator's uid is the operator. The socket skips the Host
// allow-list (no browser reaches it).

// Peer is the process at the other end of a socket connection.
type Peer struct {
	UID int // the peer's effective uid
	PID int // the peer's pid (0 when the kernel did not say)
}

// peerConn is what ConnContext leaves on a connection's context.
type peerConn struct {
	socket bool            // the connection came in on a unix socket
	peer   Peer            // valid when err is nil
	err    error           // why the peer could not be read
	procs  []proctree.Proc // the peer's ancestry, read once per connection
}

// peerConnKey is the connection context's key of the peerConn.
type peerConnKey struct{}

// connContext records, for a unix-socket connection, who its peer is.
func connContext(ctx context.Context, c net.Conn) context.Context {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return ctx
	}
	p, err := peerOf(uc)
	pc := peerConn{socket: true, peer: p, err: err}
	if err == nil {
		pc.procs = proctree.Ancestry(p.PID)
	}
	return context.WithValue(ctx, peerConnKey{}, pc)
}

// peerOfRequest returns the socket peer of a request's connection; socket
// is false for a TCP request.
func peerOfRequest(ctx context.Context) (pc peerConn, socket bool) {
	pc, ok := ctx.Value(peerConnKey{}).(peerConn)
	return pc, ok && pc.socket
}

// ownUID is the service's uid: the only one its socket answers.
var ownUID = os.Geteuid()
