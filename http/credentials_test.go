package http

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/mock"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
)

// The operator's token by default, each agent's own credential.

// TestCredentials_EveryRouteButHealthNeedsOne: without a credential every
// registered route, /mcp and an unknown path answer 401 naming where the
// token lives; health answers, and the login code's exchange (the code is
// its credential) asks for the code.
func TestCredentials_EveryRouteButHealthNeedsOne(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	where := sdk.TokenPath(filepath.Join(f.dir, "state"))
	paths := []Route{{Method: http.MethodPost, Path: MCPPath}, {Method: http.MethodGet, Path: "/api/v1/nope"}}
	for _, r := range append(f.server.Routes(), paths...) {
		resp := f.sendWith(r.Method, r.Path, "", withoutToken())
		if r.Path == healthPath {
			if resp.status != http.StatusOK {
				t.Errorf("%s %s without a token: %d %s", r.Method, r.Path, resp.status, resp.body)
			}
			continue
		}
		if r.Path == DashboardSessionPath {
			if resp.status != http.StatusUnprocessableEntity || !strings.Contains(resp.detail(t), "body") {
				t.Errorf("%s %s without a body: %d %s", r.Method, r.Path, resp.status, resp.body)
			}
			continue
		}
		if resp.status != http.StatusUnauthorized || !strings.Contains(resp.detail(t), where) || strings.Contains(string(resp.body), f.token) {
			t.Errorf("%s %s without a token: %d %s (want 401 naming %s)", r.Method, r.Path, resp.status, resp.body, where)
		}
	}
}

// sendWith is send with extra mods (the fixture's send takes none).
func (f *fixture) sendWith(method, path, body string, mods ...func(*http.Request)) response {
	f.t.Helper()
	if changesState(method) {
		mods = append([]func(*http.Request){withHeader("Content-Type", "application/json")}, mods...)
	}
	return f.request(method, path, body, mods...)
}

