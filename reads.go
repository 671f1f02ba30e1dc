package loop

// TranscriptResult is what `standing transcript`, REST's
// GET /standing-sessions/transcript and the MCP tool
// read_standing_session_transcript return: a standing session's
// conversation, its user prompts and assistant answers, oldest first.
type TranscriptResult struct {
	Name    string            `json:"name"`
	Entries []TranscriptEntry `json:"entries"` // [] when there is nothing (yet) to show
}

// PeekResult is what `standing peek` and REST's GET
// /standing-sessions/peek return: the last lines of a standing session's
// agent pane, as tmux renders them (no colours), for what a transcript
// does not show — a permission dialog, a harness without a transcript.
type PeekResult struct {
	Name       string `json:"name"`
	TmuxTarget string `json:"tmuxTarget"` // the tmux session, loop-standing-<name>
	// TmuxSocket is the `-L` socket the agent runs on ("" is the default
	// server): `tmux -L <socket> attach -r -t =<tmuxTarget>` watches it.
	TmuxSocket string `json:"tmuxSocket"`
	// Running reports whether the pane's process runs (false: the pane is
	// dead and shows what the agent left on exit).
	Running bool `json:"running"`
	// Lines are the pane's last lines, oldest first, trailing blank lines
	// left out; [] when the pane shows nothing.
	Lines []string `json:"lines"`
}
