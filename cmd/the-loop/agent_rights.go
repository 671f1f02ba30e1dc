package main

import (
	"context"
	"os"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/internal/proctree"
)

// agentVerbs are the commands an agent may run (what its
// MCP tools may do — list, status, read, say framed as itself — and the
// commands its spawn runs: the hook, the MCP bridge, internal-exec), plus
// those that touch no session (config, completion).
var agentVerbs = []string{"status", "standing list", "standing say", "standing transcript", "standing peek", "sessions list",
	"hook", "mcp", "internal-exec", "config schema", "config validate", "completion", "__complete"}

// agentVerb reports whether kong's command (e.g. "standing say <name>
// <text>") is one of agentVerbs.
func agentVerb(cmd string) bool { return oneOf(cmd, agentVerbs) }

// operatorShell is the refusal of a verb an agent may not run.
func operatorShell(verb, where string) error {
	return loop.Errorf(loop.EINTERNAL, "the-loop %s refused: %s, which has an agent's rights only (status, standing list, transcript, peek, say); run this from the operator's shell",
		verb, where)
}

// refuseAgentVerb refuses, before anything runs, a verb an agent may not
// run when this process runs in an agent's spawn (its environment holds
// the agent credential the-loop gives every spawn). The service refuses it
// too, from the process tree it reads itself; inProcessAgent is that check
// where no service answers.
func refuseAgentVerb(cmd string) error {
	if agentVerb(cmd) || os.Getenv(credential.AgentTokenEnv) == "" {
		return nil
	}
	return operatorShell(verbName(cmd), "this process runs in an agent's spawn ("+credential.AgentTokenEnv+" is set)")
}

// inProcessAgent refuses a verb an agent may not run when this process's
// ancestry reaches the pane of a session svc knows to be running — what
// the service's socket does for a peer, for the verbs run in this process.
func inProcessAgent(ctx context.Context, cmd string, svc loop.PaneAgents) error {
	if cmd == "" || agentVerb(cmd) {
		return nil
	}
	chain, underTmux := proctree.Chain(os.Getpid())
	if !underTmux {
		return nil
	}
	if id, ok := svc.AgentOfProcess(ctx, chain); ok {
		return operatorShell(verbName(cmd), "this process runs in "+id.String()+"'s agent pane")
	}
	return nil
}

// verbName is kong's command without its arguments ("standing start").
func verbName(cmd string) string {
	var words []string
	for _, w := range strings.Fields(cmd) {
		if strings.HasPrefix(w, "<") {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}
