package loop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ciScript runs a .ci script with env (PATH first) and returns its output
// and exit status.
func ciScript(t *testing.T, env []string, script string, args ...string) (string, int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command(bash, append([]string{script}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestAgentCLI_InstallsIntoTheCacheAndNamesTheNode: .ci/agent-cli installs
// an agent CLI into the cache with npm, skips one already there or
// overridden, refuses a Node older than 20 naming what works, and on Node
// 20 says what Claude Code's EBADENGINE warning means.
func TestAgentCLI_InstallsIntoTheCacheAndNamesTheNode(t *testing.T) {
	world := func(t *testing.T, node string) (env []string, cache, npmLog string) {
		bin, cache := t.TempDir(), t.TempDir()
		npmLog = filepath.Join(t.TempDir(), "npm.argv")
		fake(t, bin, "node", "echo "+node)
		// npm install -g --no-fund --no-audit --prefix DIR PKG: make DIR/bin/<name>.
		fake(t, bin, "npm", `echo "$*" >> '`+npmLog+`'; prefix=$6; /bin/mkdir -p "$prefix/bin"; for b in claude codex gemini; do printf '#!/bin/sh\n' > "$prefix/bin/$b"; /bin/chmod +x "$prefix/bin/$b"; done`)
		return []string{"PATH=" + bin + ":/usr/bin:/bin", "XDG_CACHE_HOME=" + cache}, cache, npmLog
	}
	t.Run("installs, then finds it there", func(t *testing.T) {
		env, cache, npmLog := world(t, "22")
		for range 2 {
			if out, code := ciScript(t, env, ".ci/agent-cli", "codex", "@openai/codex", "0.171.0", "codex", "THE_LOOP_CODEX_BIN"); code != 0 {
				t.Fatalf("exit %d: %s", code, out)
			}
		}
		argv, _ := os.ReadFile(npmLog)
		if got := strings.TrimSpace(string(argv)); got != "install -g --no-fund --no-audit --prefix "+filepath.Join(cache, "the-loop/codex/0.171.0")+" @openai/codex@0.171.0" {
			t.Errorf("npm ran %q (once wanted)", got)
		}
	})
	t.Run("overridden", func(t *testing.T) {
		env, _, npmLog := world(t, "22")
		env = append(env, "THE_LOOP_GEMINI_BIN=/somewhere/gemini")
		if out, code := ciScript(t, env, ".ci/agent-cli", "gemini", "@google/gemini-cli", "0.61.0", "gemini", "THE_LOOP_GEMINI_BIN"); code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		if _, err := os.Stat(npmLog); err == nil {
			t.Error("npm ran although THE_LOOP_GEMINI_BIN names the binary")
		}
	})
	t.Run("Node 18 refused", func(t *testing.T) {
		env, _, _ := world(t, "18")
		out, code := ciScript(t, env, ".ci/agent-cli", "gemini", "@google/gemini-cli", "0.61.0", "gemini", "THE_LOOP_GEMINI_BIN")
		if code != 1 || !strings.Contains(out, "install Node.js 20 or newer") || !strings.Contains(out, "THE_LOOP_GEMINI_BIN") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("Node 20 explains Claude Code's warning", func(t *testing.T) {
		env, _, _ := world(t, "20")
		out, code := ciScript(t, env, ".ci/agent-cli", "claude-code", "@anthropic-ai/claude-code", "2.1.332", "claude", "THE_LOOP_CLAUDE_BIN")
		if code != 0 || !strings.Contains(out, "EBADENGINE") || !strings.Contains(out, "harmless") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
}

// TestNoLeftovers_FailsOnWhatACommandLeavesInTMPDIR: .ci/no-leftovers
// passes a command that cleans up, fails one that leaves a file in its
// TMPDIR (naming it), keeps a failing command's exit status, and removes
// the TMPDIR it made either way.
func TestNoLeftovers_FailsOnWhatACommandLeavesInTMPDIR(t *testing.T) {
	for _, tt := range []struct {
		name, script string
		code         int
		names        string
	}{
		{"clean", `d=$(mktemp -d); rm -rf "$d"`, 0, ""},
		{"a leftover", `mkdir "$TMPDIR/the-loop-fakeagent-123"`, 1, "the-loop-fakeagent-123"},
		{"the command fails", `exit 3`, 3, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			outer := t.TempDir()
			out, code := ciScript(t, []string{"PATH=/usr/bin:/bin", "TMPDIR=" + outer}, ".ci/no-leftovers", "sh", "-c", tt.script)
			if code != tt.code || !strings.Contains(out, tt.names) {
				t.Errorf("exit %d (want %d): %s", code, tt.code, out)
			}
			if left, _ := os.ReadDir(outer); len(left) != 0 {
				t.Errorf("no-leftovers left its own TMPDIR: %v", left)
			}
		})
	}
}
