//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// fakeVersion is the Claude Code version the fake's transcript lines name.
const fakeVersion = "2.1.332"

// claudeConfigDir is $CLAUDE_CONFIG_DIR, else $FAKE_AGENT_CONFIG_DIR (the
// testkit sets it so tests never write under the developer's home), else
// $HOME/.claude, as Claude Code resolves it.
func claudeConfigDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("FAKE_AGENT_CONFIG_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".claude")
}

// projectDirName is cwd with each character that is not an ASCII letter or
// digit replaced by '-' (per UTF-16 code unit, as Claude Code's JavaScript
// does: a character beyond U+FFFF gives two), the name of the cwd's folder
// under projects/.
func projectDirName(cwd string) string {
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

// claudeTranscriptPath is <config dir>/projects/<cwd>/<session id>.jsonl.
func (a *agent) claudeTranscriptPath() string {
	return filepath.Join(a.configDir, "projects", projectDirName(a.cwd), a.sessionID+".jsonl")
}

// record appends one Claude-shaped line to the conversation's transcript
// (one write per line, O_APPEND). Lines of type user and assistant get the
// common fields and a uuid chained to the previous one.
func (a *agent) record(line map[string]any) {
	if a.contract != contractClaude { // contracts.go writes their session files
		return
	}
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	line["sessionId"] = a.sessionID
	line["timestamp"] = now
	switch line["type"] {
	case "user", "assistant", "attachment":
		id := uuid.NewString()
		var parent any
		if a.lastUUID != "" {
			parent = a.lastUUID
		}
		line["uuid"], line["parentUuid"] = id, parent
		line["cwd"] = a.cwd
		line["isSidechain"] = false
		line["userType"] = "external"
		line["version"] = fakeVersion
		a.lastUUID = id
	}
	f := a.openAppend(a.claudeTranscriptPath())
	if f == nil {
		return
	}
	defer f.Close()
	if _, err := f.Write(jsonLine(line)); err != nil {
		a.log.write(entry{Kind: "transcript_error", Error: err.Error()})
	}
}

// lastTranscriptUUID is the uuid of the last line of the conversation's
// transcript that has one ("" when there is none), so a resumed
// conversation's lines chain on.
func (a *agent) lastTranscriptUUID() string {
	data, err := os.ReadFile(a.claudeTranscriptPath())
	if err != nil {
		return ""
	}
	last := ""
	for _, line := range strings.Split(string(data), "\n") {
		var l struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.UUID != "" {
			last = l.UUID
		}
	}
	return last
}

// recordUser writes a prompt's user entry and the attachment line Claude
// Code writes after it.
func (a *agent) recordUser(promptID, text string) {
	a.record(map[string]any{"type": "user", "promptId": promptID,
		"message": map[string]any{"role": "user", "content": text}})
	a.record(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "todo_reminder", "content": []any{}}})
}

// usage is the deterministic token usage of an answer to prompt.
func usage(prompt, answer string) map[string]any {
	return map[string]any{
		"input_tokens":                10 + len(prompt),
		"output_tokens":               1 + len(answer),
		"cache_read_input_tokens":     1000,
		"cache_creation_input_tokens": 100 + len(prompt),
	}
}

// recordAnswer writes an answer as one assistant line per part (parts are
// separated by a blank line in the answer), all with the same message id,
// one text block each, as Claude Code does.
func (a *agent) recordAnswer(prompt, answer string) {
	msgID := "msg_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	reqID := "req_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	u := usage(prompt, answer)
	for _, part := range strings.Split(answer, "\n\n") {
		a.record(map[string]any{"type": "assistant", "requestId": reqID, "message": map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": a.model,
			"content":     []any{map[string]any{"type": "text", "text": part}},
			"stop_reason": nil, "usage": u,
		}})
	}
}

// recordToolUse writes the assistant's tool_use line and the user line
// carrying the tool result (a list content, which readers skip), as the
// legacy /fake-tool turn does once its dialog is answered.
func (a *agent) recordToolUse(id, tool string, input, response map[string]any) {
	a.recordToolCall(id, tool, input)
	a.recordToolResult(id, toolResult{content: response["stdout"], toolUseResult: response})
}

// recordToolCall writes the assistant's tool_use line.
func (a *agent) recordToolCall(id, tool string, input map[string]any) {
	a.record(map[string]any{"type": "assistant", "message": map[string]any{
		"id": "msg_" + strings.ReplaceAll(uuid.NewString(), "-", ""), "type": "message", "role": "assistant", "model": a.model,
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": tool, "input": input}},
		"usage":   usage("", ""),
	}})
}

// toolResult is what the user line answering a tool_use carries.
type toolResult struct {
	content       any            // the tool_result block's content: what the model reads
	isError       bool           // the block's is_error (left out when false)
	toolUseResult any            // the line's toolUseResult: the tool's response, or the error's text
	decision      map[string]any // the line's permissionDecision, nil for none
}

// recordToolResult writes the user line holding the tool_result of the
// tool use id.
func (a *agent) recordToolResult(id string, r toolResult) {
	block := map[string]any{"type": "tool_result", "tool_use_id": id, "content": r.content}
	if r.isError {
		block["is_error"] = true
	}
	line := map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{block}},
		"toolUseResult": r.toolUseResult}
	if r.decision != nil {
		line["permissionDecision"] = r.decision
	}
	a.record(line)
}

// recordInterruption writes the user line Claude Code writes after a
// rejected tool use: "[Request interrupted by user for tool use]".
func (a *agent) recordInterruption() {
	a.record(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "[Request interrupted by user for tool use]"},
	}}})
}

// recordAttachment writes an attachment line (hook_permission_decision,
// hook_cancelled, …).
func (a *agent) recordAttachment(att map[string]any) {
	a.record(map[string]any{"type": "attachment", "attachment": att})
}

// openAppend opens the session file p for appending (0600, its folder
// made 0700), logging a transcript_error and giving nil when it cannot.
func (a *agent) openAppend(p string) *os.File {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		a.log.write(entry{Kind: "transcript_error", Error: err.Error()})
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		a.log.write(entry{Kind: "transcript_error", Error: err.Error()})
		return nil
	}
	return f
}
