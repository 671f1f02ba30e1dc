//go:build linux

package main

// The permission flow of a /fake-tool turn when a --permission-mode was
// given, modelled on Claude Code 2.1.332 as measured offline (the
// "Permissions" section of the measurements the fake follows; the package
// comment states the contract). Without the flag the legacy dialog of
// turns.go answers instead.
//
// Order: the tool_use line; PreToolUse, waited for (deny, ask, allow, or no
// decision: the mode's flow); then either the tool's outcome at once or a
// dialog. A manual dialog, and the hook's own one after an ask, start
// PermissionRequest without waiting for it (fireAsync): the dialog is on
// screen while the hook runs, the hook's decision or a key closes it, and
// a key sends the hook SIGTERM. Every dialog's Notification falls due
// FAKE_AGENT_NOTIFY_MS after it was drawn, if it is still open.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// rejectMessage is the tool_result Claude Code gives the model for a tool
// use the user rejected.
const rejectMessage = "The user doesn't want to proceed with this tool use. The tool use was rejected " +
	"(eg. if it was a file edit, the new_string was NOT written to the file). " +
	"STOP what you are doing and wait for the user to tell you how to proceed."

// dontAskFormat is the tool error dontAsk mode gives (the wording is the
// stand-in's: the measurement records only that the mode denies).
const dontAskFormat = "Permission to use %s has been denied because Claude Code is running in don't ask mode."

// Dialogs of the modelled flow (a permission_dialog entry's text).
const (
	dialogManual = "manual" // manual mode's own (and acceptEdits' for other than an edit)
	dialogAsk    = "ask"    // after a PreToolUse ask, in any mode
	dialogAuto   = "auto"   // auto mode's, for a tool use outside the cwd
	dialogPlan   = "plan"   // plan mode's
)

// choice is what a dialog's option does.
type choice int

const (
	choiceYes      choice = iota + 1
	choiceAlways          // manual Bash 2: yes, and always allow access to the directory
	choiceAutoMode        // manual Bash 3: yes, and switch to auto mode
	choiceEdits           // manual Write 2: yes, and accept edits from now on
	choiceNo
)

// option is one choice of a dialog.
type option struct {
	key   string // the digit that picks it, "" for an unnumbered menu
	label string
	pick  choice
}

// dialog is a permission dialog of the modelled flow on screen.
type dialog struct {
	kind       string
	gen        int // which dialog of the session (PermissionRequest runs name it)
	header     []string
	options    []option
	cursor     int
	rows       int         // terminal rows it took when drawn
	hooks      []*hookProc // its PermissionRequest commands still running
	notify     *time.Timer
	notifyType string
}

// modelsPermissions reports whether /fake-tool turns follow the modelled
// flow: Claude's contract, with a --permission-mode (or
// --dangerously-skip-permissions) given.
func (a *agent) modelsPermissions() bool {
	return a.contract == contractClaude && a.permMode != ""
}

// mode is the session's permission mode, "manual" for "default".
func (a *agent) mode() string {
	if a.permMode == "default" {
		return "manual"
	}
	return a.permMode
}

// useTool runs the modelled flow of the running turn's tool use up to its
// outcome or its dialog.
func (a *agent) useTool() {
	tc := a.cur.tool
	tc.began = time.Now()
	tc.input = a.toolInput(tc)
	a.recordToolCall(tc.id, tc.name, tc.input)
	a.printf("\r\n● %s(%s)\r\n", tc.name, tc.arg)
	decision, reason := a.preToolUse()
	switch {
	case decision == "deny":
		a.decided("pretooluse deny", "deny")
		a.denyTool(fmt.Sprintf("PreToolUse:%s hook error: %s", tc.name, reason), hookReject("hook:PreToolUse"))
	case decision == "ask":
		a.openDialog(dialogAsk, reason)
	case decision == "allow" && a.mode() != "plan":
		a.decided("pretooluse allow", "allow")
		a.runTool(tc.input, hookAccept(), "")
	default:
		a.modeFlow()
	}
}

// preToolUse fires PreToolUse, waits for it and returns its decision
// ("" for none) and reason: of several hooks, deny wins over ask, ask over
// allow. A hook past its timeout decides nothing and leaves a
// hook_cancelled attachment.
func (a *agent) preToolUse() (decision, reason string) {
	tc := a.cur.tool
	runs := a.fire("PreToolUse", map[string]any{"tool_name": tc.name, "tool_input": tc.input, "tool_use_id": tc.id,
		"permission_mode": a.permissionMode(), "prompt_id": a.cur.promptID})
	rank := map[string]int{"allow": 1, "ask": 2, "deny": 3}
	for _, r := range runs {
		if r.timedOut {
			a.recordAttachment(map[string]any{"type": "hook_cancelled", "hookName": "PreToolUse:" + tc.name,
				"hookEvent": "PreToolUse", "toolUseID": tc.id, "timedOut": true})
			continue
		}
		if out, ok := hookOutputOf(r, "PreToolUse"); ok && rank[out.PermissionDecision] > rank[decision] {
			decision, reason = out.PermissionDecision, out.PermissionDecisionReason
		}
	}
	return decision, reason
}

