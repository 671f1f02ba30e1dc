package http

import (
	"bytes"
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

// processOf reads pid's command name and parent (sysctl kern.proc.pid).
func processOf(pid int) (proc, int, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return proc{}, 0, false
	}
	comm := kp.Proc.P_comm[:]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	return proc{pid: pid, comm: string(comm)}, int(kp.Eproc.Ppid), true
}
