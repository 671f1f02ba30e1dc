package harness

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A Claude-config lock another process holds is waited for a
// bounded time, never without end.
func TestLockFile_GivesUpWithinItsBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claude.json.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Another open file description: flock excludes it like another process.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	unlock, err := lockFile(path, 300*time.Millisecond)
	if err == nil {
		unlock()
		t.Fatal("took a lock another holder has")
	}
	// It gave up by itself (it returned at all, the lock still held), after
	// waiting its whole bound, and says so.
	if d := time.Since(start); d < 300*time.Millisecond || !strings.Contains(err.Error(), "held it for 300ms") {
		t.Fatalf("after %s: %v", d, err)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	unlock, err = lockFile(path, 300*time.Millisecond)
	if err != nil {
		t.Fatalf("free lock: %v", err)
	}
	unlock()
}
