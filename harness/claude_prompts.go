package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// What the service reads of a Claude Code transcript beyond its entries:
// where it stands before a say is pasted, the prompt id Claude Code gave
// the user entry of a text (a say queued behind a running turn is answered
// under it), the text of a prompt id's entry, and the answers' usage a
// Stop counts. Each path is computed from the recorded cwd and id
// (ClaudeTranscriptPath under the adapter's config directory), never taken
// from a hook payload.

// ReadsTranscripts reports true.
func (*Claude) ReadsTranscripts() bool { return true }

// transcriptPath is the transcript of conversation id in cwd ("" for an
// empty cwd or id, an id not of Claude Code's shape, or no config
// directory).
func (c *Claude) transcriptPath(cwd, id string) string {
	if cwd == "" || id == "" || c.CheckSessionID(id) != nil {
		return "" // an id that is not Claude Code's names no transcript path
	}
	dir, err := ClaudeConfigDir(c.opt.Env, c.opt.Home)
	if err != nil {
		return ""
	}
	return ClaudeTranscriptPath(dir, cwd, id)
}

// TokenEntries is ReadClaudeTranscript of the last n entries of
// conversation id's transcript: its answers carry their usage.
func (c *Claude) TokenEntries(cwd, id string, n int) ([]loop.TranscriptEntry, error) {
	path := c.transcriptPath(cwd, id)
	if path == "" {
		return nil, nil
	}
	return ReadClaudeTranscript(path, n)
}

// TranscriptMark is the transcript of conversation id in cwd and its size
// now (0 while it is not there).
func (c *Claude) TranscriptMark(cwd, id string) loop.TranscriptMark {
	path := c.transcriptPath(cwd, id)
	if path == "" {
		return loop.TranscriptMark{}
	}
	m := loop.TranscriptMark{Path: path}
	if fi, err := os.Stat(path); err == nil {
		m.Offset = fi.Size()
	}
	return m
}

// PromptAfter reads the transcript's whole lines past m for a user entry
// whose text has PromptSum sum: its promptId, and where the next look
// starts (past the last whole line read).
func (*Claude) PromptAfter(m loop.TranscriptMark, sum string) (string, loop.TranscriptMark) {
	if m.Path == "" {
		return "", m
	}
	f, err := os.Open(m.Path)
	if err != nil {
		return "", m
	}
	defer f.Close()
	if _, err := f.Seek(m.Offset, io.SeekStart); err != nil {
		return "", m
	}
	data, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return "", m
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return "", m
	}
	next := loop.TranscriptMark{Path: m.Path, Offset: m.Offset + int64(end) + 1}
	for _, line := range bytes.Split(data[:end], []byte{'\n'}) {
		var e promptLine
		if json.Unmarshal(line, &e) != nil || e.Type != "user" || e.PromptID == "" {
			continue
		}
		if loop.PromptSum(contentText(e.Message.Content)) == sum {
			return e.PromptID, next
		}
	}
	return "", next
}

// PromptSum is the PromptSum of the text of the last user entry of
// promptID in the last 1 MiB of conversation id's transcript ("" when
// there is none).
func (c *Claude) PromptSum(cwd, id, promptID string) string {
	path := c.transcriptPath(cwd, id)
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 1<<20 {
		_, _ = f.Seek(fi.Size()-1<<20, io.SeekStart)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return ""
	}
	sum := ""
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		var e promptLine
		if json.Unmarshal(line, &e) == nil && e.Type == "user" && e.PromptID == promptID {
			if text := contentText(e.Message.Content); text != "" {
				sum = loop.PromptSum(text)
			}
		}
	}
	return sum
}

// promptLine is what PromptAfter and PromptSum decode of a line.
type promptLine struct {
	Type     string `json:"type"`
	PromptID string `json:"promptId"`
	Message  struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// contentText is a transcript message's text: a string, or its text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
