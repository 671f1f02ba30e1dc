package harness_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/the-loop-dev/the-loop/harness"
)

func TestClaudeReadTranscript_ReadsWhereClaudeCodeWrites(t *testing.T) {
	cfgDir := t.TempDir()
	env := map[string]string{"CLAUDE_CONFIG_DIR": cfgDir}
	c := harness.NewClaude(harness.ClaudeOptions{Env: func(k string) string { return env[k] }, Home: t.TempDir()})
	cwd := "/work/my repo"
	path := harness.ClaudeTranscriptPath(cfgDir, cwd, "3b241101-e2bb-4255-8caf-4136c566a962")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	body := userLine("hello", "2026-07-22T06:31:20.000Z") + assistantLine("m1", "hi there", "2026-07-22T06:31:21.000Z", 4)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadTranscript(cwd, "3b241101-e2bb-4255-8caf-4136c566a962", 20)
	if err != nil || len(got) != 2 || got[0].Text != "hello" || got[1].Text != "hi there" || got[1].Usage == nil {
		t.Fatalf("entries %+v, %v", got, err)
	}
	// Another conversation, no conversation, a missing folder: nothing.
	for _, id := range []string{"9a7b5c3d-1e2f-4a6b-8c9d-0e1f2a3b4c5d", ""} {
		if got, err := c.ReadTranscript(cwd, id, 20); err != nil || len(got) != 0 {
			t.Fatalf("conversation %q: %+v, %v", id, got, err)
		}
	}
	// Without CLAUDE_CONFIG_DIR the adapter reads ~/.claude.
	home := t.TempDir()
	c = harness.NewClaude(harness.ClaudeOptions{Env: func(string) string { return "" }, Home: home})
	path = harness.ClaudeTranscriptPath(filepath.Join(home, ".claude"), cwd, "3b241101-e2bb-4255-8caf-4136c566a962")
	_ = os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, []byte(userLine("from home", "2026-07-22T06:31:20.000Z")), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ReadTranscript(cwd, "3b241101-e2bb-4255-8caf-4136c566a962", 20); err != nil || len(got) != 1 || got[0].Text != "from home" {
		t.Fatalf("under ~/.claude: %+v, %v", got, err)
	}
}
