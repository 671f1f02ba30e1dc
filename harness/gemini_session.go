package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// GeminiSessionPath is the session file of conversation id for a session
// in cwd (0.61.0): <gemini dir>/tmp/<project slug>/chats/
// session-<YYYY-MM-DDThh-mm>-<first 8 characters of id>.jsonl. The slug is
// the one the CLI registered for cwd in <gemini dir>/projects.json (its
// directory's .project_root names cwd); among the files whose name ends in
// the id's first 8 characters, the one whose first line's sessionId is id.
// It is computed from the recorded cwd and id, never taken from a hook
// payload. "" when there is none (yet); an id that is not a UUID is
// EINVALID.
func GeminiSessionPath(geminiDir, cwd, id string) (string, error) {
	if !uuidRE.MatchString(id) {
		return "", loop.Invalid("'%s' is not a Gemini CLI conversation id (a UUID)", id)
	}
	keys, err := projectKeys(cwd)
	if err != nil {
		return "", loop.Invalid("finding the Gemini CLI session of '%s': %w", cwd, err)
	}
	slug := geminiSlug(geminiDir, keys)
	if slug == "" {
		return "", nil
	}
	chats := filepath.Join(geminiDir, "tmp", slug, "chats")
	matches, _ := filepath.Glob(filepath.Join(chats, "session-*-"+id[:8]+".jsonl"))
	sort.Strings(matches)
	for _, m := range matches {
		if geminiFileID(m) == id {
			return m, nil
		}
	}
	return "", nil
}

// geminiSlug is the project slug projects.json gives one of keys, checked
// against the slug directory's .project_root marker; "" when none.
func geminiSlug(geminiDir string, keys []string) string {
	data, err := os.ReadFile(filepath.Join(geminiDir, "projects.json"))
	if err != nil {
		return ""
	}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if json.Unmarshal(data, &reg) != nil {
		return ""
	}
	for _, k := range keys {
		slug := reg.Projects[k]
		if slug == "" || strings.ContainsAny(slug, `/\`) || slug == "." || slug == ".." {
			continue
		}
		owner, err := os.ReadFile(filepath.Join(geminiDir, "tmp", slug, ".project_root"))
		if errors.Is(err, fs.ErrNotExist) || (err == nil && slices.Contains(keys, strings.TrimSpace(string(owner)))) {
			return slug
		}
	}
	return ""
}

// geminiFileID is the sessionId on the first line of a Gemini session file.
func geminiFileID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	var meta struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(bytes.TrimSpace(line), &meta)
	return meta.SessionID
}

// geminiLine is what ReadGeminiTranscript decodes of one line.
type geminiLine struct {
	ID        string          `json:"id"`
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	RewindTo  *string         `json:"$rewindTo"`
	Set       *struct {
		Messages *[]geminiLine `json:"messages"`
	} `json:"$set"`
	Tokens *struct {
		Input  int64 `json:"input"`
		Output int64 `json:"output"`
		Cached int64 `json:"cached"`
	} `json:"tokens"`
}

// geminiText is a message's content as text: a string, or its parts' text
// joined.
func geminiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n\n")
}

// ReadGeminiTranscript returns the last n entries (n ≤ 0: none) of the
// Gemini CLI session file at path, oldest first: one per user prompt (type
// "user"; the context the CLI adds itself — <session_context>,
// <hook_context> — and slash commands skipped, as the CLI's own resume
// does) and one per answer with text (type "gemini"). A message written
// again under the same id counts once, as last written; a {"$rewindTo": id}
// line drops that message and every later one before it, and a
// {"$set": {"messages": […]}} line (the snapshot the CLI writes when it
// resumes) replaces everything before it, as the CLI's own loader does.
// An answer's Usage is its tokens (input without the cached part, cached as
// CacheRead); the snapshot a resume writes keeps no tokens, so answers from
// before a resume have none. Lines that do not decode are skipped; a missing file gives
// no entries and no error. The file is read from its end.
func ReadGeminiTranscript(path string, n int) ([]loop.TranscriptEntry, error) {
	if n <= 0 {
		return nil, nil
	}
	c := geminiCollector{want: n, seen: map[string]bool{}}
	err := eachLineBackward(path, "the Gemini CLI session file", func(b []byte) bool {
		var l geminiLine
		if json.Unmarshal(b, &l) != nil {
			return true
		}
		if l.Set != nil && l.Set.Messages != nil {
			// A snapshot of the whole conversation (the CLI writes one when
			// it resumes): what came before it is superseded.
			msgs := *l.Set.Messages
			for i := len(msgs) - 1; i >= 0 && !c.done(); i-- {
				c.message(msgs[i])
			}
			return false
		}
		c.message(l)
		return !c.done()
	})
	out := c.out
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// geminiCollector gathers entries from message records seen last first.
type geminiCollector struct {
	want   int
	out    []loop.TranscriptEntry // newest first
	seen   map[string]bool
	rewind string // while set, messages are dropped up to and including this id
}

func (c *geminiCollector) done() bool { return len(c.out) >= c.want }

// message takes one record (read backwards).
func (c *geminiCollector) message(l geminiLine) {
	if l.RewindTo != nil {
		if c.rewind == "" {
			c.rewind = *l.RewindTo
		}
		return
	}
	if l.ID == "" || l.Type == "" {
		return // metadata and $set lines
	}
	if c.rewind != "" {
		if l.ID == c.rewind {
			c.rewind = ""
			c.seen[l.ID] = true // its earlier writes are dropped too
		}
		return
	}
	if c.seen[l.ID] {
		return
	}
	c.seen[l.ID] = true
	text := geminiText(l.Content)
	trimmed := strings.TrimSpace(text)
	switch l.Type {
	case "user":
		if trimmed == "" || strings.HasPrefix(trimmed, "/") || strings.HasPrefix(trimmed, "?") ||
			strings.HasPrefix(trimmed, "<session_context>") || strings.HasPrefix(trimmed, "<hook_context>") {
			return
		}
		c.out = append(c.out, loop.TranscriptEntry{Role: loop.RoleUser, Text: text, At: l.Timestamp})
	case "gemini":
		if trimmed == "" {
			return
		}
		e := loop.TranscriptEntry{Role: loop.RoleAssistant, Text: text, At: l.Timestamp}
		if t := l.Tokens; t != nil {
			e.Usage = &loop.TokenUsage{Input: t.Input - t.Cached, Output: t.Output, CacheRead: t.Cached}
		}
		c.out = append(c.out, e)
	}
}
