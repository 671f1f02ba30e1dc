package lifecycle

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/credential"
)

// Each spawn's own credential.

// credentialOf is the THE_LOOP_AGENT_TOKEN a spawn was given.
func credentialOf(t *testing.T, spec loop.SpawnSpec) string {
	t.Helper()
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, credential.AgentTokenEnv+"="); ok {
			return v
		}
	}
	t.Fatalf("spawn env has no %s: %q", credential.AgentTokenEnv, spec.Env)
	return ""
}

func TestStart_EachSpawnGetsItsOwnCredentialStoredHashed(t *testing.T) {
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", "xoxb-secret")
	t.Setenv(credential.OperatorTokenEnv, "operator-secret")
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "alpha", "beta")
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "", false); err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	if len(r.Spawns) != 2 {
		t.Fatalf("%d spawns", len(r.Spawns))
	}
	a, b := credentialOf(t, r.Spawns[0]), credentialOf(t, r.Spawns[1])
	if a == b || len(a) < 32 {
		t.Fatalf("credentials %q and %q", a, b)
	}
	for _, spec := range r.Spawns {
		for _, kv := range spec.Env {
			if strings.Contains(kv, "xoxb-secret") || strings.Contains(kv, "operator-secret") {
				t.Fatalf("a secret is in the agent's env: %s", kv)
			}
		}
	}
	for _, cred := range []string{a, b} {
		id, ok := hearerFor(s).AgentFor(ctx, cred)
		if !ok || id.Standing == "" {
			t.Fatalf("AgentFor(%s…): %+v %v", cred[:6], id, ok)
		}
		rec, _ := s.read(id.Standing)
		if rec.AgentTokenHash != credential.Hash(cred) || strings.Contains(rec.AgentTokenHash, cred) {
			t.Fatalf("record hash %q", rec.AgentTokenHash)
		}
	}
	if _, ok := hearerFor(s).AgentFor(ctx, "not-a-credential"); ok {
		t.Fatal("an unknown credential was taken")
	}

	// Stopped: void. Started again: a new credential; the old one stays void.
	stopped, running := a, b
	if id, _ := hearerFor(s).AgentFor(ctx, b); id.Standing == "alpha" {
		stopped, running = b, a
	}
	if _, err := s.StopStanding(ctx, cfg, "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, ok := hearerFor(s).AgentFor(ctx, stopped); ok {
		t.Fatal("a stopped session's credential is still valid")
	}
	if id, ok := hearerFor(s).AgentFor(ctx, running); !ok || id.Standing != "beta" {
		t.Fatalf("beta's credential after alpha stopped: %+v %v", id, ok)
	}
	if res, err := s.StartStanding(ctx, cfg, "alpha", false); err != nil || !res.OK {
		t.Fatalf("restart: %+v %v", res, err)
	}
	fresh := credentialOf(t, r.Spawns[len(r.Spawns)-1])
	if fresh == stopped {
		t.Fatal("the credential was not replaced at the spawn")
	}
	if id, ok := hearerFor(s).AgentFor(ctx, fresh); !ok || id.Standing != "alpha" {
		t.Fatalf("the new credential: %+v %v", id, ok)
	}
	if _, ok := hearerFor(s).AgentFor(ctx, stopped); ok {
		t.Fatal("the replaced credential is valid")
	}
}

// TestStart_StandingMCPAddsAnMCPConfigForClaude: the claude spawn's
// --mcp-config names a stdio server, `the-loop mcp --state-root DIR
// --session REF`, bridged over the socket; the file holds no credential.
func TestStart_StandingMCPAddsAnMCPConfigForClaude(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	s.HookBinary = "/bin/the-loop"
	cfg := testConfig(t, "alpha")
	cfg.StateRoot = t.TempDir()
	cfg.StandingMCP = true
	if res, err := s.StartStanding(context.Background(), cfg, "", false); err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	argv := r.Spawns[0].Argv
	path := credential.MCPConfigPath(cfg, "loop-standing-alpha")
	if i := slices.Index(argv, "--mcp-config"); i < 0 || i+1 >= len(argv) || argv[i+1] != path {
		t.Fatalf("argv %q, want --mcp-config %s", argv, path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v", path, fi, err)
	}
	data, _ := os.ReadFile(path)
	var doc struct {
		MCPServers map[string]struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("MCP config %s: %v", data, err)
	}
	srv := doc.MCPServers["the-loop"]
	if want := []string{"mcp", "--state-root", cfg.StateDir(), "--session", "standing:alpha"}; srv.Type != "stdio" || srv.Command != "/bin/the-loop" || !slices.Equal(srv.Args, want) {
		t.Fatalf("MCP config %s, want the stdio server /bin/the-loop %q", data, want)
	}
	if cred := credentialOf(t, r.Spawns[0]); strings.Contains(string(data), cred) || strings.Contains(string(data), "http") {
		t.Fatalf("MCP config %s holds the credential or a TCP address", data)
	}
	if dir, _ := os.Stat(filepath.Dir(path)); dir.Mode().Perm() != 0o700 {
		t.Fatalf("MCP config dir mode %v", dir.Mode())
	}
}

func TestStartSession_TheWorkItemsAgentHasItsOwnCredential(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	ctx := context.Background()
	mustStart(t, s, cfg, startReq(t, octo), "started")
	cred := credentialOf(t, w.Spawns[len(w.Spawns)-1])
	if id, ok := hearerFor(s).AgentFor(ctx, cred); !ok || id.WorkItem != octo || id.String() != "work-item:"+octo {
		t.Fatalf("AgentFor: %+v %v", id, ok)
	}
	if _, err := s.CloseWorkItem(ctx, cfg, octo, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := hearerFor(s).AgentFor(ctx, cred); ok {
		t.Fatal("a closed work item's credential is still valid")
	}
}
