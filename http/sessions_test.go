package http

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
)

// sessionsAPI serves the fixture's sessionRoutes on an echo of the test's
// own, with the server's middleware and error mapping (independent of
// whether the route table registers them), and returns its URL.
func sessionsAPI(t *testing.T, f *fixture) string {
	t.Helper()
	e := echo.New()
	e.HTTPErrorHandler = f.server.writeError
	e.Use(f.server.perRequest)
	for _, r := range f.server.sessionRoutes("/api/v1") {
		e.Add(r.Method, r.Path, r.handler).Name = r.OperationID
	}
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	return ts.URL
}

// call sends one request to base and returns status and body.
func call(t *testing.T, method, url, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: bytes.TrimSpace(data)}
}

// workItemRowKeys are the keys of a work-item row: the original's record
// (original §4.2), its flat ref and control, and running.
var workItemRowKeys = []string{"ref", "workItem", "harness", "harnessSessionId", "cwd", "status", "createdAt",
	"lastEventAt", "tmuxTarget", "recentDeliveries", "control", "running"}

func TestSessionRoutes_TableAndOperationIDs(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	var got []string
	for _, r := range f.server.sessionRoutes("/api/v1") {
		got = append(got, r.Method+" "+r.Path+" "+r.OperationID)
	}
	want := []string{
		"GET /api/v1/sessions listSessions",
		"GET /api/v1/sessions/one getSession",
		"POST /api/v1/sessions/start startSession",
		"POST /api/v1/sessions/reply replySession",
		"POST /api/v1/sessions/close closeSession",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("routes %q, want %q", got, want)
	}
}

