package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// uuidRE matches a conversation id as Codex and Gemini write them.
var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// codexRolloutRE matches a Codex session file's name:
// rollout-<YYYY-MM-DDThh-mm-ss>-<conversation id>.jsonl.
var codexRolloutRE = regexp.MustCompile(`^rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$`)

// SessionIDOf returns the conversation id of the Codex running in the pane
// whose process is panePID: the id in the name of the session file
// (<CODEX_HOME>/sessions/…/rollout-…-<id>.jsonl) that a process of the
// pane's own process tree holds open. Codex keeps its session file open
// while it runs (observed on 0.171.0 with --no-daemon, which every spawn
// of this adapter passes); it creates it when the first turn starts, so ok
// is false until then — the caller polls, and a session whose id never
// shows is failed, never recorded under a guess. It is never "the newest
// file": a file another Codex holds belongs to that Codex. Several
// different ids held by one pane's tree are an error.
func (c *Codex) SessionIDOf(panePID int) (id string, ok bool, err error) {
	home, err := CodexHome(c.opt.Env, c.opt.Home)
	if err != nil {
		return "", false, err
	}
	sessions := filepath.Join(home, "sessions")
	roots := []string{sessions}
	if real, err := filepath.EvalSymlinks(sessions); err == nil && real != sessions {
		roots = append(roots, real)
	}
	var ids []string
	for _, pid := range processTree(c.opt.Proc, panePID) {
		fdDir := filepath.Join(c.opt.Proc, strconv.Itoa(pid), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !underAny(target, roots) {
				continue
			}
			m := codexRolloutRE.FindStringSubmatch(filepath.Base(target))
			if m != nil && !slices.Contains(ids, m[1]) {
				ids = append(ids, m[1])
			}
		}
	}
	switch len(ids) {
	case 0:
		return "", false, nil
	case 1:
		return ids[0], true, nil
	default:
		sort.Strings(ids)
		return "", false, loop.Internal("the Codex in pane process %d holds %d conversations open (%s); "+
			"not choosing one — start it with one conversation", panePID, len(ids), strings.Join(ids, ", "))
	}
}

func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(path, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// processTree returns root and its descendants, read from proc's <pid>/stat
// files (parent pids); root first.
func processTree(proc string, root int) []int {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return []int{root}
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentPID(filepath.Join(proc, e.Name(), "stat")); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// parentPID reads the parent pid from a /proc/<pid>/stat file: the fourth
// field, counted after the command name's closing parenthesis (the name
// may hold spaces and parentheses).
func parentPID(statPath string) (int, bool) {
	data, err := os.ReadFile(statPath)
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// CodexSessionPath is the session file of conversation id under Codex's
// home: <home>/sessions/<YYYY>/<MM>/<DD>/rollout-<start>-<id>.jsonl, found
// by the id in its name (the date is the conversation's start). "" when
// there is none (yet). An id that is not a UUID is EINVALID.
func CodexSessionPath(home, id string) (string, error) {
	if !uuidRE.MatchString(id) {
		return "", loop.Invalid("'%s' is not a Codex conversation id (a UUID)", id)
	}
	matches, err := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"))
	if err != nil || len(matches) == 0 {
		return "", nil
	}
	sort.Strings(matches)
	return matches[0], nil
}

// codexLine is what ReadCodexTranscript decodes of one session-file line.
type codexLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Info *struct {
			Last *struct {
				Input      int64 `json:"input_tokens"`
				Cached     int64 `json:"cached_input_tokens"`
				CacheWrite int64 `json:"cache_write_input_tokens"`
				Output     int64 `json:"output_tokens"`
			} `json:"last_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

// codexContextPrefixes start the user-role messages Codex writes itself
// (context it gives the model), which are not prompts.
var codexContextPrefixes = []string{"<environment_context>", "<user_instructions>", "<skills_instructions>",
	"<permissions instructions>", "<apps_instructions>", "<turn_aborted>", "<user_shell_command>", "# AGENTS.md instructions"}

// ReadCodexTranscript returns the last n entries (n ≤ 0: none) of the
// Codex session file at path, oldest first: one per user prompt and one per
// assistant message (response_item lines of type message; the text parts
// joined by a blank line). User-role messages Codex writes itself (the
// environment context, instructions) and developer messages are skipped. An
// answer's Usage is its turn's last token_count (input without the cached
// part, cached as CacheRead). Lines that do not decode (a half-written last
// line) are skipped; a missing file gives no entries and no error. The file
// is read from its end.
func ReadCodexTranscript(path string, n int) ([]loop.TranscriptEntry, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []loop.TranscriptEntry // newest first
	var usage *loop.TokenUsage     // a token_count seen after (below) the next answer up
	err := eachLineBackward(path, "the Codex session file", func(b []byte) bool {
		if !bytes.Contains(b, []byte(`"message"`)) && !bytes.Contains(b, []byte(`"token_count"`)) {
			return true
		}
		var l codexLine
		if json.Unmarshal(b, &l) != nil {
			return true
		}
		switch {
		case l.Type == "event_msg" && l.Payload.Type == "token_count":
			if l.Payload.Info != nil && l.Payload.Info.Last != nil && usage == nil {
				u := l.Payload.Info.Last
				usage = &loop.TokenUsage{Input: u.Input - u.Cached, Output: u.Output, CacheRead: u.Cached, CacheWrite: u.CacheWrite}
			}
		case l.Type == "response_item" && l.Payload.Type == "message":
			var parts []string
			for _, c := range l.Payload.Content {
				if (c.Type == "input_text" || c.Type == "output_text" || c.Type == "text") && c.Text != "" {
					parts = append(parts, c.Text)
				}
			}
			text := strings.Join(parts, "\n\n")
			switch l.Payload.Role {
			case "user":
				if text == "" || hasAnyPrefix(strings.TrimSpace(text), codexContextPrefixes) {
					return true
				}
				usage = nil // a token count below a prompt belongs to a later turn
				out = append(out, loop.TranscriptEntry{Role: loop.RoleUser, Text: text, At: l.Timestamp})
			case "assistant":
				if text == "" {
					return true
				}
				out = append(out, loop.TranscriptEntry{Role: loop.RoleAssistant, Text: text, At: l.Timestamp, Usage: usage})
				usage = nil
			}
		}
		return len(out) < n
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
