package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
)

// manual is the world with the session in manual permission mode: every
// Bash tool use opens Claude Code's dialog and fires PermissionRequest.
func manual(t *testing.T) *world {
	t.Helper()
	w := setup(t)
	f, err := os.OpenFile(w.cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("      permissionMode: manual\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return w
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
	var result fakeapi.Request
	eventually(t, "the model to get the denial as the tool's error", func() bool {
		for _, r := range w.api.Turns() {
			if r.ToolError && strings.Contains(r.ToolResult, "not in this repository") {
				result = r
				return true
			}
		}
		return false
	})
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
