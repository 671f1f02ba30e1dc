package main

import (
	"io"
	"net/url"
	"path/filepath"

	loop "github.com/the-loop-dev/the-loop"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/sdk"
)

// MCPCmd is `the-loop mcp`: an MCP stdio server for one agent, bridged
// over the service's socket to its /mcp. A claude spawn's
// --mcp-config names it; the service knows the agent from the process tree
// the bridge runs in (the agent's pane), so the bridge sends no credential.
type MCPCmd struct {
	StateRoot string `name:"state-root" required:"" help:"The state root whose service answers." placeholder:"DIR"`
	Session   string `help:"The session the agent is of (standing:<name> or a work item's ref); the service refuses it when the agent's pane is another session's." placeholder:"REF"`
}

// Run bridges stdin and stdout to the service until stdin ends. Without a
// service on the socket every tool call is answered with an error naming
// it.
func (c *MCPCmd) Run(a *App) error {
	root, err := filepath.Abs(c.StateRoot)
	if err != nil {
		return loop.Invalid("--state-root %q: %v", c.StateRoot, err)
	}
	endpoint := "http://the-loop.sock" + loophttp.MCPPath
	if c.Session != "" {
		endpoint += "?session=" + url.QueryEscape(c.Session)
	}
	ctx, stop := signalContext()
	defer stop()
	return loophttp.BridgeMCP(ctx, io.NopCloser(a.Stdin), nopWriteCloser{a.Stdout}, socketHTTP(sdk.LocalSocket(root)), endpoint)
}

// nopWriteCloser is a writer whose Close does nothing (stdout stays open).
type nopWriteCloser struct{ io.Writer }

// Close does nothing.
func (nopWriteCloser) Close() error { return nil }
