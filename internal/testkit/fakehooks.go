package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// HookEvents are the events the-loop declares hooks for.
var HookEvents = []string{"SessionStart", "UserPromptSubmit", "Stop", "Notification", "PostToolUse", "SessionEnd"}

// HookRecorder is a settings file (for `--settings`) whose command hooks
// append each payload, one JSON line, to a file.
type HookRecorder struct {
	Settings string // the settings file
	file     string
}

// RecordHooks writes, under dir, a settings file declaring a command hook
// for each event (HookEvents when none are given) that appends its stdin to
// hooks.jsonl.
func RecordHooks(t testing.TB, dir string, events ...string) *HookRecorder {
	t.Helper()
	if len(events) == 0 {
		events = HookEvents
	}
	r := &HookRecorder{Settings: filepath.Join(dir, "settings.json"), file: filepath.Join(dir, "hooks.jsonl")}
	cmd := "cat >> " + shellQuote(r.file) + " && echo >> " + shellQuote(r.file)
	hooks := map[string]any{}
	for _, ev := range events {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd}}}}
	}
	data, _ := json.Marshal(map[string]any{"hooks": hooks})
	if err := os.WriteFile(r.Settings, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// Payloads returns every payload recorded so far, in order.
func (r *HookRecorder) Payloads() []map[string]any {
	data, _ := os.ReadFile(r.file)
	return jsonLines(data)
}

// Of returns the recorded payloads of one event.
func (r *HookRecorder) Of(event string) []map[string]any {
	var out []map[string]any
	for _, p := range r.Payloads() {
		if p["hook_event_name"] == event {
			out = append(out, p)
		}
	}
	return out
}

// WaitCount waits until n payloads of event were recorded and returns them.
func (r *HookRecorder) WaitCount(t testing.TB, event string, n int, timeout time.Duration) []map[string]any {
	t.Helper()
	Eventually(t, func() bool { return len(r.Of(event)) >= n }, timeout,
		"want %d %s payloads; recorded: %v", n, event, r.Payloads())
	return r.Of(event)
}

// ClaudeProjectDir is Claude Code's folder name for cwd: each character that
// is not an ASCII letter or digit becomes '-'.
func ClaudeProjectDir(cwd string) string {
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
	return b.String()
}

// ClaudeTranscriptPath is where the fake (run in cwd without
// CLAUDE_CONFIG_DIR) writes conversation id's Claude-shaped transcript.
func (a *Agent) ClaudeTranscriptPath(cwd, id string) string {
	return filepath.Join(a.ConfigDir(), "projects", ClaudeProjectDir(cwd), id+".jsonl")
}

// ClaudeTranscript returns the lines of that transcript, decoded (nil while
// it does not exist).
func (a *Agent) ClaudeTranscript(cwd, id string) []map[string]any {
	data, _ := os.ReadFile(a.ClaudeTranscriptPath(cwd, id))
	return jsonLines(data)
}

// jsonLines decodes one JSON object a line, skipping what does not decode.
func jsonLines(data []byte) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Magic messages the fake agent acts on when one is submitted (pasted or
// typed, then a carriage return); see internal/fakeagent's package comment.
const (
	// FakeClear starts a new conversation in the same process: SessionEnd
	// (reason clear) under the old id, SessionStart (source clear) under a
	// new uuid, a new transcript.
	FakeClear = "/clear"
	// FakeExit fires SessionEnd (reason prompt_input_exit) and exits 0.
	FakeExit = "/exit"
)

// FakeNotify is the message that makes the fake fire a Notification at
// once (no turn): notification_type typ (permission_prompt, idle_prompt,
// auth_success, elicitation_dialog), message msg.
func FakeNotify(typ, msg string) string { return "/fake-notify " + typ + " " + msg }

// FakeTool is the message that starts a turn asking permission for tool
// first: UserPromptSubmit, a Notification permission_prompt ("Claude needs
// your permission to use <tool>") and a dialog on screen ("Do you want to
// proceed?", "❯ 1. Yes", so the harness is not Ready) until the next
// carriage return or message answers it; then PostToolUse (tool_input
// {"command": arg}), the answer and Stop.
func FakeTool(tool, arg string) string { return "/fake-tool " + tool + " " + arg }
