package main

import "github.com/the-loop-dev/the-loop/runner"

// InternalExecCmd is `the-loop internal-exec FILE`: what a tmux pane runs
// when a harness argv is too long for a tmux command line (decisions D14b).
type InternalExecCmd struct {
	File string `arg:"" help:"The argv file the runner wrote."`
}

// Run execs the harness; it returns only on failure.
func (c *InternalExecCmd) Run() error {
	return runner.ExecFromFile(c.File)
}
