package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// manual is the world with the session in manual permission mode: every
// Bash tool use opens Claude Code's dialog and fires PermissionRequest.
func manual(t *testing.T) *world {
	t.Helper()
	w := setup(t)
	w.entry("permissionMode: manual")
	return w
}

// entry adds lines to the session's entry in the world's config (it is
// the config's last), each indented as the entry's keys.
func (w *world) entry(lines ...string) {
	w.t.Helper()
	f, err := os.OpenFile(w.cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString("      " + l + "\n"); err != nil {
			w.t.Fatal(err)
		}
	}
}

// toolError waits for the model to get a tool's error holding text.
func (w *world) toolError(what, text string) fakeapi.Request {
	w.t.Helper()
	var result fakeapi.Request
	eventually(w.t, what, func() bool {
		for _, r := range w.api.Turns() {
			if r.ToolError && strings.Contains(r.ToolResult, text) {
				result = r
				return true
			}
		}
		return false
	})
	return result
}

// decidedBy is the standing.approval_decided events of by.
func (w *world) decidedBy(by string) []loop.Event {
	var out []loop.Event
	for _, e := range w.events("standing.approval_decided") {
		if e.Field("by") == by {
			out = append(out, e)
		}
	}
	return out
}

// pending is the session's pending approvals.
func (w *world) pending() []loop.Approval {
	w.t.Helper()
	r := w.must("standing", "approvals", session, "--format", "json")
	var list []loop.Approval
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		w.t.Fatalf("approvals json: %v\n%s", err, r)
	}
	return list
}

// decisions are the permissionDecision objects of the transcript's lines.
func (w *world) decisions(id string) []map[string]any {
	data, _ := os.ReadFile(w.claude.TranscriptPath(w.cwd, id))
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e struct {
			PermissionDecision map[string]any `json:"permissionDecision"`
		}
		if json.Unmarshal(line, &e) == nil && e.PermissionDecision != nil {
			out = append(out, e.PermissionDecision)
		}
	}
	return out
}

// The real Claude Code in manual mode asks to run a Bash command: the
// request is a pending approval that `standing approve` allows through
// the hook's decision (the transcript says source hook, the command ran);
// a second one that `standing deny --message` denies gives the model the
// framed message as the tool's error, and the turn goes on to its Stop.
func TestRealClaude_ApprovalsDecideThePermissionDialog(t *testing.T) {
	w := manual(t)
	const allowMe, denyMe = "e2e-approval: run the allowed command", "e2e-approval: run the denied command"
	w.api.SetAnswer(func(text string) string {
		switch {
		case strings.Contains(text, allowMe):
			return fakeapi.ToolUse("Bash", `{"command":"echo approved > approved.txt","description":"write a file"}`)
		case strings.Contains(text, denyMe):
			return fakeapi.ToolUse("Bash", `{"command":"echo denied > denied.txt","description":"write another file"}`)
		}
		return fakeapi.DefaultAnswer(text)
	})
	w.must("start")
	id := w.waitRow("idle after the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" }).HarnessSessionID

	w.must("standing", "say", session, "--text", allowMe)
	var list []loop.Approval
	eventually(t, "the first approval to be pending", func() bool { list = w.pending(); return len(list) == 1 })
	if a := list[0]; a.Tool != "Bash" || !strings.Contains(string(a.Input), "approved.txt") {
		t.Fatalf("pending %+v", a)
	}
	if r := w.row(); r.Activity != loop.ActivityWaiting {
		t.Errorf("activity while the approval is pending = %s, want waiting", r.Activity)
	}
	w.must("standing", "approve", session)
	eventually(t, "the approved command to run", func() bool { _, err := os.Stat(w.cwd + "/approved.txt"); return err == nil })
	eventually(t, "the hook's allow in the transcript", func() bool {
		for _, d := range w.decisions(id) {
			if d["source"] == "hook" && d["decision"] == "accept" {
				return true
			}
		}
		return false
	})

	w.must("standing", "say", session, "--text", denyMe)
	eventually(t, "the second approval to be pending", func() bool { list = w.pending(); return len(list) == 1 })
	w.must("standing", "deny", session, "--message", "not in this repository")
	result := w.toolError("the model to get the denial as the tool's error", "not in this repository")
	if !strings.Contains(result.ToolResult, "Denied by operator") {
		t.Errorf("the tool's error %q does not name who denied", result.ToolResult)
	}
	if _, err := os.Stat(w.cwd + "/denied.txt"); err == nil {
		t.Error("the denied command ran")
	}
	decided := w.events("standing.approval_decided")
	if len(decided) != 2 || decided[0].Field("decision") != "allow" || decided[1].Field("decision") != "deny" {
		t.Errorf("approval_decided events %+v", decided)
	}
}

