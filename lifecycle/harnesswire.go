package lifecycle

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
// them (the adapter's WireHooks): given the session's hook command, the
// command that reads the session from the spawn's environment
// (HookStateRootEnv, HookSessionEnv) for a CLI whose hooks serve every
// session, and the spawn's own settings file (HookSettingsPath, written
// by writeHookSettings). p.args become the args it returns; the variables
// it returns are added to p.env.
func (st *starter[R, Res]) wireHooks(p *spawnPlan) error {
	s, target, ref, root := st.s, st.k.target(), st.k.sessionRef(), st.cfg.StateDir()
	args, env, err := p.adapter.WireHooks(loop.HookWiring{
		Command:        HookCommand(s.HookBinary, root, ref),
		EnvCommand:     HookEnvCommand(s.HookBinary),
		Env:            map[string]string{HookStateRootEnv: root, HookSessionEnv: ref},
		SettingsPath:   HookSettingsPath(root, target),
		WriteFile:      func(path string, data []byte) error { return writeHookSettings(root, path, data) },
		Cwd:            p.cwd,
		Args:           p.args,
		TimeoutSeconds: hookTimeoutSeconds,
	})
	if err != nil {
		return err
	}
	p.args = args
	if len(env) > 0 {
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
func (st *starter[R, Res]) captured(ctx context.Context, p spawnPlan, spawnID string) (string, error) {
	if !p.adapter.CapturesSessionID() {
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
	id, err := p.adapter.CaptureSessionID(cctx, pid, captureInterval)
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
	return err == nil && adapter.JoinsRunningTurn()
}

// lookupHarness is s.Harness; a service built without it (only a
// misconfigured one is) refuses, naming the harness.
func (s *Service) lookupHarness(name, subject string) (loop.Harness, error) {
	if s.Harness == nil {
		return nil, loop.Internal("the service has no harness adapters to look up the %s harness of %s", name, subject)
	}
	return s.Harness(name, subject)
}
