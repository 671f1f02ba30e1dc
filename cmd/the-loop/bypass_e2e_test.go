package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// bypassSession is oneSession in bypassPermissions mode, the consent
// screen's acceptance recorded by the-loop as policy says (%POLICY%).
const bypassSession = `
state: {root: .the-loop}
routing:
  harnessTrust: {acceptBypassPermissions: %POLICY%}
  tmux: {socketName: %SOCKET%, harnessKillGraceSeconds: 3, resumeProbeSeconds: 1, readySeconds: 1}
standingSessions:
  enabled: true
  sessions:
    - name: supervisor
      cwd: %DIR%
      permissionMode: bypassPermissions
      allowBypassPermissions: true
`

// Run by root, a start in bypassPermissions mode fails naming Claude
// Code's own refusal, and spawns nothing: the CLI would exit at once.
func TestStandingStart_BypassPermissionsAsRootFailsNamingTheCLIsRefusal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the refusal is root's; this test runs as another user")
	}
	e := newEnv(t)
	e.config(strings.ReplaceAll(bypassSession, "%POLICY%", "auto"))
	r := e.run("standing", "start", "supervisor")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "cannot be used with root/sudo privileges") || !strings.Contains(r.stdout+r.stderr, "run the-loop as another user") {
		t.Fatalf("start in bypassPermissions as root: %s, want a failed row naming the refusal", r)
	}
	if n := len(e.agent.Entries("start")); n != 0 {
		t.Fatalf("%d agents spawned, want none", n)
	}
}

// A claude session in bypassPermissions mode gets --permission-mode
// bypassPermissions. Under the default policy the-loop records the consent
// screen's acceptance first, so the agent takes a say; with the policy
// never, the agent sits on that screen, and a say refuses it as not ready
// and pastes nothing — a carriage return there would pick "No, exit".
// Claude Code shows the screen to users other than root only.
func TestStandingSay_BypassPermissionsConsentIsNeverTyped(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root is refused the mode (TestStandingStart_BypassPermissionsAsRootFailsNamingTheCLIsRefusal)")
	}
	for _, policy := range []string{"auto", "never"} {
		t.Run(policy, func(t *testing.T) {
			e := newEnv(t, testkit.Env("FAKE_AGENT_AS_USER", "1"))
			e.extraEnv = append(e.extraEnv, "CLAUDE_CONFIG_DIR="+e.agent.ConfigDir()) // where the-loop records it, and the fake reads it
			e.config(strings.ReplaceAll(bypassSession, "%POLICY%", policy))
			e.must(0, "standing", "start", "supervisor")
			start := e.agent.WaitForKind(t, "start", 10*time.Second)
			if !strings.Contains(strings.Join(start.Argv, " "), "--permission-mode bypassPermissions") {
				t.Fatalf("argv %q, want --permission-mode bypassPermissions", start.Argv)
			}
			screen := func() string {
				s, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-supervisor:")
				return s
			}
			if policy == "auto" {
				waitFor(t, "the agent's prompt", func() bool { return strings.HasSuffix(strings.TrimRight(screen(), "\n "), "❯") })
				e.must(0, "standing", "say", "supervisor", "--text", "hello")
				waitFor(t, "the message", func() bool { return len(e.agent.Messages()) == 1 })
				return
			}
			waitFor(t, "the consent screen", func() bool { return strings.Contains(screen(), "Yes, I accept") })
			r := e.run("standing", "say", "supervisor", "--text", "hello")
			if r.code != 1 || !strings.Contains(r.stderr, "not ready for input") {
				t.Fatalf("a say into the consent screen: %s, want exit 1, not ready", r)
			}
			if n := len(e.agent.Messages()); n != 0 || len(e.agent.Entries("bypass_declined")) != 0 {
				t.Fatalf("the say reached the consent screen: %d messages, log %+v", n, e.agent.Log())
			}
		})
	}
}
