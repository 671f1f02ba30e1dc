package threadlog_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps_TheThreadLogIsARoomOfItsOwn: the thread log links the store and
// the root package of ours, nothing of lifecycle's; and lifecycle, which
// writes the outboxes the thread log takes, never imports it.
func TestDeps_TheThreadLogIsARoomOfItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	allowed := map[string]bool{
		"github.com/the-loop-dev/the-loop":           true,
		"github.com/the-loop-dev/the-loop/store":     true,
		"github.com/the-loop-dev/the-loop/redact":    true,
		"github.com/the-loop-dev/the-loop/threadlog": true,
	}
	for _, d := range deps(t, "./") {
		if strings.HasPrefix(d, "github.com/the-loop-dev/the-loop") && !allowed[d] {
			t.Errorf("threadlog depends on %s: it may import only store, redact and the root package", d)
		}
	}
	for _, d := range deps(t, "../lifecycle") {
		if d == "github.com/the-loop-dev/the-loop/threadlog" {
			t.Errorf("lifecycle depends on threadlog")
		}
	}
}

// deps lists the packages pkg depends on (go list -deps), test files
// left out.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}
