package fileperm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
)

// nobody is the uid tests give a file to stand for another local user.
const nobody = 65534

// asRoot skips unless the test may chown (CI runs as root).
func asRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root; run the tests as root to check ownership refusals")
	}
}

// private is a fresh 0700 directory (t.TempDir's parents are /tmp, sticky).
func private(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

func write(t *testing.T, p string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(p, []byte("version: 1\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// refused fails unless err is an EINVALID refusal whose message holds
// every want.
func refused(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("not refused; want a refusal naming %q", want)
	}
	if loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("code %q, want invalid: %v", loop.ErrorCode(err), err)
	}
	for _, w := range want {
		if !strings.Contains(loop.ErrorMessage(err), w) {
			t.Errorf("the refusal does not name %q: %v", w, err)
		}
	}
}

func TestCheck_OwnPrivateFilePasses(t *testing.T) {
	p := write(t, filepath.Join(private(t), "cli-config.yaml"), 0o644)
	if err := fileperm.Check(p, "CLI config"); err != nil {
		t.Fatal(err)
	}
}

func TestCheck_MissingPathPasses(t *testing.T) {
	if err := fileperm.Check(filepath.Join(private(t), "nope", "state"), "state root"); err != nil {
		t.Fatal(err)
	}
}

func TestCheck_OtherWritableFileRefused(t *testing.T) {
	p := write(t, filepath.Join(private(t), "cli-config.yaml"), 0o646)
	refused(t, fileperm.Check(p, "CLI config"), p, "0646", "chmod o-w "+p)
}

func TestCheck_FileOwnedByAnotherUserRefused(t *testing.T) {
	asRoot(t)
	p := write(t, filepath.Join(private(t), "cli-config.yaml"), 0o644)
	if err := os.Chown(p, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	refused(t, fileperm.Check(p, "CLI config"), p, "uid 65534", "0644", "remove it")
}

func TestCheck_DirectoryOwnedByAnotherUserRefused(t *testing.T) {
	asRoot(t)
	d := filepath.Join(private(t), "state")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	refused(t, fileperm.Check(d, "state root (state.root)"), d, "uid 65534", "state root")
}

// TestCheck_GroupWriteOnlyForThePrivateGroup: 0664 passes when the group
// is named after the owner (root's group root), and is refused for
// another group.
func TestCheck_GroupWriteOnlyForThePrivateGroup(t *testing.T) {
	asRoot(t)
	p := write(t, filepath.Join(private(t), "cli-config.yaml"), 0o664)
	if err := os.Chown(p, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := fileperm.Check(p, "CLI config"); err != nil {
		t.Fatalf("root:root 0664: %v", err)
	}
	if err := os.Chown(p, 0, nobody); err != nil {
		t.Fatal(err)
	}
	refused(t, fileperm.Check(p, "CLI config"), p, "0664", "gid 65534", "chmod g-w "+p)
}

func TestCheck_ParentWritableByOthersRefusedUnlessSticky(t *testing.T) {
	d := private(t)
	shared := filepath.Join(d, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	p := write(t, filepath.Join(shared, "cli-config.yaml"), 0o644)
	refused(t, fileperm.Check(p, "CLI config"), p, shared, "0777", "chmod o-w "+shared)
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := fileperm.Check(p, "CLI config"); err != nil {
		t.Fatalf("under a sticky directory: %v", err)
	}
}

// TestCheck_SymlinksResolvedAndEachChecked: a link to an unsafe file is
// refused naming the target; a link another user owns is refused naming
// the link.
func TestCheck_SymlinksResolvedAndEachChecked(t *testing.T) {
	d := private(t)
	target := write(t, filepath.Join(d, "real.yaml"), 0o646)
	link := filepath.Join(d, "cli-config.yaml")
	if err := os.Symlink("real.yaml", link); err != nil {
		t.Fatal(err)
	}
	refused(t, fileperm.Check(link, "CLI config"), link, target, "chmod o-w "+target)
	if err := os.Chmod(target, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fileperm.Check(link, "CLI config"); err != nil {
		t.Fatalf("a link to a safe file: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root")
	}
	if err := os.Lchown(link, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	refused(t, fileperm.Check(link, "CLI config"), "the symlink "+link, "uid 65534")
}

// TestCheck_LinkedDirectoryOnTheWayChecked: a directory reached through a
// symlink is checked where it really is.
func TestCheck_LinkedDirectoryOnTheWayChecked(t *testing.T) {
	d := private(t)
	open := filepath.Join(d, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(open, "cli-config.yaml"), 0o644)
	if err := os.Symlink(open, filepath.Join(d, "proj")); err != nil {
		t.Fatal(err)
	}
	refused(t, fileperm.Check(filepath.Join(d, "proj", "cli-config.yaml"), "CLI config"), open, "chmod o-w "+open)
}

func TestWalkable(t *testing.T) {
	d := private(t)
	if err := fileperm.Walkable(d); err != nil {
		t.Fatalf("a private directory: %v", err)
	}
	if err := os.Chmod(d, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := fileperm.Walkable(d); err == nil {
		t.Fatal("a sticky directory others may write is walkable")
	}
}

// TestDropGroupWrite: the owner's own group's write bit is dropped;
// another group's is left for Check to refuse.
func TestDropGroupWrite(t *testing.T) {
	asRoot(t)
	d := private(t)
	if err := os.Chmod(d, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := fileperm.DropGroupWrite(d); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %04o, want 0755", fi.Mode().Perm())
	}
	if err := os.Chmod(d, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, 0, nobody); err != nil {
		t.Fatal(err)
	}
	if err := fileperm.DropGroupWrite(d); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o775 {
		t.Fatalf("another group's bit changed: mode %04o", fi.Mode().Perm())
	}
}
