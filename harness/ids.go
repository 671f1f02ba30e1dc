package harness

import (
	loop "github.com/the-loop-dev/the-loop"
)

// Conversation ids. Each adapter says which ids its CLI gives a
// conversation (loop.Harness.CheckSessionID); lifecycle asks it before an
// id from a hook payload or a record is stored, put in an argv or joined
// into a transcript path, so `--resume ../../x` or a flag in an id's
// place never reaches a CLI and no path leaves the CLI's own directory.
// Claude Code and the Gemini CLI name a conversation by a random UUID in
// lowercase hex (crypto.randomUUID); Codex by a UUIDv7 in the same form,
// the one its session files are named after (codexRolloutRE).

// checkUUID refuses an id that is not a lowercase UUID, naming the harness
// (what) and the id.
func checkUUID(what, id string) error {
	if uuidRE.MatchString(id) {
		return nil
	}
	return loop.Invalid("%s is not a %s conversation id (a lowercase UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e); "+
		"the-loop neither records it nor passes it to the CLI — a conversation id comes from the CLI itself, never from a hand-made hook payload",
		loop.QuoteID(id), what)
}

// CheckSessionID refuses an id that is not a Claude Code conversation id
// (a lowercase UUID): an EINVALID *loop.Error naming it.
func (*Claude) CheckSessionID(id string) error { return checkUUID("claude", id) }

// CheckSessionID refuses an id that is not a Gemini CLI conversation id
// (a lowercase UUID): an EINVALID *loop.Error naming it.
func (*Gemini) CheckSessionID(id string) error { return checkUUID("gemini", id) }

// CheckSessionID refuses an id that is not a Codex conversation id (a
// lowercase UUID, v7 as Codex 0.171.0 writes them — the id its session
// file is named after): an EINVALID *loop.Error naming it.
func (*Codex) CheckSessionID(id string) error { return checkUUID("codex", id) }

// CheckSessionID refuses every id: a cursor pane is never hosted, so no
// conversation of it is recorded.
func (Cursor) CheckSessionID(id string) error {
	return loop.Invalid("%s: the cursor harness has no conversation ids the-loop records (it is never hosted in tmux)", loop.QuoteID(id))
}
