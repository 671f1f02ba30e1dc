package http

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/store"

	loop "github.com/the-loop-dev/the-loop"
)

// The approvals' routes answer as the contract says: the list [] when
// none, an input's secret redacted, an unknown id 404, a decision that is neither allow nor deny 400,
// a body without one 422, a deny message over 4 KiB 400, a settled one
// 409; the MCP tools list and refuse alike.
func TestApprovals_RoutesAndToolsRefuseBadInput(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	if r := f.get("/api/v1/approvals"); r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != "[]" {
		t.Errorf("GET /api/v1/approvals = %d %s, want 200 []", r.status, r.body)
	}
	if err := f.svc.DB.Update(func(tx *store.Tx) error {
		return tx.PutApproval(&loop.Approval{ID: "0badc0de", Session: "w", Tool: "Bash", Input: []byte(`{"command":"ls"}`), RequestedAt: "2026-01-01T00:00:00Z", Status: loop.ApprovalDenied, By: "operator"})
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, body string
		status     int
	}{
		{"/api/v1/approvals/ffffffff", `{"decision":"allow"}`, http.StatusNotFound},
		{"/api/v1/approvals/0badc0de", `{"decision":"perhaps"}`, http.StatusBadRequest},
		{"/api/v1/approvals/0badc0de", `{}`, http.StatusUnprocessableEntity},
		{"/api/v1/approvals/0badc0de", `{"decision":"deny","message":"` + strings.Repeat("x", loop.MaxDenyMessage+1) + `"}`, http.StatusBadRequest},
		{"/api/v1/approvals/0badc0de", `{"decision":"allow"}`, http.StatusConflict},
	} {
		if r := f.post(c.path, c.body); r.status != c.status {
			t.Errorf("POST %s %.40s = %d %s, want %d", c.path, c.body, r.status, r.body, c.status)
		}
	}
	secret := "ghp_" + strings.Repeat("Z", 36)
	if err := f.svc.DB.Update(func(tx *store.Tx) error {
		return tx.PutApproval(&loop.Approval{ID: "5ec7e700", Session: "w", Tool: "Bash", Input: []byte(`{"command":"curl -H 'token: ` + secret + `' x"}`), RequestedAt: "2026-01-01T00:00:01Z", Status: loop.ApprovalPending})
	}); err != nil {
		t.Fatal(err)
	}
	if r := f.get("/api/v1/approvals"); r.status != http.StatusOK || strings.Contains(string(r.body), secret) || !strings.Contains(string(r.body), "curl -H") {
		t.Errorf("GET /api/v1/approvals shows an input's secret, or not its input: %s", r.body)
	}
	cs := connectMCP(t, f, nil)
	if res := callTool(t, cs, toolApprovals, map[string]any{}); res.IsError || strings.Contains(text(res), "0badc0de") {
		t.Errorf("list_approvals listed a settled one or failed: %s", text(res))
	}
	if res := callTool(t, cs, toolDecide, map[string]any{"id": "0badc0de", "decision": "allow"}); !res.IsError || !strings.Contains(text(res), "denied already") {
		t.Errorf("decide_approval of a settled one: %s", text(res))
	}
}

// awaitPermission holds a PermissionRequest of the running session name
// for command at the service, as its hook would: it returns once the
// approval is pending; the hook's answer arrives on the channel.
func (f *fixture) awaitPermission(t *testing.T, name, command string) <-chan loop.ApprovalAnswer {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{"session_id": f.row(name).HarnessSessionID, "hook_event_name": "PermissionRequest",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command}, "prompt_id": "p1", "cwd": f.dir})
	answer, held := make(chan loop.ApprovalAnswer, 1), make(chan struct{})
	go func() {
		a, err := f.hear.AwaitDecision(t.Context(), filepath.Join(f.dir, "state"), loop.HookDelivery{Session: "standing:" + name, Payload: payload}, func() { close(held) })
		if err != nil {
			t.Error(err)
		}
		answer <- a
	}()
	<-held
	return answer
}

