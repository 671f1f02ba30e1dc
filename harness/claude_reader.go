package harness

import loop "github.com/the-loop-dev/the-loop"

// ReadTranscript returns the last n user and assistant entries of
// conversation id, run in cwd, oldest first (ReadClaudeTranscript), from
// the file Claude Code keeps it in under this adapter's config directory:
// CLAUDE_CONFIG_DIR as the adapter's Env reads it (this process's
// environment, which is the one every agent it spawns inherits), else
// ~/.claude. The path is computed from cwd and id (ClaudeTranscriptPath),
// never taken from elsewhere. A missing file is no entries, no error.
func (c *Claude) ReadTranscript(cwd, id string, n int) ([]loop.TranscriptEntry, error) {
	if id == "" {
		return nil, nil
	}
	if err := c.CheckSessionID(id); err != nil {
		return nil, err
	}
	dir, err := ClaudeConfigDir(c.opt.Env, c.opt.Home)
	if err != nil {
		return nil, err
	}
	return ReadClaudeTranscript(ClaudeTranscriptPath(dir, cwd, id), n)
}
