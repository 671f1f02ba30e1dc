//go:build linux

package store

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// closedAgain returns a channel closed once something closes path after
// this call: with the file's lock held elsewhere, an opener that waits for
// the lock has then tried it once and been refused (each try opens the
// file, finds the lock taken and closes it again).
func closedAgain(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_CLOSE_WRITE|syscall.IN_CLOSE_NOWRITE); err != nil {
		_ = syscall.Close(fd)
		t.Fatal(err)
	}
	closed, stop, stopped := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		buf := make([]byte, 4096)
		for {
			n, err := syscall.Read(fd, buf)
			if n > 0 {
				close(closed)
				return
			}
			if err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EINTR) {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond): // poll the watch: nothing to read yet
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-stopped
		_ = syscall.Close(fd)
	})
	return closed
}
