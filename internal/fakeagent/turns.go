//go:build linux

package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Magic messages (typed or pasted, then submitted) that control the fake.
const (
	// notifyCmd fires a Notification at once: "/fake-notify <type> <message>".
	notifyCmd = "/fake-notify "
	// toolCmd starts a turn that asks permission for a tool first:
	// "/fake-tool <tool name> <argument>".
	toolCmd = "/fake-tool "
	// clearCmd starts a new conversation in the same process.
	clearCmd = "/clear"
	// exitCmd ends the process (SessionEnd reason prompt_input_exit).
	exitCmd = "/exit"
)

// dialogLines is how many lines the permission dialog takes on screen.
const dialogLines = 5

// handle takes one input event; exit is true when the agent must end with
// code.
func (a *agent) handle(in input) (code int, exit bool) {
	switch in.kind {
	case inputSwallowed:
		a.printf("\r\x1b[K❯ %s", firstLine(in.text)) // on screen before the log says so
		a.log.write(entry{Kind: "swallowed", Text: in.text})
		return 0, false
	case inputEmpty:
		if a.cur != nil && a.cur.waiting {
			a.answerDialog("")
		}
		return 0, false
	case inputExit:
		return in.code, true
	case inputKey:
		a.onKey(in.text)
		return 0, false
	case inputIgnored:
		a.log.write(entry{Kind: "paste_ignored", Text: in.text})
		return 0, false
	}
	m := in.text
	if a.contract == contractGemini { // a return the CLI took as a newline is not part of the prompt
		m = strings.TrimRight(m, "\n")
	}
	a.mu.Lock()
	a.messages = append(a.messages, m)
	a.mu.Unlock()
	a.log.write(entry{Kind: "message", Text: m})
	switch {
	case a.cur != nil && a.cur.waiting:
		a.answerDialog(m)
		return 0, false
	case strings.HasPrefix(m, notifyCmd):
		a.notify(strings.TrimPrefix(m, notifyCmd))
		a.printf("\r\n❯ ")
		return 0, false
	case a.cur != nil && a.contract == contractCodex:
		a.join(m)
		return 0, false
	case a.cur != nil:
		a.enqueue(m)
		return 0, false
	}
	a.printf("\r\n● received %d bytes\r\n❯ ", len(m))
	return a.process(m)
}

// process acts on a message when no turn runs: a command, or a new turn.
func (a *agent) process(m string) (code int, exit bool) {
	switch strings.TrimSpace(m) {
	case exitCmd:
		a.fire("SessionEnd", map[string]any{"reason": "prompt_input_exit"})
		return 0, true
	case clearCmd:
		a.clear()
		return 0, false
	}
	id := uuid.NewString()
	a.fire("UserPromptSubmit", map[string]any{"prompt": m, "prompt_id": id, "permission_mode": a.permissionMode()})
	a.startTurn(id, m)
	return 0, false
}

// permissionMode is the mode payloads report: "default" for manual (as
// Claude Code reports it) and with no --permission-mode.
func (a *agent) permissionMode() string {
	if a.permMode == "" || a.permMode == "manual" {
		return "default"
	}
	return a.permMode
}

