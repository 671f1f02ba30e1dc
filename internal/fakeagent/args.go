//go:build linux

package main

import "strings"

// args is what the fake understood of its command line.
type args struct {
	sessionID      string
	resume         bool
	prompt         string
	settings       []string // every --settings value, in order
	model          string
	permissionMode string
	// codex
	overrides       []string // every -c value
	bypassHookTrust bool
	noDaemon        bool
	// gemini: positional arguments it drops
	dropped []string
}

// parseArgs reads --session-id/--resume (also in --flag=value form) and
// takes the last positional argument as the prompt — everything after
// "--" is positional, as Claude Code reads it; other flags are only
// recorded (in the start entry's argv).
func parseArgs(argv []string) args {
	var a args
	var positional []string
	for i := 0; i < len(argv); i++ {
		s := argv[i]
		switch {
		case s == "--": // the end of the options: the rest is positional
			positional = append(positional, argv[i+1:]...)
			i = len(argv)
		case s == "--session-id" || s == "--resume":
			if i+1 < len(argv) {
				a.sessionID, a.resume = argv[i+1], s == "--resume"
				i++
			}
		case strings.HasPrefix(s, "--session-id="):
			a.sessionID, a.resume = strings.TrimPrefix(s, "--session-id="), false
		case strings.HasPrefix(s, "--resume="):
			a.sessionID, a.resume = strings.TrimPrefix(s, "--resume="), true
		case variadic(s):
			// As Claude Code's variadic options: every following argument
			// that does not start with "-" is one of its values.
			for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
			}
		case s == "--settings" || s == "--model" || s == "--permission-mode":
			if i+1 < len(argv) {
				a.setValue(s, argv[i+1])
				i++
			}
		case strings.HasPrefix(s, "--settings=") || strings.HasPrefix(s, "--model=") || strings.HasPrefix(s, "--permission-mode="):
			k, v, _ := strings.Cut(s, "=")
			a.setValue(k, v)
		case s == "--dangerously-skip-permissions":
			a.permissionMode = "bypassPermissions"
		case strings.HasPrefix(s, "-"):
		default:
			positional = append(positional, s)
		}
	}
	if len(positional) > 0 {
		a.prompt = positional[len(positional)-1]
	}
	return a
}

// variadic reports whether a flag takes every following non-flag argument
// (Claude Code's <values...> options), so a prompt after one without "--"
// is swallowed as it would be by Claude Code.
func variadic(flag string) bool {
	switch flag {
	case "--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools", "--mcp-config", "--add-dir", "--tools", "--betas":
		return true
	}
	return false
}

// setValue records a flag that takes a value.
func (a *args) setValue(flag, v string) {
	switch flag {
	case "--settings":
		a.settings = append(a.settings, v)
	case "--model":
		a.model = v
	case "--permission-mode":
		a.permissionMode = v
	}
}