func TestSessions_EveryRouteAndTheNamespaceBoundary(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"supervisor"}})
	base := sessionsAPI(t, f)
	c := sdk.New(base, sdk.WithToken(""))
	ctx := context.Background()
	if res, err := f.client.Standing.Control(ctx, loop.StandingControlRequest{Name: "supervisor", Verb: "start", AutoOnly: false}); err != nil || !res.OK {
		t.Fatalf("standing start: %+v %v", res, err)
	}

	// Empty list, then a start.
	if r := call(t, "GET", base+"/api/v1/sessions", ""); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("empty list: %d %s", r.status, r.body)
	}
	r := call(t, "POST", base+"/api/v1/sessions/start", mustJSON(t, map[string]any{"ref": "github:octo/repo#5", "cwd": f.dir}))
	var started loop.WorkItemStartResult
	r.decode(t, &started)
	if r.status != 200 || started.Outcome != "started" || started.ExitCode != 0 || started.Session == nil ||
		started.Session.TmuxTarget != "loop-github-octo-repo-5" || !started.Session.Running {
		t.Fatalf("start: %d %s", r.status, r.body)
	}

	// The list is the work item only; the standing list is supervisor only.
	r = call(t, "GET", base+"/api/v1/sessions", "")
	var raw []map[string]any
	r.decode(t, &raw)
	if len(raw) != 1 || raw[0]["ref"] != "github:octo/repo#5" || raw[0]["control"] != nil || raw[0]["lastEventAt"] != nil {
		t.Fatalf("list: %s", r.body)
	}
	requireKeys(t, "work-item row", raw[0], workItemRowKeys...)
	requireKeys(t, "workItem", raw[0]["workItem"].(map[string]any), "ref", "provider", "owner", "repo", "number")
	standing, err := f.client.Standing.List(ctx)
	if err != nil || len(standing) != 1 || standing[0].Name != "supervisor" {
		t.Fatalf("standing list %+v %v", standing, err)
	}
	if rows, err := c.WorkItems.List(ctx, "closed"); err != nil || len(rows) != 0 {
		t.Fatalf("closed: %+v %v", rows, err)
	}
	if rows, err := c.WorkItems.List(ctx, "active"); err != nil || len(rows) != 1 {
		t.Fatalf("active: %+v %v", rows, err)
	}

	// The boundary, both ways, with the vocabulary's statuses.
	for _, tc := range []struct {
		method, path, body string
		status             int
		detail             string
	}{
		{"GET", "/api/v1/sessions?status=open", "", 400, "invalid status 'open' (one of active, paused, closed)"},
		{"GET", "/api/v1/sessions/one", "", 422, "query.ref: field required"},
		{"GET", "/api/v1/sessions/one?ref=standing:supervisor", "", 400, "invalid work-item ref 'standing:supervisor'"},
		{"GET", "/api/v1/sessions/one?ref=github:octo/repo%236", "", 404, "no session registered for github:octo/repo#6"},
		{"POST", "/api/v1/sessions/reply", `{"ref":"standing:supervisor","text":"hi"}`, 400, "invalid work-item ref 'standing:supervisor'"},
		{"POST", "/api/v1/sessions/reply", `{"ref":"github:octo/repo#5"}`, 422, "body.text: field required"},
		{"POST", "/api/v1/sessions/reply", `{"ref":"github:octo/repo#5","text":"  "}`, 400, "the reply text is empty; nothing to deliver"},
		{"POST", "/api/v1/sessions/reply", `{"ref":"github:octo/repo#6","text":"hi"}`, 404, "no session registered for github:octo/repo#6 — a reply never spawns one;"},
		{"POST", "/api/v1/sessions/start", `{"ref":"standing:supervisor"}`, 400, "invalid work-item ref 'standing:supervisor'"},
		{"POST", "/api/v1/sessions/start", `{"harness":"claude"}`, 422, "body.ref: field required"},
		{"POST", "/api/v1/sessions/start", `{"ref":"github:octo/repo#5","slack":"yes"}`, 422, "body.slack: expected a boolean, got a string"},
		{"POST", "/api/v1/sessions/close", `{"ref":"standing:supervisor"}`, 400, "invalid work-item ref 'standing:supervisor'"},
		{"POST", "/api/v1/sessions/close", `{"ref":"github:octo/repo#5","keepTmux":"yes"}`, 422, "body.keepTmux: expected a boolean, got a string"},
	} {
		r := call(t, tc.method, base+tc.path, tc.body)
		if r.status != tc.status || !strings.HasPrefix(r.detail(t), tc.detail) {
			t.Errorf("%s %s %s: %d %s, want %d %q", tc.method, tc.path, tc.body, r.status, r.body, tc.status, tc.detail)
		}
	}
	// The standing routes do not know the work item: its ref is an invalid
	// standing name, a caller's mistake.
	if r := f.post("/api/v1/standing-sessions/say", `{"name":"github:octo/repo#5","text":"hi"}`); r.status != 400 || !strings.Contains(string(r.body), "invalid standing-session name") {
		t.Fatalf("standing say to a work item: %d %s", r.status, r.body)
	}
	if _, err := c.WorkItems.Reply(ctx, loop.WorkItemReplyRequest{Ref: "standing:supervisor", Text: "hi", Actor: ""}); loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("client reply to a standing ref: %v", err)
	}
	if _, err := c.WorkItems.Get(ctx, "github:octo/repo#6"); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("client get unknown: %v", err)
	}

	// A reply reaches the work item's agent, framed.
	res, err := c.WorkItems.Reply(ctx, loop.WorkItemReplyRequest{Ref: "github:octo/repo#5", Text: "Use the v2 API.", Actor: "ops"})
	if err != nil || !res.Delivered || res.ExitCode != 0 || res.WorkItem != "github:octo/repo#5" {
		t.Fatalf("reply %+v %v", res, err)
	}
	want := "Reply from the operator via the-loop control plane (ops) to your question on github:octo/repo#5:\n\nUse the v2 API."
	testkit.Eventually(t, func() bool { return slices.Contains(f.agent.Messages(), want) }, 10*time.Second,
		"the reply in the agent's log: %q", f.agent.Messages())
	row, err := c.WorkItems.Get(ctx, "github:octo/repo#5")
	if err != nil || row.LastEventAt == nil {
		t.Fatalf("get after reply %+v %v", row, err)
	}

	// Close: kept tmux, harness ended; then replies are refused and spawn nothing.
	closed, err := c.WorkItems.Close(ctx, loop.WorkItemCloseRequest{Ref: "github:octo/repo#5", KeepTmux: nil})
	if err != nil || !closed.Closed || closed.ExitCode != 0 {
		t.Fatalf("close %+v %v", closed, err)
	}
	starts := len(f.agent.Entries("start"))
	r = call(t, "POST", base+"/api/v1/sessions/reply", `{"ref":"github:octo/repo#5","text":"still there?"}`)
	if r.status != 404 || !strings.HasPrefix(r.detail(t), "no session registered for github:octo/repo#5 — a reply never spawns one;") {
		t.Fatalf("reply after close: %d %s", r.status, r.body)
	}
	again, err := c.WorkItems.Close(ctx, loop.WorkItemCloseRequest{Ref: "github:octo/repo#5", KeepTmux: nil})
	if err != nil || again.Closed || again.ExitCode != 1 {
		t.Fatalf("second close %+v %v", again, err)
	}
	// A spawn would have respawned the pane before the refusal was sent; its
	// agent logs its start a little later. The pane tells at once.
	if panes, _ := testkit.TmuxRun(f.socket, "list-panes", "-t", "=loop-github-octo-repo-5:", "-F", "#{pane_dead}"); strings.Contains(panes, "0") {
		t.Fatalf("a refused reply spawned an agent: the work item's panes read %q (1 is dead)", panes)
	}
	if n := len(f.agent.Entries("start")); n != starts {
		t.Fatalf("a refused reply spawned an agent (%d starts, was %d)", n, starts)
	}
	got := f.events(store.EventQuery{WorkItem: "github:octo/repo#5"})
	var names []string
	for _, e := range got {
		names = append(names, e.Event)
	}
	if !slices.Equal(names, []string{"session.started", "session.reply_sent", "session.closed"}) {
		t.Fatalf("work-item events %v", names)
	}
}
