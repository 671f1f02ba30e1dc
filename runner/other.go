//go:build !linux && !darwin

package runner

import (
	"errors"
	"syscall"
)

// errUnsupported: reading tty modes and process tables is written for
// Linux and macOS only.
var errUnsupported = errors.New("not supported on this system (needs Linux or macOS)")

func ttyCanonical(string) (bool, error) { return false, errUnsupported }

func readProc(int) (procStat, error) { return procStat{}, errUnsupported }

func readProcTable() (procTable, error) { return nil, errUnsupported }

func killProc(int, syscall.Signal) error { return errUnsupported }
