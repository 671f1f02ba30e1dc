package harness

import (
	"os"
	"reflect"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

const multiLinePrompt = "You are the supervisor.\nRead the brief; then wait.\n"

func TestClaude_Argv(t *testing.T) {
	c := NewClaude(ClaudeOptions{})
	id := "0b0e7a3c-9d1f-4a51-8c34-2f4e6f1d2a77"
	tests := []struct {
		name   string
		resume bool
		args   []string
		prompt string
		want   []string
	}{
		{"fresh bare", false, nil, "", []string{"--session-id", id}},
		{"fresh prompt", false, nil, "hello", []string{"--session-id", id, "--", "hello"}},
		{"fresh args", false, []string{"--model", "opus"}, "", []string{"--session-id", id, "--model", "opus"}},
		{"fresh args and multi-line prompt", false, []string{"--permission-mode", "acceptEdits"}, multiLinePrompt,
			[]string{"--session-id", id, "--permission-mode", "acceptEdits", "--", multiLinePrompt}},
		{"resume bare", true, nil, "", []string{"--resume", id}},
		{"resume prompt", true, nil, "hello", []string{"--resume", id, "--", "hello"}},
		{"resume args", true, []string{"--verbose"}, "", []string{"--resume", id, "--verbose"}},
		{"resume args and multi-line prompt", true, []string{"--model", "opus", "--verbose"}, multiLinePrompt,
			[]string{"--resume", id, "--model", "opus", "--verbose", "--", multiLinePrompt}},
		{"prompt with semicolon and spaces stays one element", false, nil, "a; b c;",
			[]string{"--session-id", id, "--", "a; b c;"}},
		// A variadic option cannot swallow the prompt,
		// and a prompt that looks like a flag stays the prompt.
		{"variadic allowedTools keeps the prompt apart", false, []string{"--allowedTools", "Read", "Grep"}, "do the work",
			[]string{"--session-id", id, "--allowedTools", "Read", "Grep", "--", "do the work"}},
		{"prompt starting with a dash", false, nil, "-v is not a flag here", []string{"--session-id", id, "--", "-v is not a flag here"}},
		{"prompt starting with front matter", true, nil, "---\nkind: directive\n---", []string{"--resume", id, "--", "---\nkind: directive\n---"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := c.FreshArgv
			if tt.resume {
				build = c.ResumeArgv
			}
			got, err := build(id, tt.args, tt.prompt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("argv = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClaude_ArgvDoesNotAliasArgs(t *testing.T) {
	args := make([]string, 1, 8)
	args[0] = "--verbose"
	got, _ := NewClaude(ClaudeOptions{}).FreshArgv("0f8fad5b-d9cb-469f-a165-70867728950e", args, "p")
	got[2] = "changed"
	if args[0] != "--verbose" {
		t.Fatal("argv shares the caller's args")
	}
}

func TestClaude_ArgvRefusesEmptyID(t *testing.T) {
	c := NewClaude(ClaudeOptions{})
	for _, build := range []func(string, []string, string) ([]string, error){c.FreshArgv, c.ResumeArgv} {
		if _, err := build("", nil, "p"); loop.ErrorCode(err) != loop.EINVALID {
			t.Fatalf("err = %v, want EINVALID", err)
		}
	}
}

func TestClaude_NameBinary(t *testing.T) {
	c := NewClaude(ClaudeOptions{})
	if c.Name() != "claude" || c.Binary() != "claude" {
		t.Fatalf("Name/Binary = %q/%q", c.Name(), c.Binary())
	}
}

// Screens modelled on Claude Code 2.x, padded with the blank rows
// capture-pane prints below the content.
const (
	blankRows = "\n\n\n\n\n"

	promptScreen = `╭───────────────────────────────────────────────────╮
│ ✻ Welcome to Claude Code!                         │
│   cwd: /home/op/work                              │
╰───────────────────────────────────────────────────╯

────────────────────────────────────────────────────
❯ ` + "\n" + `────────────────────────────────────────────────────
  ⏵⏵ bypass permissions on (shift+tab to cycle)
` + blankRows

	typedScreen = `────────────────────────────────────────────────────
❯ half-typed words
────────────────────────────────────────────────────
  ? for shortcuts
` + blankRows

	boxedScreen = `╭───────────────────────────────────────────────────╮
│ ❯                                                 │
╰───────────────────────────────────────────────────╯
  ? for shortcuts
`

	trustScreen = `────────────────────────────────────────────────────
 Do you trust the files in this folder?

 /home/op/work

 Claude Code may read, write, or execute files contained in this directory.

 ❯ 1. Yes, proceed
   2. No, exit

 Enter to confirm · Esc to exit
` + blankRows

	trustNoMenuInTail = `Quick safety check: Is this a project you created or one you trust?
Do you trust this folder?
❯ 
`

	bypassScreen = `────────────────────────────────────────────────────
 WARNING: Claude Code running in Bypass Permissions mode

 ❯ 1. No, exit
   2. Yes, I accept

 Enter to confirm · Esc to exit
`

	shellScreen = "op@host:~/work$ claude\nbash: claude: command not found\nop@host:~/work$ \n" + blankRows

	oldPromptScreen = `╭───────────────────────────────────────────────────╮
│ > Try "edit <filepath> to..."                     │
╰───────────────────────────────────────────────────╯
  ? for shortcuts
`

	loadingScreen = "\n\n" + blankRows
)

// scrollbackScreen has a prompt far above the tail: transcript, not input.
var scrollbackScreen = "❯ earlier question\n" + strings.Repeat("⏺ output line\n", 20) + "✻ Thinking…\n" + blankRows

// autoDialogScreen is auto mode's own dialog for a command it cannot
// check offline (docs/claude-code.md, "Permissions"): No preselected, the
// items not numbered.
const autoDialogScreen = `╭─ Bash command
│   touch /etc/x
│ Auto mode can't check actions in this session
│ ❯ No
│   Yes
╰─
`

func TestClaude_Ready(t *testing.T) {
	tests := []struct {
		name string
		snap loop.PaneSnapshot
		want bool
	}{
		{"raw tty with prompt", loop.PaneSnapshot{Screen: promptScreen}, true},
		{"raw tty with typed text after prompt", loop.PaneSnapshot{Screen: typedScreen}, true},
		{"raw tty with boxed prompt", loop.PaneSnapshot{Screen: boxedScreen}, true},
		{"canonical tty with prompt", loop.PaneSnapshot{Screen: promptScreen, Canonical: true}, false},
		{"dead pane with prompt", loop.PaneSnapshot{Screen: promptScreen, Dead: true}, false},
		{"raw tty without prompt (still loading)", loop.PaneSnapshot{Screen: loadingScreen}, false},
		{"raw tty, empty screen", loop.PaneSnapshot{}, false},
		{"canonical shell after a failed start", loop.PaneSnapshot{Screen: shellScreen, Canonical: true}, false},
		{"raw tty, shell prompt", loop.PaneSnapshot{Screen: shellScreen}, false},
		{"trust dialog menu", loop.PaneSnapshot{Screen: trustScreen}, false},
		{"trust dialog text in tail", loop.PaneSnapshot{Screen: trustNoMenuInTail}, false},
		{"bypass disclaimer menu", loop.PaneSnapshot{Screen: bypassScreen}, false},
		{"prompt only in scrollback", loop.PaneSnapshot{Screen: scrollbackScreen}, false},
		{"pre-2.0 > prompt not recognised", loop.PaneSnapshot{Screen: oldPromptScreen}, false},
		{"CRLF screen", loop.PaneSnapshot{Screen: strings.ReplaceAll(promptScreen, "\n", "\r\n")}, true},
		{"auto mode's No / Yes dialog", loop.PaneSnapshot{Screen: autoDialogScreen}, false},
		{"auto mode's dialog, its question scrolled away", loop.PaneSnapshot{Screen: "╭─ Bash command\n│ ❯ No\n│   Yes\n╰─\n"}, false},
	}
	// Claude Code 2.1.332's own bypassPermissions consent screen, captured
	// from tmux (docs/claude-code.md): its menu items are not numbered.
	consent, err := os.ReadFile("testdata/claude/bypass-consent-2.1.332.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests = append(tests, struct {
		name string
		snap loop.PaneSnapshot
		want bool
	}{"the bypass consent screen of 2.1.332", loop.PaneSnapshot{Screen: string(consent)}, false})
	c := NewClaude(ClaudeOptions{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Ready(tt.snap); got != tt.want {
				t.Fatalf("Ready = %v, want %v", got, tt.want)
			}
		})
	}
}

// Run by root, bypassPermissions mode is refused before any spawn, naming
// the CLI's own refusal; another user's spawn gets its argv.
func TestClaude_BypassPermissionsIsRefusedToRoot(t *testing.T) {
	c := NewClaude(ClaudeOptions{})
	defer func(f func() int) { geteuid = f }(geteuid)
	for _, args := range [][]string{{"--permission-mode", "bypassPermissions"}, {"--dangerously-skip-permissions"}, {"--permission-mode=bypassPermissions"}} {
		geteuid = func() int { return 0 }
		if _, err := c.FreshArgv("8f0e6a52-1f43-4e0a-9a55-3c3f2d1b7f10", args, "p"); loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), BypassRootRefusal) {
			t.Fatalf("%q as root: %v, want EINVALID naming %q", args, err, BypassRootRefusal)
		}
		if _, err := c.ResumeArgv("8f0e6a52-1f43-4e0a-9a55-3c3f2d1b7f10", args, ""); err == nil {
			t.Fatalf("%q resumed as root", args)
		}
		geteuid = func() int { return 1000 }
		if argv, err := c.FreshArgv("8f0e6a52-1f43-4e0a-9a55-3c3f2d1b7f10", args, "p"); err != nil || argv[2] != args[0] {
			t.Fatalf("%q as another user: %q %v", args, argv, err)
		}
	}
}
