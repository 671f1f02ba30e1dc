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
// --session REF`, every hook of an agent whose settings predate the hook
// program, and with `--delivery ID [--no-post]` what the hook program hands
// over). Any other form goes through Main (-1).
func fast(args []string) int {
	switch {
	case len(args) == 2 && args[0] == "internal-exec" && plain(args[1]):
		return exitCode((&InternalExecCmd{File: args[1]}).Run(), os.Stderr) // it returns only on failure
	case len(args) >= 5 && args[0] == "hook" && args[1] == "--state-root" && args[3] == "--session" && plain(args[2]) && plain(args[4]):
		c := &HookCmd{StateRoot: args[2], Session: args[4]}
		switch rest := args[5:]; {
		case len(rest) == 0:
		case len(rest) >= 2 && rest[0] == "--delivery" && plain(rest[1]) && (len(rest) == 2 || len(rest) == 3 && rest[2] == "--no-post"):
			c.Delivery, c.NoPost = rest[1], len(rest) == 3
		default:
			return -1
		}
		_ = c.Run(&App{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
		return 0
	}
	return -1
}

// plain reports whether a fast form's value is one: not empty, no flag.
func plain(s string) bool { return s != "" && s[0] != '-' }
