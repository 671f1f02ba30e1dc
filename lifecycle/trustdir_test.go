package lifecycle

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	if err := checkTrustDir(project, home, uid); err != nil {
		t.Fatalf("a project of one's own refused: %v", err)
	}
	for dir, why := range map[string]string{"/": "root directory", home: "home directory", link: "root directory", "/tmp": "writable by group or others"} {
		if err := checkTrustDir(dir, home, uid); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want %q", dir, err, why)
		}
	}
	if err := checkTrustDir(project, home, uid+1); err == nil || !strings.Contains(err.Error(), "not to you") {
		t.Errorf("a directory another uid owns: %v", err)
	}
	// A umask of 002 leaves a checkout writable by its owner's own
	// user-private group: that is the owner's.
	upg := t.TempDir()
	if err := os.Chmod(upg, 0o775); err != nil {
		t.Fatal(err)
	}
	if st, ok := statOf(t, upg); ok && userPrivateGroup(st.Uid, st.Gid) {
		if err := checkTrustDir(upg, home, uid); err != nil {
			t.Errorf("a directory writable by the owner's user-private group: %v", err)
		}
	}
	if uid == 0 {
		if err := os.Chown(upg, -1, 65534); err != nil {
			t.Fatal(err)
		}
		if err := checkTrustDir(upg, home, uid); err == nil || !strings.Contains(err.Error(), "writable by group") {
			t.Errorf("a directory another group may write: %v", err)
		}
		other := t.TempDir()
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := checkTrustDir(other, home, uid); err == nil || !strings.Contains(err.Error(), "uid 65534") && !strings.Contains(err.Error(), "nobody") {
			t.Errorf("a directory nobody owns: %v", err)
		}
	}
}

func statOf(t *testing.T, path string) (*syscall.Stat_t, bool) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return st, ok
}
