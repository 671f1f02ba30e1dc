package testkit

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ClaudeCodeVersion is the Claude Code release the end-to-end tests drive
// (the one docs/claude-code.md was measured on).
const ClaudeCodeVersion = "2.1.332"

// ClaudeAPIKey is the made-up key the offline Claude Code is given; the fake
// Messages API accepts any.
const ClaudeAPIKey = "sk-ant-api03-the-loop-e2e-0123456789abcdefghijklmnopqrstuvwxyz"

// ClaudeBinary returns the real Claude Code CLI: $THE_LOOP_CLAUDE_BIN, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/the-loop/claude-code/<version>/bin/claude
// (where .ci/run installs it), resolved from the real environment — call it
// before a test changes HOME. When it is missing the test is skipped,
// unless THE_LOOP_E2E=1: then it fails, so CI never skips silently.
func ClaudeBinary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("THE_LOOP_CLAUDE_BIN")
	if bin == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				missingClaude(t, "no home directory to find the cache in: "+err.Error())
				return ""
			}
			cache = filepath.Join(home, ".cache")
		}
		bin = filepath.Join(cache, "the-loop", "claude-code", ClaudeCodeVersion, "bin", "claude")
	}
	st, err := os.Stat(bin)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		missingClaude(t, "'"+bin+"' is not an executable file")
		return ""
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func missingClaude(t testing.TB, why string) {
	t.Helper()
	remedy := "install it with `npm install -g --prefix \"${XDG_CACHE_HOME:-$HOME/.cache}/the-loop/claude-code/" +
		ClaudeCodeVersion + "\" @anthropic-ai/claude-code@" + ClaudeCodeVersion + "` or set THE_LOOP_CLAUDE_BIN"
	if os.Getenv("THE_LOOP_E2E") == "1" {
		t.Fatalf("Claude Code %s is needed (THE_LOOP_E2E=1): %s; %s", ClaudeCodeVersion, why, remedy)
		return
	}
	t.Skipf("Claude Code %s is not installed (%s); %s", ClaudeCodeVersion, why, remedy)
}

// OfflineClaude is a world in which the real Claude Code runs offline
// against a fake Messages API: a HOME of the test's own and the environment
// to run it with.
type OfflineClaude struct {
	// Binary is the real CLI (ClaudeBinary).
	Binary string
	// BinDir holds only a `claude` link to Binary, for PATH.
	BinDir string
	// Home is the test's own HOME; Claude Code's config dir is Home/.claude.
	Home string
	// Env is the variables to set (KEY=value): HOME, TMPDIR, ANTHROPIC_BASE_URL,
	// ANTHROPIC_API_KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC,
	// DISABLE_AUTOUPDATER, CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL.
	// Callers drop CLAUDE_CONFIG_DIR and the real HOME.
	Env []string
}

// Claude prepares an offline Claude Code (skipping or failing the test as
// ClaudeBinary does when it is missing): a new HOME whose .claude.json has
// onboarding done, ClaudeAPIKey approved and each of trusted (absolute
// directories) trusted, so no dialog blocks a start; baseURL is the fake
// Messages API.
func Claude(t testing.TB, baseURL string, trusted ...string) *OfflineClaude {
	t.Helper()
	bin := ClaudeBinary(t) // before HOME changes: the cache is the real user's
	c := &OfflineClaude{Binary: bin, BinDir: t.TempDir(), Home: t.TempDir()}
	if err := os.Symlink(bin, filepath.Join(c.BinDir, "claude")); err != nil {
		t.Fatal(err)
	}
	projects := map[string]any{}
	for _, dir := range trusted {
		keys := []string{dir}
		if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
			keys = append(keys, real)
		}
		for _, k := range keys {
			projects[k] = map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}
		}
	}
	doc := map[string]any{
		"hasCompletedOnboarding": true,
		"projects":               projects,
		"customApiKeyResponses":  map[string]any{"approved": []string{ClaudeAPIKey[len(ClaudeAPIKey)-20:]}, "rejected": []string{}},
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.Home, ".claude.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	// Claude Code keeps claude-<uid>/ and cc-socks/ (unix sockets: the path
	// stays short) in TMPDIR and leaves them: a dir of this test's own,
	// removed when it ends.
	tmp, err := os.MkdirTemp("", "cc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	c.Env = []string{
		"HOME=" + c.Home,
		"TMPDIR=" + tmp,
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=" + ClaudeAPIKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		// Without it Claude Code runs `git clone` of its official plugin
		// marketplace from GitHub at start-up, even with the traffic
		// variable set; offline, that clone holds up its exit on SIGTERM.
		"CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
	}
	return c
}

// TranscriptPath is where Claude Code writes conversation id's transcript
// for a session in cwd: <Home>/.claude/projects/<cwd with every
// non-alphanumeric character replaced by '-'>/<id>.jsonl.
func (c *OfflineClaude) TranscriptPath(cwd, id string) string {
	b := []byte(cwd)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9') {
			b[i] = '-'
		}
	}
	return filepath.Join(c.Home, ".claude", "projects", string(b), id+".jsonl")
}

// Command returns an exec.Cmd running the real claude with args in this
// offline world (for probing the CLI directly, outside the-loop).
func (c *OfflineClaude) Command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.Binary, args...)
	cmd.Env = append(dropEnv(os.Environ(), "HOME", "CLAUDE_CONFIG_DIR", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), c.Env...)
	return cmd
}

// dropEnv returns env without the named variables.
func dropEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if len(kv) > len(n) && kv[:len(n)+1] == n+"=" {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