// modeFlow decides a tool use no PreToolUse hook decided, as the mode does.
func (a *agent) modeFlow() {
	tc := a.cur.tool
	switch mode := a.mode(); {
	case mode == "bypassPermissions",
		mode == "acceptEdits" && a.isEdit(),
		mode == "auto" && a.outside() == "":
		a.decided("mode "+mode, "allow")
		a.runTool(tc.input, modeAccept(), "")
	case mode == "dontAsk":
		a.decided("mode dontAsk", "deny")
		a.denyTool(fmt.Sprintf(dontAskFormat, tc.name), map[string]any{"decision": "reject", "source": "config", "reasonType": "mode"})
	case mode == "auto":
		a.openDialog(dialogAuto, "")
	case mode == "plan":
		a.openDialog(dialogPlan, "")
	default: // manual, and acceptEdits for what is not an edit
		a.openDialog(dialogManual, "")
	}
}

// hookAccept is the permissionDecision of a hook's allow.
func hookAccept() map[string]any {
	return map[string]any{"decision": "accept", "source": "hook", "reasonType": "hook"}
}

// hookReject is the permissionDecision of a hook's deny (code:
// hook:PermissionRequest or hook:PreToolUse).
func hookReject(code string) map[string]any {
	return map[string]any{"decision": "reject", "source": "hook", "reasonType": "hook", "reasonCode": code}
}

// modeAccept is the permissionDecision of a tool use the mode allowed.
func modeAccept() map[string]any {
	return map[string]any{"decision": "accept", "source": "config", "reasonType": "mode"}
}

// hookSpecificOutput is what a PreToolUse or PermissionRequest hook may
// print on stdout, inside {"hookSpecificOutput": …}.
type hookSpecificOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
	Decision                 *struct {
		Behavior     string         `json:"behavior"`
		Message      string         `json:"message"`
		Interrupt    bool           `json:"interrupt"`
		UpdatedInput map[string]any `json:"updatedInput"`
	} `json:"decision"`
}

// hookOutputOf is the hook-specific output of a run that ended by itself
// with status 0 and printed one for event (hookEventName must name it).
func hookOutputOf(r hookRun, event string) (hookSpecificOutput, bool) {
	var doc struct {
		Out hookSpecificOutput `json:"hookSpecificOutput"`
	}
	if r.err != nil || r.code != 0 || r.timedOut || json.Unmarshal(bytes.TrimSpace(r.out), &doc) != nil {
		return hookSpecificOutput{}, false
	}
	return doc.Out, doc.Out.HookEventName == event
}

// toolInput is the tool_input of a /fake-tool use: {command, description}
// for Bash, {file_path, content} for "Write <path> [content]" (the path
// made absolute against the cwd), {command} for any other tool.
func (a *agent) toolInput(tc *toolCall) map[string]any {
	switch tc.name {
	case "Write":
		path, content, _ := strings.Cut(tc.arg, " ")
		if !filepath.IsAbs(path) {
			path = filepath.Join(a.cwd, path)
		}
		if content == "" {
			content = "fake content\n"
		}
		return map[string]any{"file_path": path, "content": content}
	case "Bash":
		return map[string]any{"command": tc.arg, "description": "Run " + tc.arg}
	}
	return map[string]any{"command": tc.arg}
}

