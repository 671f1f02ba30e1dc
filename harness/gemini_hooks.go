package harness

import (
	"path/filepath"
	"slices"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// GeminiHookMarker is what identifies the hook command the-loop keeps in
// the Gemini CLI's user settings: `<the-loop binary> hook --from-env
// --json`, or the hook program's `'<dir>/the-loop-hook' --from-env --json`
// (geminiProgramMarker; decisions D37). Either form is the-loop's entry,
// which EnsureHooks replaces with the command of the spawn at hand.
const GeminiHookMarker = " hook --from-env --json"

// geminiProgramMarker ends the hook program's form of the entry.
const geminiProgramMarker = "/the-loop-hook' --from-env --json"

// theLoopsGeminiHook reports whether a Gemini hook command is the-loop's.
func theLoopsGeminiHook(cmd string) bool {
	return strings.HasSuffix(cmd, GeminiHookMarker) || strings.HasSuffix(cmd, geminiProgramMarker)
}

// EnsureHooks makes the Gemini CLI's user settings (<gemini dir>/settings.json)
// declare command, once, as a command hook of each of events: a group of
// the-loop's own ({"hooks": [{"type": "command", "command": …,
// "timeout": timeoutMs}]}) appended beside the operator's hooks, or the
// command of the group it added before replaced (a moved binary). Only
// groups whose command is the-loop's (theLoopsGeminiHook) are touched; nothing
// else in the file changes. The file is edited under the discipline of
// updateJSONObject (lock, temp file + rename, a file that does not parse
// left untouched and reported); nothing is written when it already says
// so. The command reads which session it speaks for from its environment,
// so one entry serves every session, and outside a the-loop spawn it does
// nothing. Why the user settings: the CLI reads a system settings file
// only when it and every directory above it belong to root (0.61.0), and a
// project's own settings belong to its repository. Errors are one
// EINTERNAL *loop.Error.
func (g *Gemini) EnsureHooks(command string, events []string, timeoutMs int) error {
	dir, err := GeminiDir(g.opt.Env, g.opt.Home)
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "declaring the-loop's Gemini CLI hooks: %w", err)
	}
	if err := updateJSONObject(filepath.Join(dir, "settings.json"), func(doc map[string]any) (bool, error) {
		hooks, ok := doc["hooks"].(map[string]any)
		if doc["hooks"] != nil && !ok {
			return false, loop.Invalid(`"hooks" is not an object`)
		}
		if hooks == nil {
			hooks = map[string]any{}
		}
		changed := false
		for _, ev := range events {
			groups, ok := hooks[ev].([]any)
			if hooks[ev] != nil && !ok {
				return false, loop.Invalid(`"hooks.%s" is not a list`, ev)
			}
			found := false
			for _, g := range groups {
				gm, _ := g.(map[string]any)
				list, _ := gm["hooks"].([]any)
				for _, h := range list {
					hm, _ := h.(map[string]any)
					cmd, _ := hm["command"].(string)
					if !theLoopsGeminiHook(cmd) {
						continue
					}
					found = true
					if cmd != command {
						hm["command"], changed = command, true
					}
				}
			}
			if !found {
				hooks[ev] = append(groups, map[string]any{"hooks": []any{map[string]any{
					"type": "command", "command": command, "timeout": timeoutMs}}})
				changed = true
			}
		}
		doc["hooks"] = hooks
		return changed, nil
	}); err != nil {
		return loop.Errorf(loop.EINTERNAL, "declaring the-loop's Gemini CLI hooks in %s: %w — fix the file, or declare `%s` for %s there yourself",
			filepath.Join(dir, "settings.json"), err, command, strings.Join(events, ", "))
	}
	return nil
}

// HookEntries returns the Gemini CLI user settings file and the events
// whose hooks hold the-loop's command (GeminiHookMarker) there: entries
// EnsureHooks added, which serve every state root and so stay when a
// session is deleted. A missing file is no entries.
func (g *Gemini) HookEntries() (path string, events []string, err error) {
	dir, err := GeminiDir(g.opt.Env, g.opt.Home)
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, "settings.json")
	raw, err := readJSONObject(path)
	if err != nil {
		return path, nil, err
	}
	hooks, _ := raw.doc["hooks"].(map[string]any)
	for ev, v := range hooks {
		groups, _ := v.([]any)
		for _, gr := range groups {
			gm, _ := gr.(map[string]any)
			list, _ := gm["hooks"].([]any)
			for _, h := range list {
				hm, _ := h.(map[string]any)
				if cmd, _ := hm["command"].(string); theLoopsGeminiHook(cmd) && !slices.Contains(events, ev) {
					events = append(events, ev)
				}
			}
		}
	}
	slices.Sort(events)
	return path, events, nil
}
