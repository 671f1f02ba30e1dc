//go:build !linux && !darwin

package http

import (
	"errors"
	"net"
)

// peerOf cannot read a socket peer on this system: every socket request
// is refused.
func peerOf(*net.UnixConn) (Peer, error) {
	return Peer{}, errors.New("reading a socket peer's credentials is supported on Linux and macOS only")
}
