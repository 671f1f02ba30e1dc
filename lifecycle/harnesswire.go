package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
)

// What each harness needs of a spawn beyond its argv (docs/harnesses.md,
// "How the-loop wires Codex and Gemini"): the hooks the-loop hears it by,
// the id capture of a CLI that chooses its own conversation id, and the
// submit delay of a CLI that drops a submit key too close to a paste.

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

// Gemini CLI variables naming its system settings and system defaults
// files (0.61.0): the-loop's hooks ride in a system settings file of the
// spawn's own.
const (
	GeminiSystemSettingsEnv = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
	GeminiSystemDefaultsEnv = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"
)

// hookedHarness reports whether the-loop declares its hooks for a spawn of
// the harness named name: claude, codex and gemini. The others (cursor)
// report unknown activity and the delivered outcome.
func hookedHarness(name string) bool {
	switch name {
	case "claude", "codex", "gemini":
		return true
	}
	return false
}

// wireHooks declares the-loop's hooks for p's spawn, the way p's CLI takes
// them without touching the operator's own files: claude a --settings file
// of the spawn's own (withHookSettings), codex `-c hooks.<Event>=…`
// overrides on its command line (codexHookArgs), gemini a system settings
// file of the spawn's own named by GEMINI_CLI_SYSTEM_SETTINGS_PATH
// (geminiHookSettings), the operator's system settings merged into it.
func (st *starter[R, Res]) wireHooks(p *spawnPlan) error {
	s, target, ref := st.s, st.k.target(), st.k.sessionRef()
	switch p.adapter.Name() {
	case "claude":
		args, err := withHookSettings(s.HookBinary, st.cfg.StateDir(), target, ref, p.cwd, p.args)
		if err != nil {
			return err
		}
		p.args = args
	case "codex":
		p.args = codexHookArgs(HookCommand(s.HookBinary, st.cfg.StateDir(), ref), p.args)
	case "gemini":
		getenv := func(k string) string {
			if v, ok := p.env[k]; ok {
				return v
			}
			if v, ok := st.cfg.Routing.HarnessEnv[k]; ok {
				return v
			}
			return s.getenv(k)
		}
		env, err := geminiHookSettings(HookCommand(s.HookBinary, st.cfg.StateDir(), ref)+" --json", st.cfg.StateDir(), target, getenv)
		if err != nil {
			return err
		}
		merged := make(map[string]string, len(p.env)+len(env))
		for k, v := range p.env {
			merged[k] = v
		}
		for k, v := range env {
			merged[k] = v
		}
		p.env = merged
	}
	return nil
}

// getenv is s.Getenv, else os.Getenv.
func (s *Service) getenv(k string) string {
	if s.Getenv != nil {
		return s.Getenv(k)
	}
	return os.Getenv(k)
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
func codexHookArgs(cmd string, args []string) []string {
	out := make([]string, 0, 2*len(CodexHookEvents)+3+len(args))
	out = append(out, "-c", "features.codex_hooks=true")
	for _, ev := range CodexHookEvents {
		out = append(out, "-c", fmt.Sprintf(`hooks.%s=[{hooks=[{type="command",command=%s,timeout=%d}]}]`, ev, tomlBasic(cmd), hookTimeoutSeconds))
	}
	if !slices.Contains(args, CodexBypassHookTrust) {
		out = append(out, CodexBypassHookTrust)
	}
	return append(out, args...)
}

// tomlBasic is s as a TOML basic string.
func tomlBasic(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// GeminiSettingsPath is where the system settings file of the gemini
// agent in target lives: <state.root>/local/hooks/<target>.gemini.json.
func GeminiSettingsPath(stateRoot, target string) string {
	return filepath.Join(stateRoot, "local", "hooks", target+".gemini.json")
}

// geminiSystemDefault is the Gemini CLI's own system settings path when
// GEMINI_CLI_SYSTEM_SETTINGS_PATH is unset (0.61.0).
func geminiSystemDefault() string {
	if runtime.GOOS == "darwin" {
		return "/Library/Application Support/GeminiCli/settings.json"
	}
	return "/etc/gemini-cli/settings.json"
}

// geminiHookSettings writes the system settings file of target's spawn:
// the operator's system settings (the file GEMINI_CLI_SYSTEM_SETTINGS_PATH
// names, else the CLI's default; none is fine) with one command hook per
// GeminiHookEvents appended to theirs (timeout in milliseconds, as the CLI
// counts), and returns the variables that point the CLI at it. The system
// defaults file stays where the CLI would have looked for it (it is found
// beside the system settings unless GEMINI_CLI_SYSTEM_DEFAULTS_PATH says
// otherwise). Hooks of the system scope are not subject to the CLI's
// project-hook trust; the user's and the project's settings files are not
// touched, and their hooks run too (the CLI concatenates hooks of every
// scope).
func geminiHookSettings(cmd, stateRoot, target string, getenv func(string) string) (map[string]string, error) {
	orig := getenv(GeminiSystemSettingsEnv)
	if orig == "" {
		orig = geminiSystemDefault()
	}
	doc := map[string]any{}
	if data, err := os.ReadFile(orig); err == nil {
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, loop.Invalid("the Gemini CLI system settings %s are not a JSON object (%v); the-loop merges its hooks into a copy of them — fix the file, or point %s elsewhere", orig, err, GeminiSystemSettingsEnv)
		}
	} else if !os.IsNotExist(err) {
		return nil, loop.Invalid("cannot read the Gemini CLI system settings %s (%v); the-loop merges its hooks into a copy of them — fix its permissions, or point %s elsewhere", orig, err, GeminiSystemSettingsEnv)
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	for _, ev := range GeminiHookEvents {
		groups, _ := hooks[ev].([]any)
		hooks[ev] = append(groups, map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": cmd, "timeout": hookTimeoutSeconds * 1000,
		}}})
	}
	doc["hooks"] = hooks
	path := GeminiSettingsPath(stateRoot, target)
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, loop.Internal("encoding the Gemini CLI hook settings for %s: %v", target, err)
	}
	if err := CheckPrivatePath(stateRoot, path, "Gemini CLI hook settings file ("+GeminiSystemSettingsEnv+")"); err != nil {
		return nil, err
	}
	if err := writePrivate(path, append(data, '\n')); err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "cannot write the Gemini CLI hook settings %s: %w; check that state.root is writable", path, err)
	}
	defaults := getenv(GeminiSystemDefaultsEnv)
	if defaults == "" {
		defaults = filepath.Join(filepath.Dir(orig), "system-defaults.json")
	}
	return map[string]string{GeminiSystemSettingsEnv: path, GeminiSystemDefaultsEnv: defaults}, nil
}

