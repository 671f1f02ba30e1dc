package credential

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"

	"github.com/the-loop-dev/the-loop/config"
)

// Agent credentials. Every spawn, standing or work item, gets a
// credential of its own: random (New), handed to the agent in its
// environment as AgentTokenEnv, stored only as its sha256 in the record
// (Hash). The agent's environment is explicit (loop.SpawnSpec.Env): the
// spawning process's environment without the-loop's secrets (SecretEnv)
// plus the credential (AgentEnv), so nothing the tmux server's global
// environment holds reaches it.

// AgentTokenEnv is the variable an agent finds its own credential in.
const AgentTokenEnv = "THE_LOOP_AGENT_TOKEN"

// OperatorTokenEnv is the variable the SDK reads the operator's token from;
// an agent never inherits it.
const OperatorTokenEnv = "THE_LOOP_TOKEN"

// New is a fresh credential: 256 random bits, hex-encoded.
func New() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// Hash is the hex sha256 of token, what a record keeps of a credential.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// HashEqual compares a stored hash with want in constant time; an empty
// stored hash never matches.
func HashEqual(stored, want string) bool {
	if stored == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(stored), []byte(want)) == 1
}

// MCPConfigPath is where the MCP config of the agent in target lives:
// <state.root>/local/mcp/<target>.json.
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

// SecretValues are the values of the secrets kept out of agents
// (SecretEnv's variables, as getenv reads them): a post from an agent's
// answer never carries one.
func SecretValues(cfg *config.Config, getenv func(string) string) []string {
	var out []string
	for _, name := range SecretEnv(cfg) {
		if v := getenv(name); len(v) >= 8 {
			out = append(out, v)
		}
	}
	return out
}
