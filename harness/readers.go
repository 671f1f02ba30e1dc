package harness

import (
	loop "github.com/the-loop-dev/the-loop"
)

// ReadsTranscripts reports true.
func (*Codex) ReadsTranscripts() bool { return true }

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

// TokenEntries gives none: the-loop counts the tokens of claude's
// conversations only.
func (*Codex) TokenEntries(string, string, int) ([]loop.TranscriptEntry, error) { return nil, nil }

// TranscriptMark is the zero mark: a say's prompt into Codex is found by
// its hooks alone (its UserPromptSubmit's turn_id).
func (*Codex) TranscriptMark(string, string) loop.TranscriptMark { return loop.TranscriptMark{} }

// PromptAfter finds nothing: see TranscriptMark.
func (*Codex) PromptAfter(m loop.TranscriptMark, _ string) (string, loop.TranscriptMark) {
	return "", m
}

// PromptSum is "": Codex's transcript keeps no prompt ids the hooks name.
func (*Codex) PromptSum(string, string, string) string { return "" }

// ReadsTranscripts reports true.
func (*Gemini) ReadsTranscripts() bool { return true }

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

// TokenEntries gives none: the-loop counts the tokens of claude's
// conversations only.
func (*Gemini) TokenEntries(string, string, int) ([]loop.TranscriptEntry, error) { return nil, nil }

// TranscriptMark is the zero mark: a say's prompt into the Gemini CLI is
// found by its hooks alone (its BeforeAgent).
func (*Gemini) TranscriptMark(string, string) loop.TranscriptMark { return loop.TranscriptMark{} }

// PromptAfter finds nothing: see TranscriptMark.
func (*Gemini) PromptAfter(m loop.TranscriptMark, _ string) (string, loop.TranscriptMark) {
	return "", m
}

// PromptSum is "": the Gemini CLI's transcript keeps no prompt ids the
// hooks name.
func (*Gemini) PromptSum(string, string, string) string { return "" }

// ReadsTranscripts reports false: cursor-agent keeps no transcript the-loop
// reads.
func (Cursor) ReadsTranscripts() bool { return false }

// ReadTranscript refuses: cursor-agent keeps no transcript the-loop reads.
func (Cursor) ReadTranscript(string, string, int) ([]loop.TranscriptEntry, error) {
	return nil, loop.Invalid("the cursor harness keeps no transcript the-loop can read")
}

// TokenEntries gives none: a cursor pane is never hosted.
func (Cursor) TokenEntries(string, string, int) ([]loop.TranscriptEntry, error) { return nil, nil }

// TranscriptMark is the zero mark: a cursor pane is never hosted.
func (Cursor) TranscriptMark(string, string) loop.TranscriptMark { return loop.TranscriptMark{} }

// PromptAfter finds nothing: a cursor pane is never hosted.
func (Cursor) PromptAfter(m loop.TranscriptMark, _ string) (string, loop.TranscriptMark) {
	return "", m
}

// PromptSum is "": a cursor pane is never hosted.
func (Cursor) PromptSum(string, string, string) string { return "" }
