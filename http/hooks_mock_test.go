package http

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/mock"
	"github.com/the-loop-dev/the-loop/sdk"
)

// TestMock_HookRouteHandsTheDeliveryToTheSink: POST /api/v1/hooks over
// TCP hands the raw body, the session ref and the truncation mark to
// Options.Hooks with the service's state root — never parent pids a client
// names (a clear's process proof is read from the socket's peer); an
// agent credential is refused over TCP before the sink is called; a sink's
// error keeps its code's status.
func TestMock_HookRouteHandsTheDeliveryToTheSink(t *testing.T) {
	var got []loop.HookDelivery
	var roots []string
	sinkErr := error(nil)
	s := NewServer(Options{
		Token:     "op-token",
		StateRoot: "/state/root",
		Agents: &mock.AgentAuthenticator{AgentForFn: func(_ context.Context, tok string) (loop.AgentIdentity, bool) {
			return loop.AgentIdentity{Standing: "alpha"}, tok == "agent-alpha"
		}},
		Hooks: &mock.HookSink{ApplyHookFn: func(_ context.Context, root string, d loop.HookDelivery) error {
			got, roots = append(got, d), append(roots, root)
			return sinkErr
		}},
	})
	post := func(token, session, body string, header map[string]string) int {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, HooksPath+"?session="+session, strings.NewReader(body))
		req.Host = "127.0.0.1:4114"
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Code
	}

	body := `{"hook_event_name":"Stop","session_id":"abc"}`
	if code := post("op-token", "standing:alpha", body, map[string]string{
		sdk.HookTruncatedHeader: "true", "X-The-Loop-Hook-Parents": "42, 7",
	}); code != http.StatusOK {
		t.Fatalf("the operator's hook: status %d, want 200", code)
	}
	want := loop.HookDelivery{Session: "standing:alpha", Payload: []byte(body), Truncated: true}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) || roots[0] != "/state/root" {
		t.Fatalf("the sink got %+v under %q, want %+v under /state/root (no client-named parents)", got, roots, want)
	}

	if code := post("agent-alpha", "standing:alpha", body, nil); code != http.StatusForbidden {
		t.Errorf("an agent credential over TCP: status %d, want 403", code)
	}
	if len(got) != 1 {
		t.Errorf("a refused hook reached the sink: %+v", got[1:])
	}

	sinkErr = loop.Errorf(loop.EINVALID, "bad payload")
	if code := post("op-token", "standing:alpha", body, nil); code != http.StatusBadRequest {
		t.Errorf("a sink's invalid error: status %d, want 400", code)
	}
	if len(got) != 2 || got[1].Truncated || got[1].Parents != nil {
		t.Errorf("the operator's hook without headers reached the sink as %+v", got[len(got)-1])
	}
}

// TestMock_HookRouteWithoutSink: a server built without Options.Hooks
// answers the hook route with an internal error, never a panic.
func TestMock_HookRouteWithoutSink(t *testing.T) {
	m := newMockServer(t, Options{})
	if code, body := m.do(http.MethodPost, HooksPath+"?session=standing:alpha", "{}"); code != http.StatusInternalServerError || !strings.Contains(string(body), "Options.Hooks") {
		t.Errorf("no sink: status %d %s, want 500 naming Options.Hooks", code, body)
	}
}
