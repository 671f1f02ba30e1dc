package main

// The commands the service's program runs (decisions D37). Their flags are
// declared here, in every build, so that `--help` and a usage error read
// the same from the-loop and from the-loopd; their Run methods live with
// the service (serve_cmd.go, mcp_cmd.go, channels_cmd.go), and a CLI
// built without the service hands them over (service_omitted.go).

// ServeCmd is `the-loop serve`: the service in the foreground. It starts
// the standing sessions that auto-start (unless --no-autostart: `the-loop
// start` starts them itself) and supervises every running one.
type ServeCmd struct {
	NoAutostart bool   `name:"no-autostart" help:"Do not start the standing sessions that auto-start (the-loop start starts them itself)."`
	LogFile     string `name:"log-file" placeholder:"FILE" help:"Write the service log to FILE, rotated as service.log says (the-loop start passes <state.root>/logs/service.log); standard error without it."`
}

// ChannelsCmd groups the channel verbs (Slack).
type ChannelsCmd struct {
	Poll   ChannelsPollCmd   `cmd:"" help:"Read the bound Slack threads once now and deliver authorized replies (through the service when it answers)."`
	Status ChannelsStatusCmd `cmd:"" help:"Show the resolved Slack settings as this CLI sees them (whether the bot token is present in its environment, never its value), and whether the service sees the token."`
}

// ChannelsPollCmd is `the-loop channels poll`: one inbound cycle, for cron
// or daemon-less setups (decisions D22).
type ChannelsPollCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json: the cycle's summary)."`
}

// ChannelsStatusCmd is `the-loop channels status`.
type ChannelsStatusCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// MCPCmd is `the-loop mcp`: an MCP stdio server for one agent, bridged
// over the service's socket to its /mcp. A claude spawn's
// --mcp-config names it; the service knows the agent from the process tree
// the bridge runs in (the agent's pane), so the bridge sends no credential.
type MCPCmd struct {
	StateRoot string `name:"state-root" required:"" help:"The state root whose service answers." placeholder:"DIR"`
	Session   string `help:"The session the agent is of (standing:<name> or a work item's ref); the service refuses it when the agent's pane is another session's." placeholder:"REF"`
}