// panePIDer is the runner's PanePID (runner.Tmux and its cache).
type panePIDer interface {
	PanePID(ctx context.Context, target string) (int, error)
}

// captureWait bounds an id capture when routing.tmux.readySeconds is 0.
const captureWait = 30 * time.Second

// captureInterval is how often a capture looks at the pane's processes.
const captureInterval = 50 * time.Millisecond

// captured returns the conversation id a fresh spawn runs under: spawnID
// for an adapter that takes a pre-assigned id; for a
// harness.SessionIDReporter (codex) the id its CLI chose, read back from
// the pane's own process tree within routing.tmux.readySeconds
// (harness.WaitSessionID). The pane keeps the tag it was spawned with
// (spawnID), kept as the record's PaneTag. No id in time, or an error, is
// the error: the caller fails the spawn and kills its pane — a session is
// never recorded running under a guess.
func (st *starter[R, Res]) captured(ctx context.Context, p spawnPlan, spawnID string) (string, error) {
	rep, ok := p.adapter.(harness.SessionIDReporter)
	if !ok {
		return spawnID, nil
	}
	target := st.k.target()
	pp, ok := st.runner.(panePIDer)
	if !ok {
		return "", loop.Internal("the runner of %s cannot tell its pane's process, so the %s conversation id cannot be captured; not recording it running", target, p.harness)
	}
	pid, err := pp.PanePID(ctx, target)
	if err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "capturing the %s conversation id in %s: %w", p.harness, target, err)
	}
	wait := time.Duration(st.cfg.Routing.Tmux.ReadySeconds * float64(time.Second))
	if wait <= 0 {
		wait = captureWait
	}
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	id, err := harness.WaitSessionID(cctx, rep, pid, captureInterval)
	if err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "%s in %s: %w", p.harness, target, err)
	}
	st.paneTag = spawnID
	return id, nil
}

// captureFailed fails a fresh spawn whose conversation id was not
// captured: its pane is killed (the agent runs under no id the-loop could
// record) and the start is spawn_failed.
func (st *starter[R, Res]) captureFailed(ctx context.Context, rec *R, p spawnPlan, cause error) (Res, bool) {
	target := st.k.target()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	detail := loop.ErrorMessage(cause)
	if err := st.runner.KillTarget(cctx, target); err != nil && loop.ErrorCode(err) != loop.ENOTFOUND {
		detail += "; and its pane could not be killed: " + loop.ErrorMessage(err)
	}
	return st.spawnFailed(ctx, rec, detail, loop.F("harness", p.harness), loop.F("tmux_target", target))
}

// submitDelayer is an adapter whose CLI needs a longer pause between a
// paste and its submit key (harness.Gemini).
type submitDelayer interface {
	SubmitDelay() time.Duration
}

// afterDeliverer is a runner that takes a delivery's own submit delay
// (runner.Tmux.DeliverToAfter).
type afterDeliverer interface {
	DeliverToAfter(ctx context.Context, target string, text io.Reader, submitDelay time.Duration) error
}

// deliverTo pastes text into target for adapter's agent: with the
// adapter's SubmitDelay between the paste and the submit key when it has
// one and the runner takes it, else as the runner delivers every text.
func deliverTo(ctx context.Context, runner loop.Runner, adapter loop.Harness, target, text string) error {
	if d, ok := adapter.(submitDelayer); ok {
		if r, ok := runner.(afterDeliverer); ok {
			return r.DeliverToAfter(ctx, target, strings.NewReader(text), d.SubmitDelay())
		}
	}
	return runner.DeliverTo(ctx, target, strings.NewReader(text))
}

// capturesID reports whether the harness named name chooses its own
// conversation id (harness.SessionIDReporter).
func (s *Service) capturesID(name, subject string) bool {
	lookup := s.Harness
	if lookup == nil { // the hook command's own service: the stock adapters
		lookup = func(name, subject string) (loop.Harness, error) {
			return harness.Lookup(name, subject, harness.ClaudeOptions{})
		}
	}
	adapter, err := lookup(name, subject)
	if err != nil {
		return false
	}
	_, ok := adapter.(harness.SessionIDReporter)
	return ok
}
