//go:build linux || darwin

package runner

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// killProc sends sig to pid with kill(2).
func killProc(pid int, sig syscall.Signal) error { return unix.Kill(pid, sig) }
