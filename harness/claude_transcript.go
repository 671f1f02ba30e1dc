package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// transcriptChunk is how much of a transcript ReadClaudeTranscript reads
// at a time, from the end.
const transcriptChunk = 64 * 1024

// ClaudeConfigDir is Claude Code's config directory: getenv's
// CLAUDE_CONFIG_DIR, else home/.claude (getenv nil means os.Getenv, home ""
// means the user's home directory).
func ClaudeConfigDir(getenv func(string) string, home string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d, nil
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", loop.Invalid("no home directory to find Claude Code's transcripts in (%w); set CLAUDE_CONFIG_DIR or HOME", err)
		}
		home = h
	}
	return filepath.Join(home, ".claude"), nil
}

// ClaudeTranscriptPath is where Claude Code keeps conversation sessionID's
// transcript: <configDir>/projects/<cwd with each character that is not an
// ASCII letter or digit replaced by '-'>/<sessionID>.jsonl. It is computed
// from the recorded cwd and id, never taken from a hook payload. (The
// replacement is per UTF-16 code unit, as Claude Code's JavaScript does: a
// character beyond U+FFFF gives two '-'.)
func ClaudeTranscriptPath(configDir, cwd, sessionID string) string {
	var b strings.Builder
	for _, c := range cwd {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			b.WriteRune(c)
		case c > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return filepath.Join(configDir, "projects", b.String(), sessionID+".jsonl")
}

// transcriptLine is what ReadClaudeTranscript decodes of one line.
type transcriptLine struct {
	Type        string    `json:"type"`
	Timestamp   time.Time `json:"timestamp"`
	IsMeta      bool      `json:"isMeta"`      // a line Claude Code adds itself (caveats, command output)
	IsSidechain bool      `json:"isSidechain"` // a subagent's line
	Message     struct {
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
		Usage   *struct {
			Input      int64 `json:"input_tokens"`
			Output     int64 `json:"output_tokens"`
			CacheRead  int64 `json:"cache_read_input_tokens"`
			CacheWrite int64 `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// ReadClaudeTranscript returns the last n entries (n ≤ 0: none) of the
// Claude Code transcript at path, oldest first: one per user prompt (a user
// line whose content is a string; list contents are tool results and are
// skipped, and so are lines marked isMeta or isSidechain) and one per
// assistant message (the text blocks of the lines
// sharing its message.id, joined by a blank line; a message without text
// is skipped). An entry's At is its last line's timestamp; an answer's
// Usage is its last line's usage. Lines of other types, and lines that do
// not decode (a half-written last line), are skipped. The file is read
// from its end in chunks, so the cost follows n, not the file's size. A
// missing file gives no entries and no error.
func ReadClaudeTranscript(path string, n int) ([]loop.TranscriptEntry, error) {
	if n <= 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, loop.Internal("reading the Claude Code transcript %s: %w; check its permissions", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, loop.Internal("reading the Claude Code transcript %s: %w", path, err)
	}
	c := collector{want: n}
	end := fi.Size()
	var carry []byte // the start of a line whose beginning is in an earlier chunk
	buf := make([]byte, transcriptChunk)
	for end > 0 && !c.done() {
		size := int64(len(buf))
		if size > end {
			size = end
		}
		off := end - size
		if _, err := f.ReadAt(buf[:size], off); err != nil && !errors.Is(err, io.EOF) {
			return nil, loop.Internal("reading the Claude Code transcript %s: %w", path, err)
		}
		end = off
		data := append(buf[:size:size], carry...)
		// Lines wholly inside data, last first; the first piece may go on
		// in the previous chunk.
		for !c.done() {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				break
			}
			c.line(data[i+1:])
			data = data[:i]
		}
		carry = append([]byte(nil), data...)
	}
	if !c.done() && end == 0 && len(carry) > 0 {
		c.line(carry)
	}
	c.finish()
	out := c.out
	slices.Reverse(out)
	return out, nil
}

// contentBlock is one element of a message's content list.
type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// collector gathers entries from lines seen last first.
type collector struct {
	want    int
	out     []loop.TranscriptEntry // newest first
	pending *pendingAnswer         // the assistant message being gathered
}

// pendingAnswer is an assistant message whose earlier lines may follow.
type pendingAnswer struct {
	id    string
	parts []string // last first
	at    time.Time
	usage *loop.TokenUsage
}

// done reports whether want complete entries are gathered.
func (c *collector) done() bool { return len(c.out) >= c.want }

// line takes one line (read backwards).
func (c *collector) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || !(bytes.Contains(b, []byte(`"user"`)) || bytes.Contains(b, []byte(`"assistant"`))) {
		return
	}
	var l transcriptLine
	if json.Unmarshal(b, &l) != nil || l.IsMeta || l.IsSidechain {
		return
	}
	switch l.Type {
	case "user":
		var text string
		if json.Unmarshal(l.Message.Content, &text) != nil {
			return // a tool result (list content), or no content
		}
		c.finish()
		c.emit(loop.TranscriptEntry{Role: loop.RoleUser, Text: text, At: l.Timestamp})
	case "assistant":
		if c.pending == nil || c.pending.id != l.Message.ID || l.Message.ID == "" {
			c.finish()
			if c.done() {
				return
			}
			c.pending = &pendingAnswer{id: l.Message.ID, at: l.Timestamp}
			if u := l.Message.Usage; u != nil {
				c.pending.usage = &loop.TokenUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
			}
		}
		var blocks []contentBlock
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			var s string
			if json.Unmarshal(l.Message.Content, &s) == nil {
				blocks = []contentBlock{{Type: "text", Text: s}}
			}
		}
		for i := len(blocks) - 1; i >= 0; i-- {
			if blocks[i].Type == "text" && blocks[i].Text != "" {
				c.pending.parts = append(c.pending.parts, blocks[i].Text)
			}
		}
	}
}

// finish emits the pending assistant message, if it has text.
func (c *collector) finish() {
	p := c.pending
	c.pending = nil
	if p == nil || len(p.parts) == 0 || c.done() {
		return
	}
	slices.Reverse(p.parts)
	c.emit(loop.TranscriptEntry{Role: loop.RoleAssistant, Text: strings.Join(p.parts, "\n\n"), At: p.at, Usage: p.usage})
}

// emit adds an entry, newest first.
func (c *collector) emit(e loop.TranscriptEntry) {
	if !c.done() {
		c.out = append(c.out, e)
	}
}
