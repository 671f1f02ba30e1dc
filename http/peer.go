package http

import (
	"context"
	"net"
	"os"
	"strings"
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
	socket bool   // the connection came in on a unix socket
	peer   Peer   // valid when err is nil
	err    error  // why the peer could not be read
	procs  []proc // the peer's ancestry, read once per connection
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
		pc.procs = ancestry(p.PID)
	}
	return context.WithValue(ctx, peerConnKey{}, pc)
}

// peerOfRequest returns the socket peer of a request's connection; socket
// is false for a TCP request.
func peerOfRequest(ctx context.Context) (pc peerConn, socket bool) {
	pc, ok := ctx.Value(peerConnKey{}).(peerConn)
	return pc, ok && pc.socket
}

// maxChain bounds the walk up a peer's ancestors.
const maxChain = 64

// proc is one process of a peer's ancestry.
type proc struct {
	pid  int
	comm string
}

// ancestry is pid and its ancestors, nearest first (at most maxChain;
// processChain reads them from the kernel).
func ancestry(pid int) []proc {
	var chain []proc
	for pid > 1 && len(chain) < maxChain {
		p, parent, ok := processOf(pid)
		if !ok {
			break
		}
		chain = append(chain, p)
		pid = parent
	}
	return chain
}

// underTmux reports whether a process of chain is a tmux server: only a
// peer below one can be in an agent's pane, so no other peer costs a tmux
// query.
func underTmux(chain []proc) bool {
	for _, p := range chain {
		if strings.HasPrefix(p.comm, "tmux") {
			return true
		}
	}
	return false
}

// pids are chain's pids, nearest first.
func pids(chain []proc) []int {
	out := make([]int, len(chain))
	for i, p := range chain {
		out[i] = p.pid
	}
	return out
}

// ownUID is the service's uid: the only one its socket answers.
var ownUID = os.Geteuid()

// ProcessChain is pid and its ancestors, nearest first, and whether one of
// them is a tmux server (only then can pid run in an agent's pane): what
// the socket reads of a peer, for a CLI that checks itself.
func ProcessChain(pid int) ([]int, bool) {
	chain := ancestry(pid)
	return pids(chain), underTmux(chain)
}
