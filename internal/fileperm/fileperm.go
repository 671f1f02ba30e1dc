// Package fileperm holds the ownership rules every load applies to what the
// operator's processes read and obey, as git refuses an unsafe directory:
// the CLI config and the state root belong to the operator or root and no
// other user may write them; the directories above them have no
// other-write bit unless sticky; symlinks are resolved and each link
// checked. It also holds the stricter rule for what the-loop itself writes
// under the state root (CheckPrivate, CheckPrivatePath): this user's, with
// no group or other write bit, from the state root down. The CLI and the
// service both use it. It may import the standard library and the root
// package only.
package fileperm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
)

// maxLinks bounds the symlinks one path may pass through (as the kernel's
// ELOOP does).
const maxLinks = 40

// Check refuses path (what names it in the message, e.g. "CLI config")
// unless it is safe to load: every symlink on the way is owned by this user
// or root, every directory on the way has no other-write bit unless it is
// sticky, and the file or directory it resolves to is owned by this user or
// root, is not writable by others, and is writable by its group only when
// that group is its owner's user-private group (the group named after the
// owner). The refusal (EINVALID) names the path, its owner and mode, and the
// remedy. A path whose tail does not exist yet passes as far as it exists
// (what the-loop creates there, it creates private).
func Check(path, what string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot check the %s %s: %w", what, path, err)
	}
	err = walk(abs, func(p string, fi fs.FileInfo, kind step) error {
		switch kind {
		case stepLink:
			return ownedByUs(path, what, p, fi, "the symlink ")
		case stepDir:
			if fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
				return loop.Invalid("refusing the %s %s: the directory %s above it (%s, mode %04o) lets others write it and is not sticky, so another user could replace what it holds; run chmod o-w %s",
					what, path, p, owner(fi), fi.Mode().Perm(), p)
			}
			return nil
		default:
			return Safe(path, what, p, fi)
		}
	})
	if errors.As(err, new(notThere)) {
		return nil
	}
	return err
}

// Safe is Check's verdict on the resolved file or directory itself (fi is
// its stat; shown names it as the operator gave it, at the resolved path
// p).
func Safe(shown, what, p string, fi fs.FileInfo) error {
	if err := ownedByUs(shown, what, p, fi, ""); err != nil {
		return err
	}
	perm := fi.Mode().Perm()
	if perm&0o002 != 0 {
		return loop.Invalid("refusing the %s %s: %s (%s, mode %04o) lets others write it; run chmod o-w %s",
			what, shown, at(shown, p), owner(fi), perm, p)
	}
	if perm&0o020 != 0 && !privateGroup(fi) {
		return loop.Invalid("refusing the %s %s: %s (%s, mode %04o) lets its group %s write it, which is not its owner's own group; run chmod g-w %s",
			what, shown, at(shown, p), owner(fi), perm, groupName(fi), p)
	}
	return nil
}

// Walkable reports, as nil or the reason, whether config discovery may look
// in dir and go on above it: dir is owned by this user or root and no other
// user may write it (a sticky bit does not help here: in /tmp anyone may
// plant a .the-loop of their own).
func Walkable(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if err := Safe(dir, "directory", dir, fi); err != nil {
		return err
	}
	return nil
}

type step int

const (
	stepDir  step = iota // a directory the path passes through
	stepLink             // a symlink the path passes through (its own stat)
	stepLast             // what the path resolves to
)

