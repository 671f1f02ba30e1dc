package lifecycle

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/store"
)

// Agent credentials. Every spawn, standing or work item, gets a
// credential of its own: random, handed to the agent in its environment as
// AgentTokenEnv, stored only as its sha256 in the record (AgentTokenHash,
// written with the start's claim, so it is valid from before the spawn),
// replaced at the next spawn and void once the session is no longer
// running. The service refuses it over TCP (over its socket
// an agent is known by its process tree, AgentOfProcess); AgentFor still
// tells which session a credential is, for that refusal.
//
// The agent's environment is explicit (loop.SpawnSpec.Env): this process's
// environment without the-loop's secrets (SecretEnv) plus the credential,
// so nothing the tmux server's global environment holds reaches it.

// AgentTokenEnv is the variable an agent finds its own credential in.
const AgentTokenEnv = "THE_LOOP_AGENT_TOKEN"

// OperatorTokenEnv is the variable the SDK reads the operator's token from;
// an agent never inherits it.
const OperatorTokenEnv = "THE_LOOP_TOKEN"

// agentCredential is one spawn's credential: the secret (only ever in the
// agent's environment) and its hash (the record's).
type agentCredential struct {
	token   string
	hash    string
	mcpFile string // the MCP config written for it ("" when standingSessions.mcp is off)
	env     []string
}

// hashCredential is the hex sha256 the record keeps.
func hashCredential(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// newAgentCredential makes a credential for the spawn into target and,
// with standingSessions.mcp, writes its MCP config (0600, under
// <state.root>/local/mcp) pointing at the service's /mcp.
func (s *Service) newAgentCredential(cfg *config.Config, target, ref string) (agentCredential, error) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	cred := agentCredential{token: hex.EncodeToString(b)}
	cred.hash = hashCredential(cred.token)
	if s.Redactor != nil {
		s.Redactor.AddCredential(cred.hash)
	}
	cred.env = AgentEnv(os.Environ(), cfg, cred.token)
	if cfg.StandingMCP && s.HookBinary != "" {
		path, err := writeMCPConfig(cfg, target, MCPServer(s.HookBinary, cfg.StateDir(), ref))
		if err != nil {
			return agentCredential{}, err
		}
		cred.mcpFile = path
	}
	return cred, nil
}

// spec gives a spawn its environment and, for claude with
// standingSessions.mcp, its `--mcp-config <file>` (right after the binary,
// ahead of the adapter's flags and of the `--` before the prompt).
func (c agentCredential) spec(harness string, spec loop.SpawnSpec) loop.SpawnSpec {
	spec.Env = slices.Clone(c.env)
	if c.mcpFile != "" && harness == "claude" && len(spec.Argv) > 0 {
		argv := make([]string, 0, len(spec.Argv)+2)
		argv = append(argv, spec.Argv[0], "--mcp-config", c.mcpFile)
		spec.Argv = append(argv, spec.Argv[1:]...)
	}
	return spec
}

// MCPConfigPath is where the MCP config of the agent in target lives.
func MCPConfigPath(cfg *config.Config, target string) string {
	return filepath.Join(cfg.StateDir(), "local", "mcp", target+".json")
}

// MCPServer is the agent's MCP server entry: a stdio server, `<binary> mcp
// --state-root DIR --session REF`, which bridges to the service's /mcp over
// its socket, where the service knows the agent from its
// process tree; the entry holds no credential.
func MCPServer(binary, stateRoot, ref string) map[string]any {
	return map[string]any{
		"type":    "stdio",
		"command": binary,
		"args":    []string{"mcp", "--state-root", stateRoot, "--session", ref},
	}
}

