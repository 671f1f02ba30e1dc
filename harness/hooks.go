package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// How the-loop's hooks reach each CLI (docs/harnesses.md, "How the-loop
// wires Codex and Gemini"): claude a --settings file of the spawn's own,
// codex `-c hooks.<Event>=…` overrides on its command line, gemini one
// entry per event in the CLI's user settings whose command reads the
// session from the spawn's environment. The command lines and the file's
// path are the-loop's (loop.HookWiring); the events are each CLI's.

// ClaudeHookEvents are the Claude Code hooks every claude spawn declares:
// the-loop hears its agents through them.
var ClaudeHookEvents = []string{"SessionStart", "UserPromptSubmit", "Stop", "Notification", "PostToolUse", "SessionEnd"}

// CodexHookEvents are the Codex hooks every codex spawn declares (Codex
// has no SessionEnd: an exit is seen as the dead pane).
var CodexHookEvents = []string{"SessionStart", "UserPromptSubmit", "Stop", "PostToolUse", "PermissionRequest"}

// GeminiHookEvents are the Gemini CLI hooks every gemini spawn declares;
// BeforeAgent is its UserPromptSubmit and AfterAgent its Stop.
var GeminiHookEvents = []string{"SessionStart", "BeforeAgent", "AfterAgent", "Notification", "SessionEnd"}

// CodexBypassHookTrust is the Codex flag that lets the hooks the-loop
// declares run without Codex's "Hooks need review" dialog (see
// codexHookArgs).
const CodexBypassHookTrust = "--dangerously-bypass-hook-trust"

// WireHooks writes the spawn's own settings file (w.SettingsPath, through
// w.WriteFile): the operator's --settings from w.Args merged in (their
// keys kept, their hooks beside ours), and w.Command as a command hook of
// each of ClaudeHookEvents. It returns w.Args with `--settings <file>`
// first and the operator's --settings dropped; w.Cwd resolves a relative
// settings path. An operator's --settings that cannot be read or is not a
// JSON object is EINVALID, naming it.
func (*Claude) WireHooks(w loop.HookWiring) ([]string, map[string]string, error) {
	doc := map[string]any{}
	rest := make([]string, 0, len(w.Args)+2)
	for i := 0; i < len(w.Args); i++ {
		a := w.Args[i]
		var value string
		switch {
		case a == "--settings" && i+1 < len(w.Args):
			value = w.Args[i+1]
			i++
		case strings.HasPrefix(a, "--settings="):
			value = strings.TrimPrefix(a, "--settings=")
		default:
			rest = append(rest, a)
			continue
		}
		if err := mergeSettings(doc, value, w.Cwd); err != nil {
			return nil, nil, err
		}
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	for _, ev := range ClaudeHookEvents {
		groups, _ := hooks[ev].([]any)
		hooks[ev] = append(groups, map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": w.Command, "timeout": w.TimeoutSeconds,
		}}})
	}
	if w.RulesCommand != "" { // the approval rules, answered at once
		groups, _ := hooks["PreToolUse"].([]any)
		hooks["PreToolUse"] = append(groups, map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": w.RulesCommand, "timeout": w.TimeoutSeconds,
		}}})
	}
	if w.DecisionCommand != "" { // the approval's wait (decisions D35)
		groups, _ := hooks["PermissionRequest"].([]any)
		hooks["PermissionRequest"] = append(groups, map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": w.DecisionCommand, "timeout": w.DecisionTimeoutSeconds,
		}}})
	}
	doc["hooks"] = hooks
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, nil, loop.Internal("encoding the hook settings %s: %v", w.SettingsPath, err)
	}
	if w.WriteFile == nil || w.SettingsPath == "" {
		return nil, nil, loop.Internal("no hook settings file to write for the claude spawn (loop.HookWiring has no SettingsPath or WriteFile)")
	}
	if err := w.WriteFile(w.SettingsPath, append(data, '\n')); err != nil {
		return nil, nil, err
	}
	return append([]string{"--settings", w.SettingsPath}, rest...), nil, nil
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

// WireHooks returns codexHookArgs(w.Command, w.Args, w.TimeoutSeconds):
// Codex takes its hooks on its command line, so nothing is written.
func (*Codex) WireHooks(w loop.HookWiring) ([]string, map[string]string, error) {
	return codexHookArgs(w.Command, w.Args, w.TimeoutSeconds), nil, nil
}

// codexHookArgs puts before args `-c features.codex_hooks=true`, one
// `-c hooks.<Event>=[{hooks=[{type="command",command=…,timeout=…}]}]` per
// CodexHookEvents (Codex's session-flags layer: the operator's config.toml
// and hooks.json are not touched, and their hooks run beside these), and
// CodexBypassHookTrust unless args have it. Codex runs a hook it has not
// been told to trust only after its "Hooks need review" dialog, which
// would stop an unattended start; trust is kept by a hash of the hook that
// Codex computes itself (hooks.state."<source>:<event>:…".trusted_hash in
// config.toml), so the-loop cannot pre-seed it the way it pre-seeds folder
// trust, and the flag is what Codex offers an automation that vets its own
// hooks. It applies to the whole invocation: the operator's own untrusted
// hooks run in a session the-loop started too (docs/harnesses.md).
func codexHookArgs(cmd string, args []string, timeoutSeconds int) []string {
	out := make([]string, 0, 2*len(CodexHookEvents)+3+len(args))
	out = append(out, "-c", "features.codex_hooks=true")
	for _, ev := range CodexHookEvents {
		out = append(out, "-c", fmt.Sprintf(`hooks.%s=[{hooks=[{type="command",command=%s,timeout=%d}]}]`, ev, TOMLQuote(cmd), timeoutSeconds))
	}
	if !slices.Contains(args, CodexBypassHookTrust) {
		out = append(out, CodexBypassHookTrust)
	}
	return append(out, args...)
}

// WireHooks declares w.EnvCommand once as a hook of each of
// GeminiHookEvents in the Gemini CLI's user settings (EnsureHooks, beside
// the operator's hooks) and returns w.Args unchanged with w.Env, which
// names the spawn's session to that command. The Gemini CLI has no
// per-invocation settings an ordinary user may write (its system settings
// file must belong to root, 0.61.0), hence one entry that serves every
// session. A w.EnvCommand that is not of the-loop's forms
// (theLoopsGeminiHook) is EINTERNAL: EnsureHooks could not tell it as the-loop's
// again.
func (g *Gemini) WireHooks(w loop.HookWiring) ([]string, map[string]string, error) {
	if !theLoopsGeminiHook(w.EnvCommand) {
		return nil, nil, loop.Internal("the gemini hook command %q ends in neither %q nor %q; not declaring it", w.EnvCommand, GeminiHookMarker, geminiProgramMarker)
	}
	if err := g.EnsureHooks(w.EnvCommand, GeminiHookEvents, w.TimeoutSeconds*1000); err != nil {
		return nil, nil, err
	}
	return w.Args, w.Env, nil
}

// WireHooks returns w.Args: a cursor pane is never hosted, so it has no
// hooks to declare.
func (Cursor) WireHooks(w loop.HookWiring) ([]string, map[string]string, error) {
	return w.Args, nil, nil
}