// walk resolves abs one component at a time, calling visit for every
// directory passed through (the root included), every symlink (its Lstat)
// and what the path resolves to. It ends with errNotThere at the first
// component that does not exist.
func walk(abs string, visit func(p string, fi fs.FileInfo, kind step) error) error {
	todo := split(abs)
	cur, links := "/", 0
	for {
		fi, err := os.Stat(cur) // cur holds no symlink: each was resolved
		if err != nil {
			return statErr(cur, err)
		}
		if len(todo) == 0 {
			return visit(cur, fi, stepLast)
		}
		if err := visit(cur, fi, stepDir); err != nil {
			return err
		}
		c := todo[0]
		todo = todo[1:]
		if c == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		li, err := os.Lstat(next)
		if err != nil {
			return statErr(next, err)
		}
		if li.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return loop.Invalid("cannot check %s: more than %d symlinks on the way", abs, maxLinks)
		}
		if err := visit(next, li, stepLink); err != nil {
			return err
		}
		target, err := os.Readlink(next)
		if err != nil {
			return loop.Errorf(loop.EINTERNAL, "cannot read the symlink %s: %w", next, err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(split(target), todo...)
	}
}

// split is p's components, "" and "." left out, ".." kept.
func split(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// notThere ends a walk at a component that does not exist; Check passes
// it (nothing is there to refuse yet).
type notThere struct{}

func (notThere) Error() string { return "does not exist" }

// statErr is notThere for a path that does not exist, else an EINTERNAL
// error naming it.
func statErr(p string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return notThere{}
	}
	return loop.Errorf(loop.EINTERNAL, "cannot check %s: %w", p, err)
}

// ownedByUs refuses fi (at p, reached from shown) unless this user or root
// owns it; kind is "" for the file itself, "the symlink " for a link on the
// way.
func ownedByUs(shown, what, p string, fi fs.FileInfo, kind string) error {
	uid, ok := uidOf(fi)
	if !ok || uid == 0 || uid == os.Geteuid() {
		return nil
	}
	where := at(shown, p)
	if kind != "" {
		where = kind + p
	}
	return loop.Invalid("refusing the %s %s: %s is owned by %s (mode %04o), not by this user (%s) or root, so another user decides what it holds; "+
		"if it is yours, chown -h %s %s, else remove it",
		what, shown, where, userName(uid), fi.Mode().Perm(), userName(os.Geteuid()), strconv.Itoa(os.Geteuid()), p)
}

// at says where a refusal's file is: "it" when shown is p, else the
// resolved path.
func at(shown, p string) string {
	if abs, err := filepath.Abs(shown); err == nil && abs == p {
		return "it"
	}
	return "its target " + p
}

// privateGroup reports whether fi's group is its owner's user-private
// group: a group named after the owner (as a umask of 002 leaves files on
// Debian, Ubuntu and Fedora).
func privateGroup(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10))
	if err != nil {
		return false
	}
	g, err := user.LookupGroupId(strconv.FormatUint(uint64(st.Gid), 10))
	if err != nil {
		return false
	}
	return g.Name == u.Username
}

// uidOf is fi's owner.
func uidOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// owner words fi's owner: "owner uid N (name)".
func owner(fi fs.FileInfo) string {
	uid, ok := uidOf(fi)
	if !ok {
		return "owner unknown"
	}
	return "owner " + userName(uid)
}

// userName is "uid N (name)", or "uid N" when the name is unknown.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

// groupName is "gid N (name)" of fi's group.
func groupName(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "unknown"
	}
	if g, err := user.LookupGroupId(strconv.FormatUint(uint64(st.Gid), 10)); err == nil {
		return fmt.Sprintf("gid %d (%s)", st.Gid, g.Name)
	}
	return fmt.Sprintf("gid %d", st.Gid)
}

// DropGroupWrite removes the group write bit of dir when it has one that
// Check allows (its owner's user-private group, as a umask of 002 leaves a
// checkout's .the-loop): what the-loop keeps in a state root (the token,
// the hook spool) is checked more strictly, with no group write at all. A
// dir that does not exist, has no such bit or fails Check is left alone
// (Check reports the last).
func DropGroupWrite(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm()&0o020 == 0 || !fi.IsDir() {
		return nil
	}
	if Safe(dir, "state root (state.root)", dir, fi) != nil {
		return nil
	}
	if err := os.Chmod(dir, fi.Mode().Perm()&^0o020); err != nil {
		return loop.Errorf(loop.EINVALID, "cannot drop the group write bit of %s (chmod g-w): %w", dir, err)
	}
	return nil
}