// writeMCPConfig writes the agent's MCP config: one server, the-loop's
// (MCPServer). A file (or a directory above it) another user owns or
// others may write is refused.
func writeMCPConfig(cfg *config.Config, target string, server map[string]any) (string, error) {
	path := MCPConfigPath(cfg, target)
	if err := CheckPrivatePath(cfg.StateDir(), path, "MCP config file (standingSessions.mcp)"); err != nil {
		return "", err
	}
	doc := map[string]any{"mcpServers": map[string]any{"the-loop": server}}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", loop.Internal("encoding the MCP config for %s: %v", target, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "cannot write the MCP config %s (standingSessions.mcp): %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+target+"-*")
	if err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "cannot write the MCP config %s (standingSessions.mcp): %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err = f.Chmod(0o600); err == nil {
		_, err = f.Write(append(data, '\n'))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "cannot write the MCP config %s (standingSessions.mcp): %w", path, err)
	}
	return path, nil
}

// SecretEnv names the variables that hold the-loop's secrets, which no
// agent inherits: every variable a *TokenEnv key of the config names (the
// Slack tokens, service.tokenEnv, any other), the defaults of the Slack
// ones, the SDK's THE_LOOP_TOKEN and an inherited THE_LOOP_AGENT_TOKEN (an
// agent that runs the CLI never hands its own credential on). Sorted.
func SecretEnv(cfg *config.Config) []string {
	names := map[string]bool{OperatorTokenEnv: true, AgentTokenEnv: true}
	for _, n := range []string{cfg.Slack.BotTokenEnv, cfg.Slack.AppTokenEnv, cfg.Service.TokenEnv} {
		if n != "" {
			names[n] = true
		}
	}
	collectTokenEnv(cfg.Raw, names)
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// collectTokenEnv adds the string value of every key named tokenEnv or
// ending in TokenEnv, anywhere in v.
func collectTokenEnv(v any, names map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && s != "" && (k == "tokenEnv" || strings.HasSuffix(k, "TokenEnv")) {
				names[s] = true
			}
			collectTokenEnv(e, names)
		}
	case []any:
		for _, e := range x {
			collectTokenEnv(e, names)
		}
	}
}

// AgentEnv is an agent's whole environment: environ without the secret
// variables (SecretEnv) plus THE_LOOP_AGENT_TOKEN=token.
func AgentEnv(environ []string, cfg *config.Config, token string) []string {
	drop := SecretEnv(cfg)
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, k) {
			out = append(out, kv)
		}
	}
	return append(out, AgentTokenEnv+"="+token)
}

// AgentFor finds the session whose current spawn token's credential is:
// a standing session that runs (or whose start is in flight) or a
// work-item session that is active (or starting). ok is false for any
// other token — one never issued, replaced by a later spawn, or of a
// session that stopped.
func (s *Service) AgentFor(_ context.Context, token string) (loop.AgentIdentity, bool) {
	if token == "" || s.DB == nil {
		return loop.AgentIdentity{}, false
	}
	want := hashCredential(token)
	var id loop.AgentIdentity
	found := false
	_ = s.DB.View(func(tx *store.Tx) error {
		recs, err := tx.ListStanding()
		if err != nil {
			return err
		}
		for _, r := range recs {
			starting := r.Claim != nil && r.Claim.Op == "start"
			if hashEqual(r.AgentTokenHash, want) && (r.Status == loop.StatusRunning || starting) && !found {
				id, found = loop.AgentIdentity{Standing: r.Name, HarnessSessionID: r.HarnessSessionID}, true
			}
		}
		items, err := tx.ListWorkItems()
		if err != nil {
			return err
		}
		for _, r := range items {
			starting := r.Claim != nil && r.Claim.Op == "start"
			if hashEqual(r.AgentTokenHash, want) && (r.Status == WorkItemActive || starting) && !found {
				id, found = loop.AgentIdentity{WorkItem: r.WorkItem.Ref, HarnessSessionID: r.HarnessSessionID}, true
			}
		}
		return nil
	})
	return id, found
}

// hashEqual compares a stored hash with want in constant time; an empty
// stored hash never matches.
func hashEqual(stored, want string) bool {
	if stored == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(stored), []byte(want)) == 1
}
