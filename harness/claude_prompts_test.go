package harness

import (
	"os"
	"path/filepath"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

const promptsConversation = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

// claudeIn is the claude adapter whose CLAUDE_CONFIG_DIR is dir.
func claudeIn(dir string) *Claude {
	return NewClaude(ClaudeOptions{Env: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return dir
		}
		return ""
	}})
}

func TestTranscriptMark_AnIDThatIsAPathNamesNoFile(t *testing.T) {
	c := claudeIn(t.TempDir())
	if m := c.TranscriptMark("/w", "../../../../tmp/secret"); m.Path != "" {
		t.Fatalf("TranscriptMark of a path id = %q", m.Path)
	}
	if m := c.TranscriptMark("/w", promptsConversation); m.Path == "" || m.Offset != 0 {
		t.Fatalf("TranscriptMark of a conversation id without a file: %+v", m)
	}
}

// A say queued behind a running turn is answered under the prompt id
// Claude Code gave its user entry: PromptAfter finds the entry of the
// text's sum past the mark (not one before it, nor a half-written line),
// and PromptSum reads a prompt id's text back.
func TestPromptAfter_FindsTheUserEntryOfATextPastTheMark(t *testing.T) {
	dir := t.TempDir()
	c := claudeIn(dir)
	path := ClaudeTranscriptPath(dir, "/w", promptsConversation)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	before := `{"type":"user","promptId":"p0","message":{"role":"user","content":"hello"}}` + "\n"
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	m := c.TranscriptMark("/w", promptsConversation)
	if m.Offset != int64(len(before)) {
		t.Fatalf("mark %+v, want the file's size %d", m, len(before))
	}
	sum := loop.PromptSum("hello")
	if id, next := c.PromptAfter(m, sum); id != "" || next != m {
		t.Fatalf("nothing past the mark: %q %+v", id, next)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}` + "\n" +
		`{"type":"user","promptId":"p1","message":{"role":"user","content":[{"type":"text","text":"hello"}]}}` + "\n" + `{"type":"us`)
	f.Close()
	id, next := c.PromptAfter(m, sum)
	if id != "p1" || next.Path != path || next.Offset <= m.Offset {
		t.Fatalf("past the mark: %q %+v", id, next)
	}
	if fi, _ := os.Stat(path); next.Offset >= fi.Size() {
		t.Fatalf("the next look starts at %d, past the half-written line's start (file %d)", next.Offset, fi.Size())
	}
	if got := c.PromptSum("/w", promptsConversation, "p1"); got != sum {
		t.Fatalf("PromptSum of p1 = %q, want %q", got, sum)
	}
	if got := c.PromptSum("/w", promptsConversation, "nope"); got != "" {
		t.Fatalf("PromptSum of an unknown prompt id = %q", got)
	}
	if id, next := c.PromptAfter(loop.TranscriptMark{}, sum); id != "" || next != (loop.TranscriptMark{}) {
		t.Fatalf("the zero mark: %q %+v", id, next)
	}
}
