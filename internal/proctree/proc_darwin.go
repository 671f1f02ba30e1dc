package proctree

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// processOf reads pid's command name and parent (sysctl kern.proc.pid).
func processOf(pid int) (Proc, int, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return Proc{}, 0, false
	}
	comm := kp.Proc.P_comm[:]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	return Proc{PID: pid, Comm: string(comm)}, int(kp.Eproc.Ppid), true
}
