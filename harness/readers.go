package harness

import (
	loop "github.com/the-loop-dev/the-loop"
)

var (
	_ loop.TranscriptReader = (*Codex)(nil)
	_ loop.TranscriptReader = (*Gemini)(nil)
)

// ReadTranscript returns the last n user and assistant entries of Codex
// conversation id (ReadCodexTranscript of CodexSessionPath under the
// adapter's CODEX_HOME); cwd is not needed, Codex files its sessions by
// date and id. A conversation without a file (yet) is no entries.
func (c *Codex) ReadTranscript(_, id string, n int) ([]loop.TranscriptEntry, error) {
	home, err := CodexHome(c.opt.Env, c.opt.Home)
	if err != nil {
		return nil, err
	}
	path, err := CodexSessionPath(home, id)
	if err != nil || path == "" {
		return nil, err
	}
	return ReadCodexTranscript(path, n)
}

// ReadTranscript returns the last n user and assistant entries of Gemini
// conversation id run in cwd (ReadGeminiTranscript of GeminiSessionPath
// under the adapter's Gemini directory). A conversation without a file
// (yet) is no entries.
func (g *Gemini) ReadTranscript(cwd, id string, n int) ([]loop.TranscriptEntry, error) {
	dir, err := GeminiDir(g.opt.Env, g.opt.Home)
	if err != nil {
		return nil, err
	}
	path, err := GeminiSessionPath(dir, cwd, id)
	if err != nil || path == "" {
		return nil, err
	}
	return ReadGeminiTranscript(path, n)
}
