package loop

// ServiceRow is the control-plane service's row in start, stop and status
// reports (original §7).
type ServiceRow struct {
	Service string `json:"service"`
	Enabled bool   `json:"enabled"`
	// Status fields.
	Running bool   `json:"running"`
	PID     int    `json:"pid,omitempty"`
	URL     string `json:"url,omitempty"`
	Healthy bool   `json:"healthy"`
	// Degraded says why a running service serves less than it should
	// (its TCP port held by another process: the dashboard and TCP's /mcp
	// are unavailable); status then exits 1.
	Degraded string      `json:"degraded,omitempty"`
	MCP      *MCPSummary `json:"mcp,omitempty"`
	// Start/stop fields.
	Outcome string `json:"outcome,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// SlackTokenPresent says whether the service's own environment holds
	// the Slack bot token (channels.slack.botTokenEnv); only the service's
	// GET /api/v1/status sets it.
	SlackTokenPresent *bool `json:"slackTokenPresent,omitempty"`
}

// MCPSummary says whether and where MCP is served.
type MCPSummary struct {
	Enabled bool   `json:"enabled"`
	Path    string `json:"path"`
}

// Report is what `the-loop start`, `stop` and `status` return: the service
// row, a row per standing session, and whether all is as it should be.
type Report struct {
	Services         []ServiceRow  `json:"services"`
	StandingSessions []StandingRow `json:"standingSessions"`
	OK               bool          `json:"ok"`
}

// Health is GET /api/v1/health's body. StateRoot (absolute) says which
// state root the service holds, so a CLI can tell its own service from
// another project's on the same host:port.
type Health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
	// PID and StateRoot are said over the service's socket only: TCP's
	// health tells anyone no more than that it runs.
	PID       int    `json:"pid,omitempty"`
	StateRoot string `json:"stateRoot,omitempty"`
	// Degraded is, over the socket, why the service serves less than it
	// should (ServiceRow.Degraded).
	Degraded string `json:"degraded,omitempty"`
}

// PollSummary is one inbound poll cycle's outcome (`the-loop channels poll`,
// POST /api/v1/channels/poll).
type PollSummary struct {
	Skipped   string `json:"skipped,omitempty"` // why the cycle did nothing (disabled, read mode, no token)
	Replies   int    `json:"replies"`
	Processed int    `json:"processed"`
	Delivered int    `json:"delivered"`
	Dropped   int    `json:"dropped"`
}
