package engine

import (
	"context"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// What each harness needs of a spawn beyond its argv (docs/harnesses.md,
// "How the-loop wires Codex and Gemini") is the adapter's
// (loop.Harness.WireHooks, CaptureSessionID, SubmitDelay): the service
// supplies the-loop's own parts — the hook command lines, the settings
// file's path under the state root, the environment that names a session.

// Hooked reports whether the-loop declares its hooks for a spawn of
// the harness named name: claude, codex and gemini. The others (cursor)
// report unknown activity and the delivered outcome.
func Hooked(name string) bool {
	switch name {
	case "claude", "codex", "gemini":
		return true
	}
	return false
}

// wireHooks declares the-loop's hooks for p's spawn, the way p's CLI takes
// them (the adapter's WireHooks): given the session's hook command, the
// command that reads the session from the spawn's environment
// (loop.HookStateRootEnv, loop.HookSessionEnv) for a CLI whose hooks serve every
// session, and the spawn's own settings file (HookSettingsPath, written
// by writeHookSettings). p.args become the args it returns; the variables
// it returns are added to p.env.
func (st *starter[R, Res]) wireHooks(p *Plan) error {
	e, target, ref, root := st.e, st.k.Target(), st.k.SessionRef(), st.cfg.StateDir()
	wait := approvalWait(st.cfg)
	rules, err := writeRules(e.h.HookBinary(), root, target, ref, p)
	if err != nil {
		return err
	}
	args, env, err := p.Adapter.WireHooks(loop.HookWiring{
		Command:                HookCommand(e.h.HookBinary(), root, ref),
		EnvCommand:             HookEnvCommand(e.h.HookBinary()),
		Env:                    map[string]string{loop.HookStateRootEnv: root, loop.HookSessionEnv: ref},
		SettingsPath:           HookSettingsPath(root, target),
		WriteFile:              func(path string, data []byte) error { return writeHookSettings(root, path, data) },
		Cwd:                    p.Cwd,
		Args:                   p.Args,
		TimeoutSeconds:         hookTimeoutSeconds,
		DecisionCommand:        DecisionCommand(e.h.HookBinary(), root, ref, wait),
		RulesCommand:           rules,
		DecisionTimeoutSeconds: int((wait + loop.ApprovalHookSlack) / time.Second),
	})
	if err != nil {
		return err
	}
	p.Args = args
	if len(env) > 0 {
		merged := make(map[string]string, len(p.Env)+len(env))
		for k, v := range p.Env {
			merged[k] = v
		}
		for k, v := range env {
			merged[k] = v
		}
		p.Env = merged
	}
	return nil
}

// captureWait bounds an id capture when routing.tmux.readySeconds is 0.
const captureWait = 30 * time.Second

// captureInterval is how often a capture looks at the pane's processes.
const captureInterval = 50 * time.Millisecond

// captured returns the conversation id a fresh spawn runs under: spawnID
// for an adapter that takes a pre-assigned id; for one whose CLI chooses
// its own (codex: CapturesSessionID) the id its CLI chose, read back from
// the pane's own process tree within routing.tmux.readySeconds
// (CaptureSessionID). The pane keeps the tag it was spawned with
// (spawnID), kept as the record's PaneTag. No id in time, or an error, is
// the error: the caller fails the spawn and kills its pane — a session is
// never recorded running under a guess.
func (st *starter[R, Res]) captured(ctx context.Context, p Plan, spawnID string) (string, error) {
	if !p.Adapter.CapturesSessionID() {
		return spawnID, nil
	}
	target := st.k.Target()
	pid, err := st.runner.PanePID(ctx, target)
	if err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "capturing the %s conversation id in %s: %w", p.Harness, target, err)
	}
	wait := time.Duration(st.cfg.Routing.Tmux.ReadySeconds * float64(time.Second))
	if wait <= 0 {
		wait = captureWait
	}
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	id, err := p.Adapter.CaptureSessionID(cctx, pid, captureInterval)
	if err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "%s in %s: %w", p.Harness, target, err)
	}
	st.paneTag = spawnID
	return id, nil
}

// captureFailed fails a fresh spawn whose conversation id was not
// captured: its pane is killed (the agent runs under no id the-loop could
// record) and the start is spawn_failed.
func (st *starter[R, Res]) captureFailed(ctx context.Context, rec *R, p Plan, cause error) (Res, bool) {
	target := st.k.Target()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	detail := loop.ErrorMessage(cause)
	if err := st.runner.KillTarget(cctx, target); err != nil && loop.ErrorCode(err) != loop.ENOTFOUND {
		detail += "; and its pane could not be killed: " + loop.ErrorMessage(err)
	}
	return st.spawnFailed(ctx, rec, detail, loop.F("harness", p.Harness), loop.F("tmux_target", target))
}

// JoinsTurn reports whether the harness named name takes a message
// submitted during a turn into that turn (codex: JoinsRunningTurn) rather
// than queuing it for a turn of its own.
func (e *Engine) JoinsTurn(name, subject string) bool {
	adapter, err := e.h.Harness(name, subject)
	return err == nil && adapter.JoinsRunningTurn()
}
