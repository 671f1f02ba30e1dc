//go:build linux || darwin

package runner

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal (its modes can be read), as
// an attaching tmux client needs its standard input and output to be.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), termiosGet)
	return err == nil
}
