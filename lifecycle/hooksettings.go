package lifecycle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
)

// HookEvents are the Claude Code hooks every claude spawn declares: the-loop hears its agents through them.
var HookEvents = []string{"SessionStart", "UserPromptSubmit", "Stop", "Notification", "PostToolUse", "SessionEnd"}

// hookTimeoutSeconds is the timeout Claude Code gives our hook command;
// the command itself ends within 2 s.
const hookTimeoutSeconds = 10

// HookSettingsPath is where the settings file of the agent in target
// lives: <state.root>/local/hooks/<target>.json.
func HookSettingsPath(stateRoot, target string) string {
	return filepath.Join(stateRoot, "local", "hooks", target+".json")
}

// HookCommand is the shell command Claude Code runs for every hook of the
// session ref: `<bin> hook --state-root <dir> --session <ref>`, each part
// shell-quoted.
func HookCommand(bin, stateRoot, ref string) string {
	return shellQuote(bin) + " hook --state-root " + shellQuote(stateRoot) + " --session " + shellQuote(ref)
}

// shellQuote quotes s for sh: single quotes, a quote inside as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// withHookSettings writes the settings file of the spawn into target (the
// operator's own --settings from args merged in: their keys kept, their
// hooks beside ours) and returns args with `--settings <file>` first and
// the operator's --settings dropped. cwd resolves a relative settings path.
// A settings file, or a directory above it up to the state root, that
// another user owns or others may write is refused (fileperm.CheckPrivatePath).
func withHookSettings(bin, stateRoot, target, ref, cwd string, args []string) ([]string, error) {
	doc := map[string]any{}
	rest := make([]string, 0, len(args)+2)
	for i := 0; i < len(args); i++ {
		a := args[i]
		var value string
		switch {
		case a == "--settings" && i+1 < len(args):
			value = args[i+1]
			i++
		case strings.HasPrefix(a, "--settings="):
			value = strings.TrimPrefix(a, "--settings=")
		default:
			rest = append(rest, a)
			continue
		}
		if err := mergeSettings(doc, value, cwd); err != nil {
			return nil, err
		}
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	cmd := HookCommand(bin, stateRoot, ref)
	for _, ev := range HookEvents {
		groups, _ := hooks[ev].([]any)
		hooks[ev] = append(groups, map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": cmd, "timeout": hookTimeoutSeconds,
		}}})
	}
	doc["hooks"] = hooks
	path := HookSettingsPath(stateRoot, target)
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, loop.Internal("encoding the hook settings for %s: %v", target, err)
	}
	if err := fileperm.CheckPrivatePath(stateRoot, path, "hook settings file (the agent's --settings)"); err != nil {
		return nil, err
	}
	if err := writePrivate(path, append(data, '\n')); err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "cannot write the hook settings %s (the agent's --settings): %w; check that state.root is writable", path, err)
	}
	return append([]string{"--settings", path}, rest...), nil
}

// mergeSettings merges one operator --settings value (a file, or inline
// JSON as Claude Code also takes) into doc: keys replaced, hooks of each
// event appended.
func mergeSettings(doc map[string]any, value, cwd string) error {
	data := []byte(value)
	what := "the inline --settings JSON in harnessArgs"
	if !strings.HasPrefix(strings.TrimSpace(value), "{") {
		path := value
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		what = "the --settings file " + path + " in harnessArgs"
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return loop.Invalid("cannot read %s: %v; fix the path or drop the flag", what, err)
		}
	}
	var theirs map[string]any
	if err := json.Unmarshal(data, &theirs); err != nil {
		return loop.Invalid("%s is not a JSON object: %v; fix it or drop the flag", what, err)
	}
	for k, v := range theirs {
		if k != "hooks" {
			doc[k] = v
			continue
		}
		add, ok := v.(map[string]any)
		if !ok {
			return loop.Invalid(`"hooks" in %s is not a JSON object; fix it or drop the flag`, what)
		}
		hooks, _ := doc["hooks"].(map[string]any)
		if hooks == nil {
			hooks = map[string]any{}
		}
		for ev, groups := range add {
			list, ok := groups.([]any)
			if !ok {
				return loop.Invalid(`"hooks.%s" in %s is not a list; fix it or drop the flag`, ev, what)
			}
			have, _ := hooks[ev].([]any)
			hooks[ev] = append(have, list...)
		}
		doc["hooks"] = hooks
	}
	return nil
}

// writePrivate writes data to path (0600, its directory 0700) by rename.
func writePrivate(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err = f.Chmod(0o600); err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	return err
}
