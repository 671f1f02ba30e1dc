package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
)

func TestHooks_EveryClaudeSpawnDeclaresTheSixHooks(t *testing.T) {
	w := newHookWorld(t)
	argv := w.r.Spawns[0].Argv
	i := slices.Index(argv, "--settings")
	if i < 0 || i+1 >= len(argv) {
		t.Fatalf("argv %q has no --settings", argv)
	}
	path := argv[i+1]
	if want := filepath.Join(w.cfg.StateDir(), "local", "hooks", "loop-standing-supervisor.json"); path != want {
		t.Fatalf("settings file %s, want %s", path, want)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings file: %v %v", fi, err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	want := `'/opt/the loop/bin/the-loop' hook --state-root '` + w.cfg.StateDir() + `' --session 'standing:supervisor'`
	for _, ev := range harness.ClaudeHookEvents {
		g := doc.Hooks[ev]
		if len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Hooks[0].Type != "command" || g[0].Hooks[0].Command != want {
			t.Errorf("%s hooks %+v, want one command %s", ev, g, want)
		}
	}
	if len(doc.Hooks) != 6 {
		t.Errorf("hooks for %d events", len(doc.Hooks))
	}
	if w.record().Activity != loop.ActivityStarting || w.row().Activity != loop.ActivityStarting {
		t.Fatalf("a fresh spawn is %q", w.row().Activity)
	}
}

func TestHooks_TheOperatorsOwnSettingsKeepTheirHooks(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	s.HookBinary = "/bin/the-loop"
	cfg := testConfig(t, "supervisor")
	cfg.StateRoot = t.TempDir()
	theirs := filepath.Join(cfg.Standing.Sessions[0].Cwd, "mine.json")
	if err := os.WriteFile(theirs, []byte(`{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}],"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"audit"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Standing.Sessions[0].HarnessArgs = []string{"--model", "opus", "--settings", "mine.json", `--settings={"env":{"A":"1"}}`}
	if res, err := s.StartStanding(context.Background(), cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	argv := r.Spawns[0].Argv
	if n := strings.Count(strings.Join(argv, "\x00"), "--settings"); n != 1 {
		t.Fatalf("argv %q: %d --settings, want ours alone", argv, n)
	}
	if !slices.Contains(argv, "--model") || !slices.Contains(argv, "opus") {
		t.Fatalf("argv %q lost the operator's other flags", argv)
	}
	var doc map[string]any
	data, _ := os.ReadFile(argv[slices.Index(argv, "--settings")+1])
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	hooks := doc["hooks"].(map[string]any)
	stop := hooks["Stop"].([]any)
	if len(stop) != 2 || !strings.Contains(fmt.Sprint(stop[0]), "notify-send done") || !strings.Contains(fmt.Sprint(stop[1]), " hook --state-root ") {
		t.Fatalf("Stop hooks %v: want theirs, then ours", stop)
	}
	if _, ok := hooks["PreToolUse"]; !ok || doc["model"] != "opus" || doc["env"] == nil {
		t.Fatalf("their settings are not kept: %v", doc)
	}

	// A settings file that is not there fails the spawn, naming it.
	cfg.Standing.Sessions[0].HarnessArgs = []string{"--settings", "gone.json"}
	if _, err := s.StopStanding(context.Background(), cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	res, _ := s.StartStanding(context.Background(), cfg, "supervisor", false)
	if res.OK || !strings.Contains(res.Sessions[0].Detail, "gone.json") {
		t.Fatalf("start with a missing settings file: %+v", res)
	}
}
