package main

import (
	"context"
	"fmt"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/lifecycle"
)

// StandingPeekCmd is `the-loop standing peek NAME [--lines N] [--format text|json]`.
type StandingPeekCmd struct {
	Name   string `arg:"" help:"The session."`
	Lines  int    `default:"40" help:"How many lines of the agent's pane, the last ones (1 to 2000)."`
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// prepare refuses a --lines out of range before anything is loaded.
func (c *StandingPeekCmd) prepare(*App) error {
	if c.Lines < 1 || c.Lines > lifecycle.MaxPeekLines {
		return loop.Invalid("--lines %d is out of range: ask for 1 to %d lines", c.Lines, lifecycle.MaxPeekLines)
	}
	return nil
}

// Run prints the agent pane's last lines: JSON exactly as tmux rendered
// them, text with each line's terminal controls escaped.
func (c *StandingPeekCmd) Run(ctx context.Context, a *App, api services) error {
	res, err := api.Standing.Peek(ctx, c.Name, c.Lines)
	if err != nil {
		return err
	}
	if res.Lines == nil {
		res.Lines = []string{}
	}
	if c.Format == "json" {
		return writeJSON(a.Stdout, res)
	}
	var b strings.Builder
	for _, l := range res.Lines {
		b.WriteString(termSafe(l) + "\n")
	}
	_, _ = fmt.Fprint(a.Stdout, b.String())
	if !res.Running {
		fmt.Fprintf(a.Stderr, "(the agent in %s has exited; its pane shows what it left)\n", res.TmuxTarget)
	}
	return nil
}
