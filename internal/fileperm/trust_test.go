package fileperm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckTrustDir_OnlyAProjectOfTheUsersOwn(t *testing.T) {
	uid := os.Geteuid()
	home := t.TempDir()
	project := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink("/", link); err != nil {
		t.Fatal(err)
	}
	if err := TrustDir(project, home, uid); err != nil {
		t.Fatalf("a project of one's own refused: %v", err)
	}
	for dir, why := range map[string]string{"/": "root directory", home: "home directory", link: "root directory", "/tmp": "writable by group or others"} {
		if err := TrustDir(dir, home, uid); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want %q", dir, err, why)
		}
	}
	if err := TrustDir(project, home, uid+1); err == nil || !strings.Contains(err.Error(), "not to you") {
		t.Errorf("a directory another uid owns: %v", err)
	}
	// A umask of 002 leaves a checkout writable by its owner's own
	// user-private group: that is the owner's.
	upg := t.TempDir()
	if err := os.Chmod(upg, 0o775); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(upg); err == nil && privateGroup(fi) {
		if err := TrustDir(upg, home, uid); err != nil {
			t.Errorf("a directory writable by the owner's user-private group: %v", err)
		}
	}
	if uid == 0 {
		if err := os.Chown(upg, -1, 65534); err != nil {
			t.Fatal(err)
		}
		if err := TrustDir(upg, home, uid); err == nil || !strings.Contains(err.Error(), "writable by group") {
			t.Errorf("a directory another group may write: %v", err)
		}
		other := t.TempDir()
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := TrustDir(other, home, uid); err == nil || !strings.Contains(err.Error(), "uid 65534") && !strings.Contains(err.Error(), "nobody") {
			t.Errorf("a directory nobody owns: %v", err)
		}
	}
}
