package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
)

// Agent credentials. Every spawn, standing or work item, gets a
// credential of its own (credential.New): handed to the agent in its
// environment as credential.AgentTokenEnv, stored only as its sha256 in the
// record (AgentTokenHash, written with the start's claim, so it is valid
// from before the spawn), replaced at the next spawn and void once the
// session is no longer running. The service refuses it over TCP (over its
// socket an agent is known by its process tree, hearing's
// AgentOfProcess); hearing's AgentFor still tells which session a
// credential is, for that refusal. What needs no store (the variables, the
// agent's environment, the hash, the MCP entry) is internal/credential's;
// issuing one at a spawn is here.

// agentCredential is one spawn's credential: the secret (only ever in the
// agent's environment) and its hash (the record's).
type agentCredential struct {
	token   string
	hash    string
	mcpFile string // the MCP config written for it ("" when standingSessions.mcp is off)
	env     []string
}

// newAgentCredential makes a credential for the spawn into target and,
// with standingSessions.mcp, writes its MCP config (0600, under
// <state.root>/local/mcp) pointing at the service's /mcp.
func (e *Engine) newAgentCredential(cfg *config.Config, target, ref string) (agentCredential, error) {
	cred := agentCredential{token: credential.New()}
	cred.hash = credential.Hash(cred.token)
	e.h.AddCredential(cred.hash)
	cred.env = credential.AgentEnv(os.Environ(), cfg, cred.token)
	if cfg.StandingMCP && e.h.HookBinary() != "" {
		path, err := writeMCPConfig(cfg, target, credential.MCPServer(e.h.HookBinary(), cfg.StateDir(), ref))
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

// writeMCPConfig writes the agent's MCP config: one server, the-loop's
// (credential.MCPServer). A file (or a directory above it) another user
// owns or others may write is refused (fileperm.CheckPrivatePath).
func writeMCPConfig(cfg *config.Config, target string, server map[string]any) (string, error) {
	path := credential.MCPConfigPath(cfg, target)
	if err := fileperm.CheckPrivatePath(cfg.StateDir(), path, "MCP config file (standingSessions.mcp)"); err != nil {
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
