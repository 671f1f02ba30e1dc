package http

import (
	"bytes"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// peerOf reads the peer of a unix-socket connection (SO_PEERCRED).
func peerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if credErr != nil {
		return Peer{}, credErr
	}
	return Peer{UID: int(cred.Uid), PID: int(cred.Pid)}, nil
}

// processOf reads pid's command name and parent from /proc/<pid>/stat.
func processOf(pid int) (proc, int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, 0, false
	}
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return proc{}, 0, false
	}
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 2 {
		return proc{}, 0, false
	}
	parent, err := strconv.Atoi(f[1])
	if err != nil {
		return proc{}, 0, false
	}
	return proc{pid: pid, comm: string(data[open+1 : end])}, parent, true
}
