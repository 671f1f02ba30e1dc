package lifecycle

import (
	"path/filepath"
	"strings"

	"github.com/the-loop-dev/the-loop/sdk"
)

// CheckPrivatePath refuses path (what names it in the message) and every
// directory from stateRoot down to it — the state root included — when
// another user owns it or group or others may write it (sdk.CheckPrivate:
// such a file could be swapped, or payloads slipped in, by another local
// user). What does not exist yet passes; a path outside stateRoot is
// checked alone.
func CheckPrivatePath(stateRoot, path, what string) error {
	rel, err := filepath.Rel(stateRoot, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return sdk.CheckPrivate(path, what)
	}
	if err := sdk.CheckPrivate(stateRoot, "state root (state.root)"); err != nil {
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
		if err := sdk.CheckPrivate(cur, name); err != nil {
			return err
		}
	}
	return nil
}
