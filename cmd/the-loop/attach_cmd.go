package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/runner"
)

// StandingAttachCmd is `the-loop standing attach NAME [--write]`.
type StandingAttachCmd struct {
	Name  string `arg:"" help:"The session."`
	Write bool   `help:"Let keys reach the agent (default: read-only, tmux attach -r)."`
}

// attacher is attach's seam at the process boundary: whether the streams
// are a terminal, and the exec that replaces this process with tmux.
type attacher struct {
	terminal func() bool
	exec     func(path string, argv, env []string) error
}

// realAttacher checks the process's own standard input and output and
// execs for real.
func realAttacher() attacher {
	return attacher{
		terminal: func() bool { return runner.IsTerminal(os.Stdin) && runner.IsTerminal(os.Stdout) },
		exec:     syscall.Exec,
	}
}

// prepare refuses, without a terminal, before anything is loaded.
func (c *StandingAttachCmd) prepare(*App) error { return c.needTerminal(realAttacher()) }

// Run attaches this terminal to the agent's tmux session.
func (c *StandingAttachCmd) Run(ctx context.Context, a *App, api services) error {
	return c.attach(ctx, a, api, realAttacher())
}

// needTerminal refuses (EINVALID) an attach whose streams are not a
// terminal: before anything is asked.
func (c *StandingAttachCmd) needTerminal(at attacher) error {
	if !at.terminal() {
		return loop.Invalid("`standing attach` needs a terminal (standard input and output must be a TTY); "+
			"read the agent's screen with `the-loop standing peek %s` instead", c.Name)
	}
	return nil
}

// attach finds the agent's own pane (a peek: the record's socket, the
// session the-loop spawned) and execs `tmux [-L socket] attach-session
// [-r] -t =<target>` in place of this process, read-only unless --write.
func (c *StandingAttachCmd) attach(ctx context.Context, a *App, api services, at attacher) error {
	pane, err := api.Standing.Peek(ctx, c.Name, 1)
	if err != nil {
		return err
	}
	tmux := runner.New(runner.Options{Socket: pane.TmuxSocket})
	argv, err := tmux.AttachArgv(pane.TmuxTarget, c.Write)
	if err != nil {
		return err
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return loop.Invalid("cannot attach: %v", &runner.TmuxNotFoundError{Binary: argv[0], Err: err})
	}
	mode := "read-only; --write to type into it"
	if c.Write {
		mode = "keys go to the agent"
	}
	fmt.Fprintf(a.Stderr, "attaching to %s (%s; detach with the tmux prefix, then d)\n", pane.TmuxTarget, mode)
	if err := at.exec(path, argv, tmux.AttachEnv()); err != nil {
		return loop.Internal("could not run %s: %w", path, err)
	}
	return nil
}
