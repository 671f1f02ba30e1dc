package fileperm

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Which directories the-loop pre-seeds an agent CLI's trust for is the-loop's
// rule, the same for every harness (lifecycle's trust.go applies it): only
// a project of the user's own.

// TrustDir says why dir must not be pre-seeded as trusted (nil when
// it may): it, or the directory it resolves to, is the root directory, the
// home directory (home, $HOME or the user database's), not owned by the
// user uid, or writable by others, or by a group other than the owner's
// own user-private group (the group named after the owner, which a umask
// of 002 leaves checkouts writable by, as the ownership check allows for the
// config). A directory that cannot be read is refused too.
func TrustDir(dir, home string, uid int) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	paths := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		paths = append(paths, real)
	}
	homes := homeDirs(home)
	for _, p := range paths {
		if p == string(filepath.Separator) {
			return errors.New("it is the root directory")
		}
		for _, h := range homes {
			if p == h {
				return errors.New("it is the home directory")
			}
		}
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("it cannot be read (%v)", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && int(st.Uid) != uid {
			return fmt.Errorf("%s belongs to %s, not to you", p, trustOwner(st.Uid))
		}
		perm := fi.Mode().Perm()
		if perm&0o002 != 0 || perm&0o020 != 0 && !(ok && privateGroup(fi)) {
			return fmt.Errorf("%s is writable by group or others (mode %04o)", p, perm)
		}
	}
	return nil
}

// homeDirs are the home directories to refuse, cleaned and resolved.
func homeDirs(home string) []string {
	var out []string
	add := func(h string) {
		if h == "" {
			return
		}
		h = filepath.Clean(h)
		out = append(out, h)
		if real, err := filepath.EvalSymlinks(h); err == nil && real != h {
			out = append(out, real)
		}
	}
	add(home)
	add(os.Getenv("HOME"))
	if u, err := user.Current(); err == nil {
		add(u.HomeDir)
	}
	return out
}

// trustOwner names uid: its login name when the user database has it.
func trustOwner(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return "user " + u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
