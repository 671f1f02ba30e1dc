package fileperm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
)

// CheckPrivate refuses a file or directory (what names it in the message)
// that another user owns or that group or others may write: what the-loop
// writes under its state root (the hook spool, the hook settings, the MCP
// config files, the socket record) could otherwise be swapped, or payloads
// slipped in, by another local user. A path that does not exist passes.
// Stricter than Check (no group write bit at all, no owner but this user),
// it holds what the-loop itself creates.
func CheckPrivate(path, what string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot check the %s %s: %w", what, path, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return loop.Invalid("refusing the %s %s: it is owned by uid %d, not by this user (uid %d); chown it or choose another state.root",
			what, path, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return loop.Invalid("refusing the %s %s: its mode %04o lets group or others write it; run chmod go-w %s",
			what, path, perm, path)
	}
	return nil
}

// CheckPrivatePath refuses path (what names it in the message) and every
// directory from stateRoot down to it — the state root included — when
// another user owns it or group or others may write it (CheckPrivate).
// What does not exist yet passes; a path outside stateRoot is checked
// alone.
func CheckPrivatePath(stateRoot, path, what string) error {
	rel, err := filepath.Rel(stateRoot, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return CheckPrivate(path, what)
	}
	if err := CheckPrivate(stateRoot, "state root (state.root)"); err != nil {
		return err
	}
	if rel == "." {
		return nil
	}
	cur := stateRoot
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		name := "directory of the " + what
		if i == len(parts)-1 {
			name = what
		}
		if err := CheckPrivate(cur, name); err != nil {
			return err
		}
	}
	return nil
}
