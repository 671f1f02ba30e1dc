//go:build linux || darwin

package runner

import "golang.org/x/sys/unix"

// ttyCanonical reports whether the terminal at path is in canonical mode
// (ICANON), opening it without becoming its controlling process. The
// request that reads the modes is the system's (termiosGet: TCGETS on
// Linux, TIOCGETA on macOS).
func ttyCanonical(path string) (bool, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	tio, err := unix.IoctlGetTermios(fd, termiosGet)
	if err != nil {
		return false, err
	}
	return tio.Lflag&unix.ICANON != 0, nil
}
