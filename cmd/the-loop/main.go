// Command the-loop is the-loop's CLI and, as `the-loop serve`, its service.
package main

import (
	"os"
)

func main() {
	code := fast(os.Args[1:])
	if code < 0 {
		code = Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	}
	os.Exit(code)
}

// fast runs, without building the command-line parser (a few ms of CPU on
// every start), the two commands other programs run many times a second
// and always in the one form the-loop writes: a pane's launcher
// (`internal-exec FILE`, every spawn) and a hook (`hook --state-root DIR
// --session REF`, every hook of every agent). Any other form goes through
// Main (-1).
func fast(args []string) int {
	switch {
	case len(args) == 2 && args[0] == "internal-exec" && args[1] != "" && args[1][0] != '-':
		return exitCode((&InternalExecCmd{File: args[1]}).Run(), os.Stderr) // it returns only on failure
	case len(args) == 5 && args[0] == "hook" && args[1] == "--state-root" && args[3] == "--session" &&
		args[2] != "" && args[2][0] != '-' && args[4] != "" && args[4][0] != '-':
		app := &App{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
		_ = (&HookCmd{StateRoot: args[2], Session: args[4]}).Run(app)
		return 0
	}
	return -1
}