// TestCredentials_AgentCredentialIsRefusedOverTCP: a started agent finds
// its own credential in its environment; over TCP it is refused (403) on
// every route, /mcp and the hook route included — agents reach the service
// over its socket — and it is void once the session stops and replaced at
// the next spawn (401: no credential the service knows).
func TestCredentials_AgentCredentialIsRefusedOverTCP(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`); r.status != 200 || !strings.Contains(string(r.body), `"ok":true`) {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	start := f.agent.WaitForKind(t, "start", 10*time.Second)
	cred := start.Env[credential.AgentTokenEnv]
	if len(cred) < 32 || cred == f.token {
		t.Fatalf("the agent's %s is %q", credential.AgentTokenEnv, cred)
	}
	agent := withHeader("Authorization", "Bearer "+cred)
	for _, r := range append(f.server.Routes(), Route{Method: http.MethodPost, Path: MCPPath}) {
		if r.Path == healthPath || r.Path == DashboardSessionPath { // the exchange takes a code, not a credential
			continue
		}
		if resp := f.sendWith(r.Method, r.Path, "", agent); resp.status != http.StatusForbidden || !strings.Contains(resp.detail(t), "not valid over TCP") {
			t.Errorf("%s %s with an agent credential: %d %s", r.Method, r.Path, resp.status, resp.body)
		}
	}
	if _, err := f.mcpTools(t, f.clientWith(agent)); err == nil {
		t.Fatal("MCP over TCP with the agent's credential answered")
	}
	if id, ok := f.hear.AgentFor(t.Context(), cred); !ok || id.Standing != "alpha" || id.String() != "standing:alpha" {
		t.Fatalf("AgentFor: %+v %v", id, ok)
	}

	// Stopped: void. Started again: a new one, and the old stays void.
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"stop"}`); r.status != 200 {
		t.Fatalf("stop: %d %s", r.status, r.body)
	}
	if r := f.mcpPost(initialize, agent); r.status != http.StatusUnauthorized {
		t.Fatalf("/mcp with a stopped session's credential: %d %s", r.status, r.body)
	}
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`); r.status != 200 {
		t.Fatalf("restart: %d %s", r.status, r.body)
	}
	starts := f.agent.Entries("start")
	if len(starts) != 2 || starts[1].Env[credential.AgentTokenEnv] == cred || starts[1].Env[credential.AgentTokenEnv] == "" {
		t.Fatalf("the second spawn's credential: %+v", starts)
	}
	if r := f.mcpPost(initialize, agent); r.status != http.StatusUnauthorized {
		t.Fatalf("/mcp with the replaced credential: %d %s", r.status, r.body)
	}
	// Only the hash is in the record.
	recs, err := os.ReadFile(filepath.Join(f.dir, "state", "the-loop.db"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(recs), starts[1].Env[credential.AgentTokenEnv]) || strings.Contains(string(recs), f.token) {
		t.Fatal("a credential is stored in the clear")
	}
}

// TestCredentials_CallerIsInTheRequestContext: the handler behind guard
// knows who called; an agent credential over TCP never reaches it.
func TestCredentials_CallerIsInTheRequestContext(t *testing.T) {
	s := NewServer(Options{Token: "op-token", Agents: &mock.AgentAuthenticator{AgentForFn: func(_ context.Context, tok string) (loop.AgentIdentity, bool) {
		return loop.AgentIdentity{Standing: "alpha"}, tok == "agent-token"
	}}})
	var got []Caller
	s.echo.Add(http.MethodPost, HooksPath, func(c echo.Context) error {
		caller, _ := CallerFrom(c.Request().Context())
		got = append(got, caller)
		return c.NoContent(http.StatusNoContent)
	})
	for tok, want := range map[string]int{"op-token": http.StatusNoContent, "agent-token": http.StatusForbidden} {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:4114"+HooksPath, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := newRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.code != want {
			t.Fatalf("hook route with %s: %d, want %d", tok, rec.code, want)
		}
	}
	if len(got) != 1 || got[0].Kind != CallerOperator || got[0].Socket {
		t.Fatalf("callers %+v", got)
	}
}

// recorder is a minimal http.ResponseWriter.
type recorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, code: http.StatusOK} }

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// TestCredentials_AuthNoneAsksForNothing: service.auth: none admits a
// request without a token.
func TestCredentials_AuthNoneAsksForNothing(t *testing.T) {
	s := NewServer(Options{NoAuth: true})
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:4114/api/v1/openapi.yaml", nil)
	rec := newRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.code != http.StatusOK {
		t.Fatalf("openapi with auth none: %d %s", rec.code, rec.body.String())
	}
	// Without NoAuth and without a token, no operator gets in.
	rec = newRecorder()
	NewServer(Options{}).Handler().ServeHTTP(rec, req)
	if rec.code != http.StatusUnauthorized {
		t.Fatalf("no token configured: %d", rec.code)
	}
}

// row is the fixture's standing session name as the store records it.
func (f *fixture) row(name string) loop.StandingRecord {
	f.t.Helper()
	var rec *loop.StandingRecord
	if err := f.svc.DB.View(func(tx *store.Tx) error {
		var err error
		rec, err = tx.Standing(name)
		return err
	}); err != nil || rec == nil {
		f.t.Fatalf("record of %s: %v %v", name, rec, err)
	}
	return *rec
}

// TestHooks_AConversationIDNotOfTheHarnessShapeIsRefusedAtTheRoute: a
// forged /clear whose session_id is a path (or carries a flag) is a 400 at
// the hook route, and the record keeps its conversation id.
func TestHooks_AConversationIDNotOfTheHarnessShapeIsRefusedAtTheRoute(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`); r.status != 200 || !strings.Contains(string(r.body), `"ok":true`) {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	recorded := f.row("alpha").HarnessSessionID
	for _, forged := range []string{"../../../../tmp/secret", "--dangerously-skip-permissions"} {
		body := `{"hook_event_name":"SessionStart","source":"clear","session_id":"` + forged + `"}`
		if resp := f.sendWith(http.MethodPost, HooksPath+"?session=standing:alpha", body); resp.status != http.StatusBadRequest ||
			!strings.Contains(resp.detail(t), "not a claude conversation id") {
			t.Errorf("a forged clear %q: %d %s", forged, resp.status, resp.body)
		}
	}
	if got := f.row("alpha").HarnessSessionID; got != recorded || got == "" {
		t.Errorf("the record's conversation id went from %q to %q", recorded, got)
	}
}
