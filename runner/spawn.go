package runner

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Limits on a harness argv (decisions D14b).
const (
	// MaxArgBytes is Linux's cap on one argv element (MAX_ARG_STRLEN,
	// including its terminating NUL).
	MaxArgBytes = 128 * 1024
	// MaxCommandLineBytes is the most the runner puts on one tmux command
	// line (tmux refuses lines over about 16 KB); a longer harness argv
	// needs Options.Launcher.
	MaxCommandLineBytes = 12 * 1024
)

// placeholder holds a new pane until remain-on-exit is set and the harness
// replaces it (respawn-pane -k); it ends by itself should the spawn be
// abandoned halfway.
var placeholder = []string{"sleep", "60"}

// SpawnIn creates target and starts spec.Argv in it, race-free (decisions D11): the
// session is created running a placeholder, remain-on-exit is set on its
// window, then respawn-pane -k replaces the placeholder with the harness,
// so a harness that exits at once still leaves a dead pane and its exit
// status. In the same tmux command list, when spec.Tag is set, the
// session's user option @the-loop-tag is set to it (read back by Tag): a
// placeholder that never became the harness carries no tag, and a harness
// never runs untagged. A live target is refused (EINVALID wrapping ErrSessionLive); a
// dead agent pane is respawned in place, the session's other windows kept; a "duplicate session" answer is cleared and
// retried once (original §2.3). A half-made session is killed even when
// ctx is done by then (cleanupCtx).
func (t *Tmux) SpawnIn(ctx context.Context, target string, spec loop.SpawnSpec) error {
	if err := guard(target); err != nil {
		return err
	}
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return fail(loop.EINVALID, nil, "nothing to spawn in tmux session %s: the harness argv is empty", target)
	}
	if spec.Cwd != "" {
		if fi, err := os.Stat(spec.Cwd); err != nil || !fi.IsDir() {
			return fail(loop.EINVALID, err, "cannot spawn in tmux session %s: cwd %q is not a directory", target, spec.Cwd)
		}
	}
	paneArgs, cleanup, err := t.paneCommand(target, spec)
	if err != nil {
		return err
	}
	if err := t.spawn(ctx, target, spec.Cwd, spec.Tag, spec.Absent, paneArgs); err != nil {
		cleanup()
		return err
	}
	t.log.Info("spawned harness in tmux session", "target", target, "binary", spec.Argv[0])
	return nil
}

// spawn runs the create / set / respawn / tag sequence (absent: the caller
// saw no session named target, so it is not looked for again). A session whose
// agent pane is dead is not killed: the harness is respawned into that pane
// (respawnDead), so windows and panes an operator opened in the session
// live on.
func (t *Tmux) spawn(ctx context.Context, target, cwd, tag string, absent bool, paneArgs []string) error {
	if !absent { // else the caller just probed: one tmux call less a spawn
		dead, err := t.clear(ctx, target, false)
		if err != nil {
			return err
		}
		if dead {
			return t.respawnDead(ctx, target, tag, paneArgs)
		}
	}
	err := t.newSession(ctx, target, cwd)
	if err != nil && answered(err) && strings.Contains(strings.ToLower(stderrOf(err)), "duplicate session") {
		dead, cerr := t.clear(ctx, target, true)
		if cerr != nil {
			return cerr
		}
		if dead {
			return t.respawnDead(ctx, target, tag, paneArgs)
		}
		err = t.newSession(ctx, target, cwd)
	}
	if err != nil {
		return fail(loop.EINTERNAL, err, "could not create tmux session %s: %v", target, err)
	}
	// One tmux command list, which the server runs in order and stops at
	// the first failure: remain-on-exit, the fixed window size (-q: a tmux
	// without the option skips it), the respawn that replaces the
	// placeholder and, when set, the tag — so the harness never runs
	// without remain-on-exit, and no crash of this process can leave it
	// running untagged, or a placeholder tagged. Three tmux calls a spawn
	// instead of five.
	win := agentWindow(target)
	args := append([]string{"set-option", "-w", "-t", win, "remain-on-exit", "on", ";",
		"set-option", "-q", "-w", "-t", win, "window-size", "manual", ";"}, paneArgs...)
	if tag != "" {
		args = append(args, ";", "set-option", "-t", optionTarget(target), TagOption, EscapeArg(tag))
	}
	if err := t.do(ctx, args...); err != nil {
		if t.askAgain(ctx, err) && t.harnessStarted(ctx, target, tag, true) {
			t.log.Info("a harness start that got no answer took effect", "target", target, "error", err)
			return nil
		}
		t.abandon(ctx, target)
		return fail(loop.EINTERNAL, err, "could not start the harness in tmux session %s: %v", target, err)
	}
	return nil
}

