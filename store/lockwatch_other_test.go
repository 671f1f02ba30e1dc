//go:build !linux

package store

import "testing"

// closedAgain cannot watch path without inotify: its channel is closed at
// once, and a test waiting on it proves less (its waiter may try the lock
// only after it is free).
func closedAgain(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	c := make(chan struct{})
	close(c)
	return c
}
