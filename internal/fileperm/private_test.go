package fileperm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
)

func TestCheckPrivatePath_PassesWhatIsPrivateOrMissing(t *testing.T) {
	root := t.TempDir()
	if err := fileperm.CheckPrivatePath(root, filepath.Join(root, "local", "hooks", "x.json"), "hook settings file"); err != nil {
		t.Fatalf("missing parts: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "local", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fileperm.CheckPrivatePath(root, filepath.Join(root, "local", "hooks", "x.json"), "hook settings file"); err != nil {
		t.Fatalf("0755 directories (readable, not writable, by others): %v", err)
	}
}

// TestCheckPrivatePath_RefusesWhatGroupOrOthersMayWrite: the state root, a
// directory on the way and the file itself are each refused when group or
// others may write them, the refusal naming the path and the remedy.
func TestCheckPrivatePath_RefusesWhatGroupOrOthersMayWrite(t *testing.T) {
	for _, c := range []struct{ name, bad string }{
		{"the state root", "."},
		{"a directory on the way", "local"},
		{"the file", "local/x.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.Chmod(root, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(root, "local"), 0o700); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(root, "local", "x.json")
			if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(root, filepath.FromSlash(c.bad))
			if err := os.Chmod(bad, 0o720); err != nil {
				t.Fatal(err)
			}
			err := fileperm.CheckPrivatePath(root, file, "test file")
			if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), filepath.Clean(bad)+":") || !strings.Contains(err.Error(), "chmod go-w") {
				t.Fatalf("got %v, want an EINVALID refusal naming %s", err, bad)
			}
		})
	}
}
