package http

import (
	"net/http"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/store"

	loop "github.com/the-loop-dev/the-loop"
)

// The approvals' routes answer as the contract says: the list [] when
// none, an unknown id 404, a decision that is neither allow nor deny 400,
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
	cs := connectMCP(t, f, nil)
	if res := callTool(t, cs, toolApprovals, map[string]any{}); res.IsError || strings.Contains(text(res), "0badc0de") {
		t.Errorf("list_approvals listed a settled one or failed: %s", text(res))
	}
	if res := callTool(t, cs, toolDecide, map[string]any{"id": "0badc0de", "decision": "allow"}); !res.IsError || !strings.Contains(text(res), "denied already") {
		t.Errorf("decide_approval of a settled one: %s", text(res))
	}
}