// In the default (auto) mode, the session's approval rules answer Claude
// Code's PreToolUse: a deny rule on `rm -rf *` denies with nobody asked
// and with no service running (the model reads the rule's message; the
// decision is recorded by rule:1 all the same), and an ask rule turns a
// command auto mode would run into a pending approval that `standing
// approve` lets run; with the service up the deny rule answers alike.
func TestRealClaude_ApprovalRulesInAutoMode(t *testing.T) {
	w := setup(t)
	w.entry("approvals:", "  rules:",
		`    - {tool: Bash, match: "rm -rf *", decision: deny, message: "no rm -rf in this repository"}`,
		`    - {tool: Bash, match: "touch asked*", decision: ask}`)
	const denyMe, askMe = "e2e-rule: remove the scratch dir", "e2e-rule: touch the asked file"
	if err := os.Mkdir(w.cwd+"/scratch", 0o755); err != nil {
		t.Fatal(err)
	}
	w.api.SetAnswer(func(text string) string {
		switch {
		case strings.Contains(text, denyMe):
			return fakeapi.ToolUse("Bash", `{"command":"rm -rf scratch","description":"remove scratch"}`)
		case strings.Contains(text, askMe):
			return fakeapi.ToolUse("Bash", `{"command":"touch asked.txt","description":"touch a file"}`)
		}
		return fakeapi.DefaultAnswer(text)
	})
	w.must("standing", "start", session)
	if pid := w.servicePID(); pid != 0 {
		t.Fatalf("a service runs (pid %d); the deny rule is to hold with none", pid)
	}
	w.waitRow("idle after the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })

	w.must("standing", "say", session, "--text", denyMe)
	w.toolError("the model to get the deny rule's message as the tool's error", "no rm -rf in this repository")
	if _, err := os.Stat(w.cwd + "/scratch"); err != nil {
		t.Errorf("the denied rm -rf ran: %v", err)
	}
	eventually(t, "the rule's decision recorded by rule:1", func() bool { return len(w.decidedBy("rule:1")) == 1 })
	if d := w.decidedBy("rule:1")[0]; d.Field("decision") != "deny" || d.Field("tool") != "Bash" {
		t.Errorf("the rule's decision %+v", d)
	}

	w.must("start") // the service, for the ask rule's approval
	w.must("standing", "say", session, "--text", askMe)
	var list []loop.Approval
	eventually(t, "the ask rule's approval to be pending", func() bool { list = w.pending(); return len(list) == 1 })
	if !strings.Contains(string(list[0].Input), "asked.txt") {
		t.Fatalf("pending %+v", list[0])
	}
	if _, err := os.Stat(w.cwd + "/asked.txt"); err == nil {
		t.Fatal("the asked command ran before it was approved")
	}
	w.must("standing", "approve", session, list[0].ID)
	eventually(t, "the approved command to run", func() bool { _, err := os.Stat(w.cwd + "/asked.txt"); return err == nil })

	// With the service up the deny rule answers as before, nobody asked.
	w.waitRow("idle after the approved turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle })
	w.must("standing", "say", session, "--text", denyMe+" again")
	eventually(t, "the second deny recorded by rule:1", func() bool { return len(w.decidedBy("rule:1")) == 2 })
	if _, err := os.Stat(w.cwd + "/scratch"); err != nil {
		t.Errorf("the denied rm -rf ran with the service up: %v", err)
	}
	if n := len(w.events("standing.approval_requested")); n != 1 {
		t.Errorf("%d approvals were requested; only the ask rule's should be", n)
	}
}

// In manual mode an allow rule runs its command with no dialog and no
// approval (the decision recorded by its rule); a command no rule covers
// opens the dialog, and a `1` key at the terminal answers it first: the
// approval is answered-at-terminal and the command runs.
func TestRealClaude_AllowRuleAndTheTerminalsKey(t *testing.T) {
	w := manual(t)
	w.entry("approvals:", "  rules:", `    - {tool: Bash, match: "touch allowed*", decision: allow}`)
	const allowMe, keyMe = "e2e-rule: touch the allowed file", "e2e-key: touch the keyed file"
	w.api.SetAnswer(func(text string) string {
		switch {
		case strings.Contains(text, allowMe):
			return fakeapi.ToolUse("Bash", `{"command":"touch allowed.txt","description":"touch a file"}`)
		case strings.Contains(text, keyMe):
			return fakeapi.ToolUse("Bash", `{"command":"touch keyed.txt","description":"touch another file"}`)
		}
		return fakeapi.DefaultAnswer(text)
	})
	w.must("start")
	w.waitRow("idle after the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })

	w.must("standing", "say", session, "--text", allowMe)
	eventually(t, "the allowed command to run", func() bool { _, err := os.Stat(w.cwd + "/allowed.txt"); return err == nil })
	eventually(t, "the allow recorded by rule:1", func() bool { return len(w.decidedBy("rule:1")) == 1 })
	if n := len(w.events("standing.approval_requested")); n != 0 {
		t.Errorf("%d approvals were requested for a command an allow rule covers", n)
	}

	w.must("standing", "say", session, "--text", keyMe)
	var list []loop.Approval
	eventually(t, "the dialog's approval to be pending", func() bool { list = w.pending(); return len(list) == 1 })
	eventually(t, "the dialog on the screen", func() bool { return strings.Contains(w.screen(), "Do you want to proceed?") })
	// The key goes again while the dialog is still drawn: one pressed as
	// the dialog is first drawn, before it takes keys, is lost (seen on a
	// loaded machine), and the dialog stays open.
	var pressed time.Time
	eventually(t, "the keyed command to run", func() bool {
		if _, err := os.Stat(w.cwd + "/keyed.txt"); err == nil {
			return true
		}
		if time.Since(pressed) > 2*time.Second && strings.Contains(w.screen(), "Do you want to proceed?") {
			if _, err := testkit.TmuxRun(w.socket, "send-keys", "-t", "="+target+":", "1"); err != nil {
				t.Fatal(err)
			}
			pressed = time.Now()
		}
		return false
	})
	eventually(t, "the approval answered at the terminal", func() bool {
		all := w.pendingAll()
		return len(all) > 0 && all[0].ID == list[0].ID && all[0].Status == loop.ApprovalAtTerminal
	})
}

// pendingAll is every approval of the session, settled ones too.
func (w *world) pendingAll() []loop.Approval {
	w.t.Helper()
	r := w.must("standing", "approvals", session, "--all", "--format", "json")
	var list []loop.Approval
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		w.t.Fatalf("approvals json: %v\n%s", err, r)
	}
	return list
}
