package lifecycle

import (
	"context"
	"fmt"
	"slices"
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

// The variables a gemini spawn's environment names its hooks' state root
// and session by: the one hook entry the-loop keeps in the Gemini CLI's
// user settings (`the-loop hook --from-env`) serves every session, and
// does nothing where they are unset (the operator's own runs of the CLI).
const (
	HookStateRootEnv = "THE_LOOP_HOOK_STATE_ROOT"
	HookSessionEnv   = "THE_LOOP_HOOK_SESSION"
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
// them: claude a --settings file of the spawn's own (withHookSettings),
// codex `-c hooks.<Event>=…` overrides on its command line (codexHookArgs);
// the Gemini CLI has no per-invocation settings an ordinary user may write
// (its system settings file must belong to root, 0.61.0), so gemini gets
// one entry per event in the CLI's user settings, added beside the
// operator's hooks (harness.Gemini.EnsureHooks), whose command reads the
// session from the spawn's environment (HookStateRootEnv, HookSessionEnv).
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
		g, ok := p.adapter.(interface {
			EnsureHooks(command string, events []string, timeoutMs int) error
		})
		if !ok {
			return loop.Internal("the gemini adapter cannot declare hooks")
		}
		if err := g.EnsureHooks(shellQuote(s.HookBinary)+harness.GeminiHookMarker, GeminiHookEvents, hookTimeoutSeconds*1000); err != nil {
			return err
		}
		merged := make(map[string]string, len(p.env)+2)
		for k, v := range p.env {
			merged[k] = v
		}
		merged[HookStateRootEnv], merged[HookSessionEnv] = st.cfg.StateDir(), ref
		p.env = merged
	}
	return nil
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
		out = append(out, "-c", fmt.Sprintf(`hooks.%s=[{hooks=[{type="command",command=%s,timeout=%d}]}]`, ev, harness.TOMLQuote(cmd), hookTimeoutSeconds))
	}
	if !slices.Contains(args, CodexBypassHookTrust) {
		out = append(out, CodexBypassHookTrust)
	}
	return append(out, args...)
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
	pid, err := st.runner.PanePID(ctx, target)
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

// joinsTurn reports whether the harness named name takes a message
// submitted during a turn into that turn (codex: JoinsRunningTurn) rather
// than queuing it for a turn of its own.
func (s *Service) joinsTurn(name, subject string) bool {
	adapter, err := s.lookupHarness(name, subject)
	if err != nil {
		return false
	}
	j, ok := adapter.(interface{ JoinsRunningTurn() bool })
	return ok && j.JoinsRunningTurn()
}

// lookupHarness is s.Harness, else (the hook command's own service) the
// stock adapters.
func (s *Service) lookupHarness(name, subject string) (loop.Harness, error) {
	if s.Harness != nil {
		return s.Harness(name, subject)
	}
	return harness.Lookup(name, subject, harness.ClaudeOptions{})
}

// capturesID reports whether the harness named name chooses its own
// conversation id (harness.SessionIDReporter).
func (s *Service) capturesID(name, subject string) bool {
	adapter, err := s.lookupHarness(name, subject)
	if err != nil {
		return false
	}
	_, ok := adapter.(harness.SessionIDReporter)
	return ok
}