// startTurn records the prompt and starts answering it: after the think
// time, or, for a /fake-tool turn, once its tool use is decided — by the
// modelled permission flow when a --permission-mode was given
// (permissions.go), else by the legacy dialog, answered by the next return.
func (a *agent) startTurn(promptID, text string) {
	a.cur = &turn{promptID: promptID, text: text}
	a.recordUserAs(promptID, text)
	if rest, ok := strings.CutPrefix(text, toolCmd); ok {
		name, arg, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if name == "" {
			name = "Bash"
		}
		a.cur.tool = &toolCall{id: "toolu_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:24], name: name, arg: arg}
		if a.modelsPermissions() {
			a.useTool()
			return
		}
		a.cur.waiting = true
		a.printf("\r\n╭─ %s(%s)\r\n│ Do you want to proceed?\r\n│ ❯ 1. Yes\r\n│   2. No\r\n╰─\r\n", name, arg)
		a.fire("Notification", map[string]any{"message": "Claude needs your permission to use " + name,
			"notification_type": "permission_prompt"})
		return
	}
	a.timer.Reset(a.think)
}

// holdPoll is how often a held turn looks for its hold file to go.
const holdPoll = 10 * time.Millisecond

// held reports that the running turn's think time is over but it may not
// end yet: FAKE_AGENT_HOLD names a file that exists, and the number it
// holds (none: 0) — how many held turns may end in all — is used up.
func (a *agent) held() bool {
	if a.hold == "" {
		return false
	}
	b, err := os.ReadFile(a.hold)
	if err != nil {
		return false
	}
	granted, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if granted > a.released {
		a.released++
		return false
	}
	return true
}

// answerDialog closes the permission dialog: the tool "runs", PostToolUse
// fires, and the turn goes on to its answer.
func (a *agent) answerDialog(choice string) {
	t := a.cur
	t.waiting = false
	a.log.write(entry{Kind: "dialog_answered", PromptID: t.promptID, Text: choice})
	input := map[string]any{"command": t.tool.arg}
	response := map[string]any{"stdout": "ran " + t.tool.arg, "stderr": "", "interrupted": false, "isImage": false}
	a.recordToolUse(t.tool.id, t.tool.name, input, response)
	a.fire("PostToolUse", map[string]any{"tool_name": t.tool.name, "tool_input": input,
		"tool_response": response, "tool_use_id": t.tool.id, "permission_mode": a.permissionMode()})
	// The dialog (five lines) goes away, as Claude Code redraws in place.
	a.printf("\x1b[%dA\r\x1b[J● %s(%s)\r\n  ⎿  ran %s\r\n❯ ", dialogLines, t.tool.name, t.tool.arg, t.tool.arg)
	a.timer.Reset(a.think)
}

// enqueue queues a message submitted while a turn runs, as Claude Code
// does: an enqueue line in the transcript, the "Queued" note on screen,
// and UserPromptSubmit at once with the running turn's prompt_id.
func (a *agent) enqueue(m string) {
	a.queue = append(a.queue, m)
	a.record(map[string]any{"type": "queue-operation", "operation": "enqueue", "content": m})
	a.printf("\r\n  %s\r\n  ⎿  Queued · ctrl+x ctrl+s to send now\r\n❯ ", firstLine(m))
	a.fire("UserPromptSubmit", map[string]any{"prompt": m, "prompt_id": a.cur.promptID, "permission_mode": a.permissionMode()})
	a.log.write(entry{Kind: "queued", PromptID: a.cur.promptID, Text: m})
}

// join takes a message submitted during a turn into that turn, as Codex
// does: UserPromptSubmit with the running turn's id, the user line in the
// session file, and the turn's one answer (and Stop) is to the last message.
func (a *agent) join(m string) {
	a.fire("UserPromptSubmit", map[string]any{"prompt": m, "prompt_id": a.cur.promptID, "permission_mode": a.permissionMode()})
	a.recordUserAs(a.cur.promptID, m)
	a.cur.text = m
	a.log.write(entry{Kind: "queued", PromptID: a.cur.promptID, Text: m})
	a.printf("\r\n  %s\r\n❯ ", firstLine(m))
}

// finishTurn answers the running turn (transcript lines, Stop, screen) and
// starts the next queued message, if any, under a new prompt id.
func (a *agent) finishTurn() {
	t := a.cur
	if t == nil || t.waiting || a.dlg != nil {
		return
	}
	answer := a.answerTo(t.text)
	a.recordAnswerAs(t.promptID, t.text, answer)
	a.cur = nil
	a.fire("Stop", map[string]any{"prompt_id": t.promptID, "stop_hook_active": false,
		"last_assistant_message": answer, "effort": "medium"})
	a.printf("\r\n● %s\r\n✻ Brewed for 0s · done\r\n❯ ", strings.ReplaceAll(answer, "\n", "\r\n  "))
	a.startQueued()
}

// startQueued starts the first queued message, once no turn runs, under a
// new prompt id (a queued /clear clears, a queued /exit is dropped).
func (a *agent) startQueued() {
	for len(a.queue) > 0 && a.cur == nil {
		m := a.queue[0]
		a.queue = a.queue[1:]
		a.record(map[string]any{"type": "queue-operation", "operation": "dequeue"})
		switch strings.TrimSpace(m) {
		case clearCmd:
			a.clear()
			continue
		case exitCmd: // queued /exit is dropped, as a stand-in keeps it simple
			continue
		}
		a.startTurn(uuid.NewString(), m)
	}
}

// answerTo is the deterministic answer: FAKE_AGENT_ANSWER with each
// "{prompt}" replaced by the prompt, else "fake answer to: <prompt>".
func (a *agent) answerTo(prompt string) string {
	if a.answerFmt != "" {
		return strings.ReplaceAll(a.answerFmt, "{prompt}", prompt)
	}
	return "fake answer to: " + prompt
}

// notify fires a Notification: "<type> <message>"; the type defaults to
// permission_prompt when only a message is given.
func (a *agent) notify(arg string) {
	typ, msg, _ := strings.Cut(strings.TrimSpace(arg), " ")
	a.fire("Notification", map[string]any{"message": msg, "notification_type": typ})
}

// clear ends the conversation and starts a new one in this process:
// SessionEnd (clear) under the old id, then SessionStart (clear) under a
// new one, with a new transcript. The old conversation is flushed so it
// can still be resumed.
func (a *agent) clear() {
	old := a.sessionID
	err := a.flush()
	a.fire("SessionEnd", map[string]any{"reason": "clear"})
	a.mu.Lock()
	a.sessionID = uuid.NewString()
	a.messages, a.flushed = nil, false
	a.mu.Unlock()
	a.lastUUID = ""
	a.fire("SessionStart", map[string]any{"source": "clear", "model": a.model})
	a.log.write(entry{Kind: "clear", SessionID: a.sessionID, Text: old, Error: errText(err)})
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
