package config

import (
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// TestLocate_RefusesAnExplicitPathThatDoesNotExist: a path the operator
// named (the flag, or $THE_LOOP_CLI_CONFIG) must exist — a typo must not
// quietly mean the defaults — while the implicit lookups still fall back.
func TestLocate_RefusesAnExplicitPathThatDoesNotExist(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	t.Setenv("HOME", home)
	t.Setenv(EnvConfig, "")
	missing := filepath.Join(cwd, "typo.yaml")

	_, err := Locate("typo.yaml")
	if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "-c/--config") {
		t.Fatalf("flag: %v", err)
	}
	t.Setenv(EnvConfig, missing)
	_, err = Locate("")
	if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "$"+EnvConfig) {
		t.Fatalf("env: %v", err)
	}

	t.Setenv(EnvConfig, "")
	if path, err := Locate(""); err != nil || path != "" {
		t.Fatalf("nothing found: %q %v (want the defaults)", path, err)
	}
	present := filepath.Join(cwd, "here.yaml")
	mkfile(t, present)
	if path, err := Locate("here.yaml"); err != nil || path != present {
		t.Fatalf("an existing flag path: %q %v", path, err)
	}
}
