//go:build !linux

package runner

import (
	"errors"
	"syscall"
)

// errUnsupported: reading tty modes and process trees needs Linux.
var errUnsupported = errors.New("not supported on this system (needs Linux)")

func ttyCanonical(string) (bool, error) { return false, errUnsupported }

// procFS is the default Processes; outside Linux it knows no process.
type procFS struct{}

// Tree implements Processes.
func (procFS) Tree(pids []int) []Proc { return nil }

// Alive implements Processes.
func (procFS) Alive(Proc) bool { return false }

// Signal implements Processes.
func (procFS) Signal(Proc, syscall.Signal) error { return errUnsupported }
