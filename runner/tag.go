package runner

import (
	"context"
	"strings"
)

// TagOption is the tmux session user option SpawnIn stores
// loop.SpawnSpec.Tag in.
const TagOption = "@the-loop-tag"

// Tag returns the tag SpawnIn set on target's session (show-options -v
// @the-loop-tag), with ok true: "" when the session has no tag, or when
// tmux says the session (or its server) does not exist. ok is false when
// tmux did not answer, or answered something else (permission denied, …),
// and for a target that is not a the-loop session name (never asked).
func (t *Tmux) Tag(ctx context.Context, target string) (tag string, ok bool) {
	if err := guard(target); err != nil {
		t.log.Warn("refusing to read the tag of tmux target", "target", target, "error", err)
		return "", false
	}
	out, err := t.probe(ctx, "show-options", "-v", "-t", optionTarget(target), TagOption)
	switch {
	case err == nil:
		return strings.TrimSuffix(out, "\n"), true
	case absentAnswer(err) || unsetOption(err):
		return "", true
	}
	if answered(err) {
		t.log.Warn("tmux gave an unexpected answer reading a session's tag", "target", target, "error", err)
	}
	return "", false
}

// unsetOption reports whether tmux answered that the tag option is not set
// ("invalid option: @the-loop-tag" on tmux 3.3a); a usage error such as
// "unknown option -- a" is not that.
func unsetOption(err error) bool {
	return answered(err) && strings.Contains(strings.ToLower(stderrOf(err)), "option: "+TagOption)
}
