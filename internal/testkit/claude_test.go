package testkit_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// recordTB records Skipf and Fatalf instead of ending the test.
type recordTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordTB) Helper()                   {}
func (r *recordTB) Skipf(f string, a ...any)  { r.skipped = fmt.Sprintf(f, a...) }
func (r *recordTB) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...) }
func (r *recordTB) Cleanup(f func())          { r.TB.Cleanup(f) }
func (r *recordTB) TempDir() string           { return r.TB.TempDir() }

func TestClaudeBinary_MissingSkipsUnlessE2EIsSet(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-claude")
	t.Setenv("THE_LOOP_CLAUDE_BIN", missing)

	t.Setenv("THE_LOOP_E2E", "")
	r := &recordTB{TB: t}
	if got := testkit.ClaudeBinary(r); got != "" || r.failed != "" || !strings.Contains(r.skipped, missing) {
		t.Fatalf("without THE_LOOP_E2E: got %q, skipped %q, failed %q", got, r.skipped, r.failed)
	}
	t.Setenv("THE_LOOP_E2E", "1")
	r = &recordTB{TB: t}
	if testkit.ClaudeBinary(r); r.skipped != "" || !strings.Contains(r.failed, "THE_LOOP_E2E=1") || !strings.Contains(r.failed, "npm install") {
		t.Fatalf("with THE_LOOP_E2E=1: skipped %q, failed %q", r.skipped, r.failed)
	}
}

func TestClaudeBinary_FromTheCacheBeforeHOMEChanges(t *testing.T) {
	cache := t.TempDir()
	bin := filepath.Join(cache, "the-loop", "claude-code", testkit.ClaudeCodeVersion, "bin", "claude")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("THE_LOOP_CLAUDE_BIN", "")
	t.Setenv("XDG_CACHE_HOME", cache)
	if got := testkit.ClaudeBinary(t); got != bin {
		t.Fatalf("got %q, want %q", got, bin)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", filepath.Dir(cache)) // $HOME/.cache is not cache: a miss
	t.Setenv("THE_LOOP_E2E", "1")
	r := &recordTB{TB: t}
	if testkit.ClaudeBinary(r); !strings.Contains(r.failed, filepath.Join(filepath.Dir(cache), ".cache", "the-loop")) {
		t.Fatalf("HOME fallback: failed %q", r.failed)
	}

	// The offline world: its own HOME, seeded so no dialog blocks a start.
	t.Setenv("THE_LOOP_CLAUDE_BIN", bin)
	cwd := t.TempDir()
	c := testkit.Claude(t, "http://127.0.0.1:1", cwd)
	if c.Home == os.Getenv("HOME") || c.Binary != bin {
		t.Fatalf("world %+v", c)
	}
	var doc struct {
		HasCompletedOnboarding bool `json:"hasCompletedOnboarding"`
		Projects               map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
		CustomAPIKeyResponses struct {
			Approved []string `json:"approved"`
		} `json:"customApiKeyResponses"`
	}
	data, err := os.ReadFile(filepath.Join(c.Home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	key := testkit.ClaudeAPIKey
	if !doc.HasCompletedOnboarding || !doc.Projects[cwd].HasTrustDialogAccepted ||
		len(doc.CustomAPIKeyResponses.Approved) != 1 || doc.CustomAPIKeyResponses.Approved[0] != key[len(key)-20:] {
		t.Fatalf(".claude.json %s", data)
	}
	env := strings.Join(c.Env, "\n")
	for _, want := range []string{"HOME=" + c.Home, "ANTHROPIC_BASE_URL=http://127.0.0.1:1", "ANTHROPIC_API_KEY=sk-ant-",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"} {
		if !strings.Contains(env, want) {
			t.Fatalf("env lacks %q: %v", want, c.Env)
		}
	}
	if got, want := c.TranscriptPath("/tmp/a_b.c/d", "id1"), filepath.Join(c.Home, ".claude", "projects", "-tmp-a-b-c-d", "id1.jsonl"); got != want {
		t.Fatalf("transcript path %q, want %q", got, want)
	}
}
