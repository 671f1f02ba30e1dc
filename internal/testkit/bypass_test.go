package testkit_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// Run by root, bypassPermissions is refused at once with Claude Code
// 2.1.332's own message and exit 1 (docs/claude-code.md).
func TestFakeAgent_BypassPermissionsIsRefusedToRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the refusal is root's; this test runs as another user")
	}
	agent := testkit.FakeAgent(t, testkit.Delay(time.Hour))
	var stderr bytes.Buffer
	cmd := exec.Command(agent.Path(), "--permission-mode", "bypassPermissions", "hi")
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "cannot be used with root/sudo privileges") {
		t.Fatalf("bypassPermissions as root: %v %q, want exit 1 and the refusal", err, stderr.String())
	}
	if len(agent.Entries("bypass_refused")) != 1 {
		t.Fatalf("log %+v", agent.Log())
	}
}

// Run by another user, bypassPermissions shows the consent screen first:
// Enter on its preselected "No, exit" exits 1; Down then Enter accepts,
// records it in the settings, and the prompt follows; a later start asks
// no more.
func TestFakeAgent_BypassPermissionsAsksForConsentOnce(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.Env("FAKE_AGENT_AS_USER", "1"))
	socket := testkit.Tmux(t)
	screen := func(target string) string {
		out, _ := testkit.TmuxRun(socket, "capture-pane", "-p", "-t", target)
		return out
	}
	spawn := func(target string) {
		t.Helper()
		if _, err := testkit.TmuxRun(socket, "new-session", "-d", "-s", target, "-x", "120", "-y", "40", "-c", agent.Dir(),
			agent.Path()+" --dangerously-skip-permissions; sleep 60"); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(target string, k ...string) {
		t.Helper()
		if _, err := testkit.TmuxRun(socket, append([]string{"send-keys", "-t", target}, k...)...); err != nil {
			t.Fatal(err)
		}
	}
	spawn("no")
	testkit.Eventually(t, func() bool { return strings.Contains(screen("no"), "❯ No, exit") }, 10*time.Second, "no consent screen:\n%s", screen("no"))
	keys("no", "Enter")
	declined := agent.WaitForKind(t, "bypass_declined", 10*time.Second)
	if declined.Code != 1 {
		t.Fatalf("Enter on No, exit: %+v, want exit 1", declined)
	}

	spawn("yes")
	testkit.Eventually(t, func() bool { return strings.Contains(screen("yes"), "Yes, I accept") }, 10*time.Second, "no consent screen:\n%s", screen("yes"))
	keys("yes", "Down")
	keys("yes", "Enter")
	agent.WaitForKind(t, "bypass_accepted", 10*time.Second)
	testkit.Eventually(t, func() bool { return strings.HasSuffix(strings.TrimRight(screen("yes"), "\n "), "❯") }, 10*time.Second, "no prompt after the consent:\n%s", screen("yes"))
	settings, err := os.ReadFile(filepath.Join(agent.ConfigDir(), "settings.json"))
	if err != nil || !strings.Contains(string(settings), `"skipDangerousModePermissionPrompt": true`) {
		t.Fatalf("settings after the consent: %q %v", settings, err)
	}

	spawn("again")
	testkit.Eventually(t, func() bool { return strings.HasSuffix(strings.TrimRight(screen("again"), "\n "), "❯") }, 10*time.Second,
		"the third start drew no prompt:\n%s", screen("again"))
	if n := len(agent.Entries("bypass_consent")); n != 2 {
		t.Fatalf("%d consent screens, want 2 (none once accepted)", n)
	}
}