// placeholderCommand is the placeholder as tmux reports it in
// #{pane_start_command}.
var placeholderCommand = strings.Join(placeholder, " ")

// harnessStarted checks, after a respawn command list that got no answer,
// whether it took; it is never repeated blindly, as a second respawn -k
// would kill the harness the first one started. With a tag, the tag read
// back says it (the list sets it last, and tmux stops a list at its first
// failure); a pane respawned from dead must also be alive again, as the dead
// harness may have carried the same tag. Without a tag: a pane respawned
// from the placeholder no longer runs the placeholder; one respawned from
// dead is alive. Any doubt is false.
func (t *Tmux) harnessStarted(ctx context.Context, target, tag string, fromPlaceholder bool) bool {
	if !fromPlaceholder || tag == "" {
		f, err := t.display(ctx, target, "#{pane_dead}", "#{pane_start_command}")
		if err != nil {
			return false
		}
		if fromPlaceholder {
			return f[1] != placeholderCommand
		}
		if f[0] != "0" {
			return false
		}
	}
	if tag == "" {
		return true
	}
	got, ok := t.Tag(ctx, target)
	return ok && got == tag
}

// respawnDead starts the harness in target's dead agent pane (respawn-pane
// -k, tagged in the same command list), leaving every other window and
// pane of the session as it is; nothing is killed when it fails.
func (t *Tmux) respawnDead(ctx context.Context, target, tag string, paneArgs []string) error {
	if tag != "" {
		paneArgs = append(append([]string{}, paneArgs...), ";", "set-option", "-t", optionTarget(target), TagOption, EscapeArg(tag))
	}
	if err := t.do(ctx, paneArgs...); err != nil {
		if t.askAgain(ctx, err) && t.harnessStarted(ctx, target, tag, false) {
			t.log.Info("a harness restart that got no answer took effect", "target", target, "error", err)
			return nil
		}
		return fail(loop.EINTERNAL, err, "could not restart the harness in the dead pane of tmux session %s: %v", target, err)
	}
	t.log.Info("respawned harness in the dead agent pane; the session's other windows are kept", "target", target)
	return nil
}

// abandon kills a half-made session (best-effort), even when ctx is done.
func (t *Tmux) abandon(ctx context.Context, target string) {
	ctx, cancel := cleanupCtx(ctx)
	defer cancel()
	if err := t.kill(ctx, target); err != nil {
		t.log.Warn("could not remove a half-made tmux session", "target", target, "error", err)
	}
}

// serverExitRetries is how often new-session is retried when it reached a
// server that was exiting (its last session just killed, exit-empty).
const serverExitRetries = 3

