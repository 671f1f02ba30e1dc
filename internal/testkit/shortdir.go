package testkit

import (
	"os"
	"testing"
)

// ShortDir is a directory under the system's temporary directory with a
// short name ("tl" and a few digits), removed when the test ends: a state
// root in it keeps the service's socket path within the 100 bytes a socket
// address holds, which t.TempDir() (named after the test) may not.
func ShortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tl")
	if err != nil {
		t.Fatalf("making a short temporary directory: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