// outside is the directory outside the cwd the tool use reaches, "" when
// it stays inside: for a Write, its file's directory; for a command, the
// first word naming a path outside the cwd (absolute, from ~, or through
// ..), that directory or the path's own directory. Auto mode asks about
// such a use; the manual dialog offers to allow the directory.
func (a *agent) outside() string {
	tc := a.cur.tool
	if tc.name == "Write" {
		p, _ := tc.input["file_path"].(string)
		if within(a.cwd, p) {
			return ""
		}
		return filepath.Dir(p)
	}
	home, _ := os.UserHomeDir()
	for _, w := range strings.Fields(tc.arg) {
		w = strings.TrimLeft(strings.Trim(w, `'"`), "<>")
		var p string
		switch {
		case strings.HasPrefix(w, "/"):
			p = w
		case w == "~" || strings.HasPrefix(w, "~/"):
			p = filepath.Join(home, w[1:])
		case w == ".." || strings.HasPrefix(w, "../") || strings.Contains(w, "/../"):
			p = filepath.Join(a.cwd, w)
		default:
			continue
		}
		p = filepath.Clean(p)
		if within(a.cwd, p) {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		return filepath.Dir(p)
	}
	return ""
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// isEdit reports whether acceptEdits mode runs the tool use unasked: a
// Write, or an `echo … > file` command, inside the cwd.
func (a *agent) isEdit() bool {
	tc := a.cur.tool
	if a.outside() != "" {
		return false
	}
	return tc.name == "Write" || tc.name == "Bash" && strings.HasPrefix(tc.arg, "echo ") && strings.Contains(tc.arg, ">")
}

// openDialog draws a dialog of kind (reason: the ask's), gives it the
// keys, logs permission_dialog, starts PermissionRequest without waiting
// for it (manual and ask dialogs only; the manual one's payload has
// permission_suggestions) and arms its Notification.
func (a *agent) openDialog(kind, reason string) {
	tc := a.cur.tool
	a.gens++
	d := &dialog{kind: kind, gen: a.gens, notifyType: "permission_prompt"}
	d.header, d.options = a.dialogText(kind, reason)
	a.dlg = d
	a.keys.Store(true)
	a.draw(d)
	a.log.write(entry{Kind: "permission_dialog", Text: kind, Tool: tc.name, PromptID: a.cur.promptID})
	switch kind {
	case dialogManual, dialogAsk:
		fields := map[string]any{"tool_name": tc.name, "tool_input": tc.input, "permission_mode": a.permissionMode(),
			"prompt_id": a.cur.promptID}
		if kind == dialogManual {
			fields["permission_suggestions"] = a.suggestions()
		}
		d.hooks = a.fireAsync("PermissionRequest", fields, d.gen)
	default: // auto and plan mode's own dialogs fire no PermissionRequest
		d.notifyType = "agent_needs_input"
	}
	d.notify = time.NewTimer(a.notifyIn)
	a.notifyC = d.notify.C
}

// dialogText is a dialog's header lines and options.
func (a *agent) dialogText(kind, reason string) ([]string, []option) {
	tc := a.cur.tool
	title := tc.name + " command"
	if tc.name == "Write" {
		title = "Create file"
	}
	header := []string{"╭─ " + title, "│   " + tc.arg}
	yesNo := []option{{"1", "Yes", choiceYes}, {"2", "No", choiceNo}}
	switch kind {
	case dialogAsk:
		return append(header, fmt.Sprintf("│ Hook PreToolUse:%s requires confirmation for this command:", tc.name), "│ "+reason), yesNo
	case dialogAuto:
		return append(header, "│ Auto mode can't check actions in this session"), []option{{"", "No", choiceNo}, {"", "Yes", choiceYes}}
	case dialogPlan:
		return append(header, "│ Do you want to proceed?"), yesNo
	}
	if tc.name == "Write" {
		p, _ := tc.input["file_path"].(string)
		return append(header, "│ Do you want to create "+filepath.Base(p)+"?"), []option{
			{"1", "Yes", choiceYes}, {"2", "Yes, allow all edits during this session", choiceEdits}, {"3", "No", choiceNo}}
	}
	always := "Yes, and always allow access to " + a.outside() + " from this project"
	if a.outside() == "" {
		always = fmt.Sprintf("Yes, and don't ask again for %s commands in %s", firstWord(tc.arg), a.cwd)
	}
	return append(header, "│ Do you want to proceed?"), []option{
		{"1", "Yes", choiceYes}, {"2", always, choiceAlways}, {"3", "Yes, and switch to auto mode", choiceAutoMode}, {"4", "No", choiceNo}}
}

// suggestions is the manual dialog's permission_suggestions: setMode
// acceptEdits for a Write, addDirectories for a command reaching outside
// the cwd (as measured), else a rule allowing the command's first word.
func (a *agent) suggestions() []any {
	tc := a.cur.tool
	switch dir := a.outside(); {
	case tc.name == "Write":
		return []any{map[string]any{"type": "setMode", "mode": "acceptEdits", "destination": "session"}}
	case dir != "":
		return []any{map[string]any{"type": "addDirectories", "directories": []any{dir}, "destination": "session"}}
	}
	return []any{map[string]any{"type": "addRules", "behavior": "allow", "destination": "localSettings",
		"rules": []any{map[string]any{"toolName": tc.name, "ruleContent": firstWord(tc.arg) + ":*"}}}}
}

// firstWord is s's first word.
func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// render is the dialog as drawn, the cursor's option marked `❯`.
func (d *dialog) render() []string {
	lines := slices.Clone(d.header)
	for i, o := range d.options {
		mark, label := "  ", o.label
		if i == d.cursor {
			mark = "❯ "
		}
		if o.key != "" {
			label = o.key + ". " + label
		}
		lines = append(lines, "│ "+mark+label)
	}
	return append(lines, "╰─")
}

// draw prints the dialog below the cursor and remembers how many terminal
// rows it took, so erase can take it away again.
func (a *agent) draw(d *dialog) {
	lines := d.render()
	cols := 0
	if ws, err := unix.IoctlGetWinsize(1, unix.TIOCGWINSZ); err == nil {
		cols = int(ws.Col)
	}
	d.rows = 0
	for _, l := range lines {
		n := utf8.RuneCountInString(l)
		if cols > 0 && n > cols {
			d.rows += (n + cols - 1) / cols
		} else {
			d.rows++
		}
	}
	a.printf("%s\r\n", strings.Join(lines, "\r\n"))
}

// erase takes the dialog off the screen, as Claude Code redraws in place.
func (a *agent) erase(d *dialog) {
	a.printf("\x1b[%dA\r\x1b[J", d.rows)
}

// onKey answers a key pressed while a dialog has the focus: up and down
// move its cursor; a digit picks its option; Escape picks No; Enter the
// option under the cursor. Any other key does nothing.
func (a *agent) onKey(key string) {
	d := a.dlg
	if d == nil {
		return
	}
	if key == "up" || key == "down" {
		c := d.cursor
		if key == "up" && c > 0 {
			c--
		} else if key == "down" && c < len(d.options)-1 {
			c++
		}
		if c != d.cursor {
			d.cursor = c
			a.erase(d)
			a.draw(d)
		}
		return
	}
	var o option
	switch i := slices.IndexFunc(d.options, func(o option) bool { return o.key != "" && o.key == key }); {
	case key == "escape":
		o = option{pick: choiceNo}
	case key == "enter":
		o = d.options[d.cursor]
	case i >= 0:
		o = d.options[i]
	default:
		return
	}
	tc := a.cur.tool
	if o.pick == choiceNo {
		a.closeDialog("key "+key, "reject")
		a.rejectTool(nil)
		return
	}
	a.closeDialog("key "+key, "allow")
	dec := map[string]any{"decision": "accept", "source": "user_temporary", "grantScope": "once"}
	switch {
	case d.kind == dialogAsk:
		dec = map[string]any{"decision": "accept", "source": "user_temporary", "reasonCode": "hook:PreToolUse"}
	case o.pick == choiceAlways:
		dec = map[string]any{"decision": "accept", "source": "user_permanent", "grantScope": "project"}
	case o.pick == choiceAutoMode:
		a.permMode = "auto"
	case o.pick == choiceEdits:
		a.permMode = "acceptEdits"
	}
	a.runTool(tc.input, dec, "")
}

// onPermissionHook takes a PermissionRequest command that ended: it is
// logged; if its dialog is still open, an allow runs the tool, a deny
// gives the model its message as the tool's error (with interrupt, ends
// the turn as a rejection does), and anything else — no parseable
// decision, a failure, a timeout — leaves the dialog as it is.
func (a *agent) onPermissionHook(r hookRun) {
	a.logHook(r)
	d := a.dlg
	if d == nil || d.gen != r.gen {
		return
	}
	d.hooks = slices.DeleteFunc(d.hooks, func(p *hookProc) bool { return p == r.proc })
	out, ok := hookOutputOf(r, "PermissionRequest")
	if !ok || out.Decision == nil {
		return
	}
	tc := a.cur.tool
	switch out.Decision.Behavior {
	case "allow":
		a.closeDialog("hook allow", "allow")
		a.recordAttachment(map[string]any{"type": "hook_permission_decision", "decision": "allow", "hookEvent": "PermissionRequest"})
		input := tc.input
		if out.Decision.UpdatedInput != nil {
			input = out.Decision.UpdatedInput // the tool_use line keeps the original
		}
		a.runTool(input, hookAccept(), "Allowed by PermissionRequest hook")
	case "deny":
		if out.Decision.Interrupt {
			a.closeDialog("hook deny interrupt", "interrupt")
			a.rejectTool(hookReject("hook:PermissionRequest"))
			return
		}
		a.closeDialog("hook deny", "deny")
		a.denyTool(out.Decision.Message, hookReject("hook:PermissionRequest"))
	}
}

// onNotifyDue fires the open dialog's Notification: permission_prompt for
// a dialog PermissionRequest was fired for, agent_needs_input for auto and
// plan mode's own.
func (a *agent) onNotifyDue() {
	a.notifyC = nil
	d := a.dlg
	if d == nil {
		return
	}
	msg := "Claude needs your permission to use " + a.cur.tool.name
	if d.notifyType == "agent_needs_input" {
		msg = "Claude needs your input"
	}
	a.fire("Notification", map[string]any{"message": msg, "notification_type": d.notifyType})
}

// closeDialog closes the open dialog, decided by how (a permission_decided
// entry's text, outcome its decision): its PermissionRequest commands
// still running get SIGTERM (a hook_sigterm entry each), its notification
// is disarmed, the keys go back to the input line and the dialog leaves
// the screen.
func (a *agent) closeDialog(how, outcome string) {
	d := a.dlg
	a.terminateHooks(d, how)
	d.notify.Stop()
	a.notifyC = nil
	a.keys.Store(false)
	a.dlg = nil
	a.erase(d)
	a.decided(how, outcome)
}

// terminateHooks sends SIGTERM to d's PermissionRequest commands that
// still run, logging a hook_sigterm entry (text: why) for each.
func (a *agent) terminateHooks(d *dialog, why string) {
	for _, p := range d.hooks {
		if p.terminate() {
			a.log.write(entry{Kind: "hook_sigterm", Event: "PermissionRequest", Command: p.h.Command, Text: why})
		}
	}
	d.hooks = nil
}

// stopHooks ends the open dialog's PermissionRequest commands as the
// agent exits.
func (a *agent) stopHooks() {
	if a.dlg != nil {
		a.terminateHooks(a.dlg, "exit")
	}
}

// decided logs how the running turn's tool use was decided.
func (a *agent) decided(how, outcome string) {
	a.log.write(entry{Kind: "permission_decided", Text: how, Decision: outcome, Tool: a.cur.tool.name, PromptID: a.cur.promptID})
}

// runTool "runs" the tool with input (nothing is run or written): the
// tool_result line with its permissionDecision dec, PostToolUse, the
// result (after note, if any) on screen, and the turn goes on to its
// answer and Stop.
func (a *agent) runTool(input, dec map[string]any, note string) {
	tc := a.cur.tool
	content, response := toolOutcome(tc.name, input)
	a.recordToolResult(tc.id, toolResult{content: content, toolUseResult: response, decision: dec})
	a.fire("PostToolUse", map[string]any{"tool_name": tc.name, "tool_input": input, "tool_response": response,
		"tool_use_id": tc.id, "permission_mode": a.permissionMode(), "duration_ms": time.Since(tc.began).Milliseconds()})
	if note != "" {
		a.printf("  ⎿  %s\r\n", note)
	}
	a.printf("  ⎿  %s\r\n❯ ", content)
	a.timer.Reset(a.think)
}

// toolOutcome is what a tool that ran gives the model (content) and its
// response (PostToolUse's tool_response, the line's toolUseResult).
func toolOutcome(tool string, input map[string]any) (string, map[string]any) {
	if tool == "Write" {
		p, _ := input["file_path"].(string)
		return "File created successfully at: " + p, map[string]any{"type": "create", "filePath": p,
			"content": input["content"], "structuredPatch": []any{}}
	}
	cmd, _ := input["command"].(string)
	return "ran " + cmd, map[string]any{"stdout": "ran " + cmd, "stderr": "", "interrupted": false, "isImage": false}
}

// denyTool gives the model msg as the tool's error (no PostToolUse), and
// the turn goes on to its answer and Stop.
func (a *agent) denyTool(msg string, dec map[string]any) {
	tc := a.cur.tool
	a.recordToolResult(tc.id, toolResult{content: msg, isError: true, toolUseResult: "Error: " + msg, decision: dec})
	a.printf("  ⎿  Error: %s\r\n❯ ", msg)
	a.timer.Reset(a.think)
}

// rejectTool ends the turn as a rejected tool use does: the standard
// rejection as the tool's error (permissionDecision dec, nil for a key),
// "[Request interrupted by user for tool use]", "Interrupted" on screen,
// no PostToolUse, no answer and no Stop; a queued message starts next.
func (a *agent) rejectTool(dec map[string]any) {
	tc := a.cur.tool
	a.recordToolResult(tc.id, toolResult{content: rejectMessage, isError: true, toolUseResult: "User rejected tool use", decision: dec})
	a.recordInterruption()
	a.printf("  ⎿  Interrupted · What should Claude do instead?\r\n❯ ")
	a.cur = nil
	a.startQueued()
}
