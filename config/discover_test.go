package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// project is a fresh directory holding .the-loop/cli-config.yaml and a
// subdirectory a/b; it returns the project and the config's path.
func project(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".the-loop", FileName)
	mkfile(t, cfg)
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, cfg
}

func TestDiscover_WalksUpToTheFirstConfig(t *testing.T) {
	dir, cfg := project(t)
	for _, from := range []string{dir, filepath.Join(dir, "a"), filepath.Join(dir, "a", "b")} {
		if got := Discover(from); got != cfg {
			t.Errorf("Discover(%s) = %q, want %q", from, got, cfg)
		}
	}
	inner := filepath.Join(dir, "a", ".the-loop", FileName)
	mkfile(t, inner)
	if got := Discover(filepath.Join(dir, "a", "b")); got != inner {
		t.Errorf("the nearest config wins: got %q, want %q", got, inner)
	}
}

// TestDiscover_StopsAtADirectoryOthersMayWrite: a directory others may
// write — sticky or not — ends the walk: what lies in it or above it is
// never found.
func TestDiscover_StopsAtADirectoryOthersMayWrite(t *testing.T) {
	dir, _ := project(t)
	for _, mode := range []os.FileMode{0o777, 0o777 | os.ModeSticky} {
		if err := os.Chmod(filepath.Join(dir, "a"), mode); err != nil {
			t.Fatal(err)
		}
		if got := Discover(filepath.Join(dir, "a", "b")); got != "" {
			t.Errorf("a %v directory on the way: found %q", mode, got)
		}
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if got := Discover(dir); got != "" {
		t.Errorf("a working directory others may write: found %q", got)
	}
}

// TestDiscover_StopsAtADirectoryAnotherUserOwns: as root, a directory
// chowned to nobody ends the walk.
func TestDiscover_StopsAtADirectoryAnotherUserOwns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root; run the tests as root to check ownership refusals")
	}
	dir, _ := project(t)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if got := Discover(filepath.Join(dir, "a", "b")); got != "" {
		t.Errorf("through a directory nobody owns: found %q", got)
	}
}

// TestLocate_RefusesAnUnsafeConfigNeverSkipsIt: a discovered config others
// may write is refused (EINVALID, naming it), not passed over for the one
// in HOME.
func TestLocate_RefusesAnUnsafeConfigNeverSkipsIt(t *testing.T) {
	dir, cfg := project(t)
	home := t.TempDir()
	mkfile(t, filepath.Join(home, ".the-loop", FileName))
	t.Setenv("HOME", home)
	t.Setenv(EnvConfig, "")
	t.Chdir(filepath.Join(dir, "a", "b"))
	if err := os.Chmod(cfg, 0o666); err != nil {
		t.Fatal(err)
	}
	path, err := Locate("")
	if loop.ErrorCode(err) != loop.EINVALID || path != cfg || !strings.Contains(err.Error(), cfg) || !strings.Contains(err.Error(), "chmod o-w") {
		t.Fatalf("Locate = %q, %v; want the refusal of %s", path, err, cfg)
	}
	if _, err := Locate(cfg); loop.ErrorCode(err) != loop.EINVALID {
		t.Errorf("Locate(%s), given with -c: %v", cfg, err)
	}
	if err := os.Chmod(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if path, err := Locate(""); err != nil || path != cfg {
		t.Fatalf("made safe: %q %v", path, err)
	}
}