// newSession runs new-session. When the clear just killed the server's
// last session, the client may reach the server as it exits ("server
// exited unexpectedly"): nothing was created, so it tries again.
func (t *Tmux) newSession(ctx context.Context, target, cwd string) error {
	for i := 0; ; i++ {
		err := t.do(ctx, t.newSessionArgs(target, cwd)...)
		if err != nil && t.askAgain(ctx, err) {
			err = t.checkNewSession(ctx, target, cwd, err)
		}
		if err == nil || i == serverExitRetries || !answered(err) ||
			!strings.Contains(strings.ToLower(stderrOf(err)), "server exited unexpectedly") {
			return err
		}
		if err := t.opt.Sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// checkNewSession decides a new-session that got no answer (err) by its
// effect, as a blind repeat could meet the session it made: the agent pane
// running the placeholder, alive, is the session made (nil); no such session
// means nothing was made, and new-session runs once more; anything else,
// or no answer, is err.
func (t *Tmux) checkNewSession(ctx context.Context, target, cwd string, err error) error {
	f, derr := t.display(ctx, target, "#{pane_dead}", "#{pane_start_command}")
	switch {
	case derr == nil && f[0] == "0" && f[1] == placeholderCommand:
		t.log.Info("a new-session that got no answer took effect", "target", target, "error", err)
		return nil
	case derr != nil && errors.Is(derr, ErrNoSession):
		t.log.Info("a new-session that got no answer made nothing; creating the session again", "target", target, "error", err)
		return t.do(ctx, t.newSessionArgs(target, cwd)...)
	}
	return err
}

// newSessionArgs creates the detached session running the placeholder.
func (t *Tmux) newSessionArgs(target, cwd string) []string {
	args := []string{"new-session", "-d", "-s", target,
		"-x", strconv.Itoa(t.opt.Width), "-y", strconv.Itoa(t.opt.Height)}
	if cwd != "" {
		args = append(args, "-c", escapeCwd(cwd))
	}
	return append(append(args, "--"), placeholder...)
}

// clear makes room for a spawn (original §2.3 step 3): absent ⇒ go; dead
// ⇒ dead true: the spawn respawns into the dead agent pane, so nothing else
// of the session (an operator's windows) is killed; live ⇒ refuse; unknown
// ⇒ go, unless present (after a "duplicate session" answer), where doubt
// refuses.
func (t *Tmux) clear(ctx context.Context, target string, present bool) (dead bool, err error) {
	switch t.State(ctx, target) {
	case loop.PaneAbsent:
		return false, nil
	case loop.PaneUnknown:
		if !present {
			return false, nil
		}
		return false, fail(loop.EINVALID, ErrSessionOccupied,
			"tmux session %s already exists and tmux would not say what holds it; not spawning over it", target)
	case loop.PaneLive:
		return false, fail(loop.EINVALID, ErrSessionLive,
			"tmux session %s already exists and its harness is still running; not spawning over a live session", target)
	}
	return true, nil
}

// paneCommand builds the respawn-pane arguments that start spec, escaped
// for tmux's parser. An argv too long for a tmux command line, and every
// spec with an explicit environment (spec.Env), goes through
// Options.Launcher (a 0600 JSON file removed by cleanup should the spawn
// fail), so the pane's process gets exactly that environment and not the
// tmux server's global one.
func (t *Tmux) paneCommand(target string, spec loop.SpawnSpec) (args []string, cleanup func(), err error) {
	cleanup = func() {}
	for i, a := range spec.Argv {
		if len(a)+1 > MaxArgBytes {
			return nil, cleanup, fail(loop.EINVALID, ErrArgvTooLong,
				"cannot spawn in tmux session %s: harness argument %d is %d bytes; Linux caps one argument at %d bytes",
				target, i, len(a), MaxArgBytes-1)
		}
	}
	head := []string{"respawn-pane", "-k", "-t", agentPane(target)}
	if spec.Cwd != "" {
		head = append(head, "-c", escapeCwd(spec.Cwd))
	}
	head = append(head, "--")
	args = append(append([]string{}, head...), commandArgs(spec.Argv)...)
	if spec.Env == nil && t.lineBytes(args) <= MaxCommandLineBytes {
		return args, cleanup, nil
	}
	if spec.Env != nil && len(t.opt.Launcher) == 0 {
		// An explicit environment (it may hold the agent's credential) is
		// never put on a command line, where other users could read it.
		return nil, cleanup, fail(loop.EINVALID, nil,
			"cannot spawn in tmux session %s with an explicit environment: the runner has no Options.Launcher (the-loop internal-exec)", target)
	}
	if len(t.opt.Launcher) == 0 {
		return nil, cleanup, fail(loop.EINVALID, ErrArgvTooLong,
			"cannot spawn in tmux session %s: the harness command line is %d bytes and tmux takes at most %d "+
				"(about 16 KB); shorten the prompt or arguments", target, t.lineBytes(args), MaxCommandLineBytes)
	}
	path, err := writeLaunchFile(t.opt.LaunchDir, spec)
	if err != nil {
		return nil, cleanup, fail(loop.EINTERNAL, err, "cannot spawn in tmux session %s: %v", target, err)
	}
	cleanup = func() { _ = os.Remove(path) }
	launch := append(append([]string{}, t.opt.Launcher...), path)
	args = append(append([]string{}, head...), commandArgs(launch)...)
	if n := t.lineBytes(args); n > MaxCommandLineBytes {
		cleanup()
		return nil, func() {}, fail(loop.EINVALID, ErrArgvTooLong,
			"cannot spawn in tmux session %s: even the launcher command line is %d bytes (limit %d)", target, n, MaxCommandLineBytes)
	}
	return args, cleanup, nil
}

// lineBytes is the size of a tmux command line with the global flags.
func (t *Tmux) lineBytes(args []string) int {
	n := len(t.opt.Binary) + 1
	if t.opt.Socket != "" {
		n += len("-L") + 1 + len(t.opt.Socket) + 1
	}
	if t.opt.ConfigFile != "" {
		n += len("-f") + 1 + len(t.opt.ConfigFile) + 1
	}
	for _, a := range args {
		n += len(a) + 1
	}
	return n
}

// commandArgs escapes an argv for tmux. tmux runs a one-element command
// through the shell, so that case becomes "exec '<argv0>'".
func commandArgs(argv []string) []string {
	if len(argv) == 1 {
		return []string{EscapeArg("exec " + shellQuote(argv[0]))}
	}
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = EscapeArg(a)
	}
	return out
}

// EscapeArg protects one argument from tmux's command parser: an argument
// ending in ';' would end the command (decisions D11), so that ';' becomes "\;".
func EscapeArg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

// escapeCwd escapes a start directory: tmux expands formats in -c, so '#'
// is doubled, and a trailing ';' is escaped as for any argument.
func escapeCwd(s string) string {
	return EscapeArg(strings.ReplaceAll(s, "#", "##"))
}

// shellQuote single-quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
