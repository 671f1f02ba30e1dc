//go:build !loop_omit_service

package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// listenSocket binds the owner's channel: the unix socket
// at cfg.SocketPath(), 0600 in a directory only the operator may write. The
// caller holds the state root's pid lock, so a socket file left there is a
// dead service's and is replaced — unless a service answers on it (a
// service.socket two state roots share), which is refused. A path longer
// than config.MaxSocketPath is refused, naming service.socket.
func listenSocket(cfg *config.Config) (net.Listener, error) {
	path := cfg.SocketPath()
	if len(path) > config.MaxSocketPath {
		return nil, loop.Errorf(loop.EINTERNAL, "the service socket %s is %d bytes long, over the %d a socket path may hold; set service.socket to a shorter path (for example /run/user/%d/the-loop.sock)",
			path, len(path), config.MaxSocketPath, os.Getuid())
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "cannot make the directory of the service socket %s (service.socket): %w", path, err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, loop.Errorf(loop.EINTERNAL, "the service socket %s exists and is not a socket (%s); remove it or set service.socket elsewhere", path, fi.Mode())
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			_ = c.Close()
			return nil, loop.Errorf(loop.EINTERNAL, "another service answers on the socket %s (service.socket); give each state root its own socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, loop.Errorf(loop.EINTERNAL, "cannot remove the stale service socket %s: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "cannot listen on the service socket %s (service.socket): %w", path, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, loop.Errorf(loop.EINTERNAL, "cannot make the service socket %s private (chmod 0600): %w", path, err)
	}
	return ln, nil
}

// listenTCP binds service.host:service.port for the dashboard, /mcp and
// the operator's own clients. A port another process holds is no failure:
// the service runs on its socket alone and degraded says so ("127.0.0.1:4114
// held by uid N: dashboard and /mcp unavailable"); ln is then nil.
func listenTCP(cfg *config.Config) (ln net.Listener, degraded string, err error) {
	addr := cfg.Service.Addr()
	ln, err = net.Listen("tcp", addr)
	if err == nil {
		return ln, "", nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return nil, "", loop.Errorf(loop.EINTERNAL, "cannot listen on %s (service.host, service.port): %w", addr, err)
	}
	holder := "another process"
	if uid, ok := portHolder(cfg.Service.Port); ok {
		holder = "uid " + strconv.Itoa(uid)
	}
	return nil, fmt.Sprintf("%s held by %s: dashboard and /mcp unavailable; the service answers on its socket %s only (free the port, or set service.port, and run `the-loop restart`)",
		addr, holder, cfg.SocketPath()), nil
}

// closeListener closes ln when there is one.
func closeListener(ln net.Listener) {
	if ln != nil {
		_ = ln.Close()
	}
}

// portHolder is the uid of the process listening on TCP port (from
// /proc/net/tcp and tcp6 on Linux; false elsewhere or when not found).
func portHolder(port int) (int, bool) {
	want := fmt.Sprintf(":%04X", port)
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st tx:rx tr:tm retrnsmt uid …
			if len(f) < 8 || !strings.HasSuffix(f[1], want) || f[3] != "0A" {
				continue
			}
			if uid, err := strconv.Atoi(f[7]); err == nil {
				return uid, true
			}
		}
	}
	return 0, false
}