// mcpInPane calls the MCP tool name with args from a process in target's
// pane, over the service's socket (a stateless JSON-RPC POST, as any MCP
// client's): the result's text and whether it is a tool error.
func mcpInPane(t *testing.T, f *fixture, target, name string, args map[string]any) (string, bool) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	file := filepath.Join(t.TempDir(), "call.json")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	got := inPane(t, f, target, "curl -s --unix-socket "+f.sock+" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "+
		"-d @"+file+" http://x"+MCPPath)
	var res struct {
		Result struct {
			IsError    bool            `json:"isError"`
			Structured json.RawMessage `json:"structuredContent"`
			Content    []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("%s from %s's pane: %v\n%s", name, target, err, got)
	}
	parts := []string{string(res.Result.Structured)}
	for _, c := range res.Result.Content {
		parts = append(parts, c.Text)
	}
	if res.Result.Structured == nil && len(res.Result.Content) == 0 {
		parts = []string{got}
	}
	return strings.Join(parts, "\n"), res.Result.IsError
}

// TestApprovals_ADeciderAgentDecidesForItsWorkerFromItsPane: with
// deciders {supervisor: [worker]}, the supervisor's agent, calling MCP
// from its own pane, lists the worker's pending request and allows it —
// the worker's waiting hook gets the allow, recorded by
// standing:supervisor; an agent not granted, and the worker deciding for
// itself, are refused and list nothing.
func TestApprovals_ADeciderAgentDecidesForItsWorkerFromItsPane(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: it stands for the MCP client in the agent's pane")
	}
	f := newFixture(t, fixtureOptions{sessions: []string{"supervisor", "worker", "other"},
		extra: "  approvals:\n    deciders:\n      supervisor: [worker]\n"})
	for _, n := range []string{"supervisor", "worker", "other"} {
		if res, err := f.local.Standing.Control(t.Context(), loop.StandingControlRequest{Name: n, Verb: "start"}); err != nil || !res.OK {
			t.Fatalf("start %s: %+v %v", n, res, err)
		}
	}
	answer := f.awaitPermission(t, "worker", "make deploy")
	list, err := f.hear.Approvals(t.Context(), "worker")
	if err != nil || len(list) != 1 {
		t.Fatalf("worker's approvals: %+v %v", list, err)
	}
	id := list[0].ID
	for _, who := range []string{"other", "worker"} {
		target := loop.TmuxTargetFor(who)
		if got, isErr := mcpInPane(t, f, target, toolApprovals, map[string]any{}); isErr || strings.Contains(got, id) {
			t.Errorf("list_approvals from %s's pane: %q (error %v), want none of %s", who, got, isErr, id)
		}
		if got, isErr := mcpInPane(t, f, target, toolDecide, map[string]any{"id": id, "decision": "allow"}); !isErr {
			t.Errorf("decide_approval from %s's pane: %q, want refused", who, got)
		}
	}
	supervisor := loop.TmuxTargetFor("supervisor")
	if got, isErr := mcpInPane(t, f, supervisor, toolApprovals, map[string]any{}); isErr || !strings.Contains(got, id) {
		t.Fatalf("list_approvals from the supervisor's pane: %q (error %v), want %s", got, isErr, id)
	}
	if got, isErr := mcpInPane(t, f, supervisor, toolDecide, map[string]any{"id": id, "decision": "allow"}); isErr {
		t.Fatalf("decide_approval from the supervisor's pane: %q", got)
	}
	if a := <-answer; a.Behavior != loop.DecisionAllow || a.ID != id {
		t.Errorf("the worker's hook got %+v, want allow of %s", a, id)
	}
	if list, _ := f.hear.Approvals(t.Context(), "worker"); len(list) != 1 || list[0].Status != loop.ApprovalAllowed || list[0].By != "standing:supervisor" {
		t.Errorf("the worker's approval after the decision: %+v", list)
	}
}
