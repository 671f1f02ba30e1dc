package sdk

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The owner's channel: a service listens on a unix socket
// in its state root, <state.root>/service.sock unless service.socket moves
// it, and records the socket's path in <state.root>/local/service.socket.
// Over the socket no token is sent: the service reads the peer's uid and
// pid from the kernel, refuses another uid, and gives a process in an
// agent's pane an agent's rights.
const (
	// SocketFile is the socket's name in the state root by default.
	SocketFile = "service.sock"
	// SocketRecordFile is where, under the state root, a running service
	// records its socket's path.
	SocketRecordFile = "local/service.socket"
)

// socketBase is the base URL of a socket client's requests (the service
// skips the Host allow-list on its socket).
const socketBase = "http://the-loop.sock"

// LocalSocket is the socket of stateRoot's service: the path the running
// service recorded in <stateRoot>/local/service.socket, else
// <stateRoot>/service.sock.
func LocalSocket(stateRoot string) string {
	if data, err := os.ReadFile(filepath.Join(stateRoot, SocketRecordFile)); err == nil {
		if p := strings.TrimSpace(string(data)); p != "" {
			return p
		}
	}
	return filepath.Join(stateRoot, SocketFile)
}

// Local is a client of stateRoot's service over its socket (LocalSocket):
// what a program of the operator's on the service's machine uses. It sends
// no token; WithHTTPClient's timeout is kept, its transport is not.
func Local(stateRoot string, opts ...Option) *Client {
	return Socket(LocalSocket(stateRoot), opts...)
}

// Socket is a client of the service listening on the unix socket at path.
// Every connection first checks that path is a socket owned by this
// process's uid, so a socket another user put in its place is never
// talked to.
func Socket(path string, opts ...Option) *Client {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	hc := &http.Client{Transport: &http.Transport{
		Proxy:              nil,
		DisableCompression: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if err := CheckSocket(path); err != nil {
				return nil, err
			}
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}
	if o.http != nil {
		hc.Timeout = o.http.Timeout
	}
	c := &conn{base: socketBase, http: hc, socket: path}
	return &Client{Standing: &Standing{c: c}, WorkItems: &WorkItems{c: c}, Channels: &Channels{c: c}, Approvals: &Approvals{c: c}, c: c}
}

// SocketOwnerError says the socket is not this user's: another uid's
// socket, or not a socket at all.
type SocketOwnerError struct {
	Path   string
	Detail string
}

// Error names the path and what is wrong with it.
func (e *SocketOwnerError) Error() string {
	return fmt.Sprintf("refusing the service socket %s: %s; remove it, or set service.socket to a path in a directory only you can write", e.Path, e.Detail)
}

// CheckSocket refuses a path that is not a socket owned by this uid
// (*SocketOwnerError). A missing socket is a dial error (nothing runs).
func CheckSocket(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return &net.OpError{Op: "dial", Net: "unix", Err: err}
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return &SocketOwnerError{Path: path, Detail: "it is not a socket (" + fi.Mode().String() + ")"}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return &SocketOwnerError{Path: path, Detail: fmt.Sprintf("it belongs to uid %d, not to this user (uid %d)", st.Uid, os.Geteuid())}
	}
	return nil
}
