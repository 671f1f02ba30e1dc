package http

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// TestHealth: over TCP health says only that the service runs and its
// version — not its state root nor its pid, which tell a process of
// another uid what to impersonate; over the socket it says both.
func TestHealth(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	r := f.get("/api/v1/health")
	var h map[string]any
	r.decode(t, &h)
	if r.status != 200 || h["status"] != "ok" || h["version"] != "test-version" || len(h) != 2 {
		t.Fatalf("health over TCP: %d %s, want only status and version", r.status, r.body)
	}
	local, err := f.local.Health(t.Context())
	if err != nil || local.PID != os.Getpid() || local.StateRoot != filepath.Join(f.dir, "state") {
		t.Fatalf("health over the socket: %+v %v, want the pid and the state root", local, err)
	}
}

// TestErrorCodes pins every code original §8.2 pins, plus decisions D7's 422 and
// decisions D24's 413, and that every error body is {"detail": …}.
func TestErrorCodes(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}, agentBin: t.TempDir(), extra: "service:\n  maxBodyBytes: 2048\n"})
	big := `{"name":"alpha","text":"` + strings.Repeat("x", 4096) + `"}`
	cases := []struct {
		name, method, path, body string
		status                   int
		detail                   string // a substring of the detail
	}{
		{"one of nobody", "GET", "/api/v1/standing-sessions/one?name=nobody", "", 404, "no standing session 'nobody'"},
		{"one without name", "GET", "/api/v1/standing-sessions/one", "", 422, "query.name: field required"},
		{"control detonate", "POST", "/api/v1/standing-sessions/control", `{"name":"alpha","verb":"detonate"}`, 400, "unknown verb 'detonate'"},
		{"control without verb", "POST", "/api/v1/standing-sessions/control", `{"name":"alpha"}`, 422, "body.verb: field required"},
		{"control verb not a string", "POST", "/api/v1/standing-sessions/control", `{"verb":7}`, 422, "body.verb: expected a string, got a number"},
		{"restart without name", "POST", "/api/v1/standing-sessions/control", `{"verb":"restart"}`, 400, "no 'all' form"},
		{"restart of unknown", "POST", "/api/v1/standing-sessions/control", `{"name":"nobody","verb":"restart"}`, 404, "neither declared"},
		{"say whitespace", "POST", "/api/v1/standing-sessions/say", `{"name":"alpha","text":"  "}`, 400, "the message is empty"},
		// A text of only control characters is empty, and an
		// invalid name is a caller's mistake in every verb.
		{"say only control characters", "POST", "/api/v1/standing-sessions/say", `{"name":"alpha","text":"\u001b\u0007\u009b\u200f\u007f"}`, 400, "the message is empty"},
		{"say to an invalid name", "POST", "/api/v1/standing-sessions/say", `{"name":"Bad Name","text":"hi"}`, 400, "invalid standing-session name 'Bad Name'"},
		{"stop of an invalid name", "POST", "/api/v1/standing-sessions/control", `{"name":"Bad Name!","verb":"stop"}`, 400, "invalid standing-session name 'Bad Name!'"},
		{"start of an invalid name", "POST", "/api/v1/standing-sessions/control", `{"name":"Bad Name","verb":"start"}`, 400, "invalid standing-session name"},
		{"restart of an invalid name", "POST", "/api/v1/standing-sessions/control", `{"name":"-x","verb":"restart"}`, 400, "invalid standing-session name"},
		{"one of an invalid name", "GET", "/api/v1/standing-sessions/one?name=Bad%20Name", "", 400, "invalid standing-session name"},
		{"delete of an invalid name", "POST", "/api/v1/standing-sessions/delete", `{"name":"Bad Name"}`, 400, "invalid standing-session name"},
		{"say to unknown", "POST", "/api/v1/standing-sessions/say", `{"name":"nobody","text":"hi"}`, 404, "no standing session 'nobody' — it is neither declared"},
		{"say without text", "POST", "/api/v1/standing-sessions/say", `{"name":"alpha"}`, 422, "body.text: field required"},
		{"create of a declared name", "POST", "/api/v1/standing-sessions/create", `{"name":"alpha"}`, 400, "already declared"},
		{"create of an invalid name", "POST", "/api/v1/standing-sessions/create", `{"name":"Not Valid"}`, 400, "invalid standing-session name"},
		{"create without name", "POST", "/api/v1/standing-sessions/create", `{}`, 422, "body.name: field required"},
		{"create wrong types", "POST", "/api/v1/standing-sessions/create", `{"name":"x","autoStart":"yes","harnessArgs":["a",1]}`, 422,
			"body.harnessArgs[1]: expected a string, got a number; body.autoStart: expected a boolean, got a string"},
		{"delete of a declared name", "POST", "/api/v1/standing-sessions/delete", `{"name":"alpha"}`, 400, "is declared in standingSessions.sessions"},
		{"delete of an uncreated name", "POST", "/api/v1/standing-sessions/delete", `{"name":"nobody"}`, 404, "neither declared"},
		{"delete not JSON", "POST", "/api/v1/standing-sessions/delete", `{"name":`, 422, "body: not valid JSON"},
		{"delete an array", "POST", "/api/v1/standing-sessions/delete", `["alpha"]`, 422, "body: expected a JSON object, got an array"},
		{"delete without body", "POST", "/api/v1/standing-sessions/delete", ``, 422, "body: field required"},
		{"body over the limit", "POST", "/api/v1/standing-sessions/say", big, 413, "larger than 2048 bytes (service.maxBodyBytes)"},
		{"events limit not a number", "GET", "/api/v1/events?limit=many", "", 422, "query.limit: expected an integer"},
		{"events unknown level", "GET", "/api/v1/events?level=loud", "", 400, "invalid level 'loud'"},
		{"events of an invalid name", "GET", "/api/v1/events?standing=Bad%20Name", "", 400, "invalid standing-session name 'Bad Name'"},
		{"events bad since", "GET", "/api/v1/events?since=yesterday", "", 400, "invalid since 'yesterday'"},
		{"unknown route", "GET", "/api/v1/nope", "", 404, "no route GET /api/v1/nope"},
		{"wrong method", "POST", "/api/v1/health", `{}`, 405, "method POST is not allowed on /api/v1/health"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.send(c.method, c.path, c.body)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if d := r.detail(t); !strings.Contains(d, c.detail) {
				t.Fatalf("detail %q does not contain %q", d, c.detail)
			}
		})
	}
}

func TestErrorCodes_BodyOverTheLimitWithoutLength(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir(), extra: "service:\n  maxBodyBytes: 1024\n"})
	// A chunked body has no Content-Length: the limit bites while reading.
	req, _ := http.NewRequest("POST", f.url+"/api/v1/standing-sessions/say",
		struct{ *strings.Reader }{strings.NewReader(`{"name":"a","text":"` + strings.Repeat("y", 4096) + `"}`)})
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || req.ContentLength != 0 {
		t.Fatalf("status %d (content length %d)", resp.StatusCode, req.ContentLength)
	}
}

func TestAPIRequest_LoggedForWritesNotReads(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	f.get("/api/v1/health")
	f.get("/api/v1/standing-sessions")
	f.get("/api/v1/status")
	f.get("/api/v1/events")
	f.get("/api/v1/standing-sessions/one?name=nobody")
	f.post("/api/v1/standing-sessions/control", `{"verb":"stop"}`)
	f.post("/api/v1/standing-sessions/delete", `{"name":"nobody"}`)
	f.post("/api/v1/standing-sessions/control", `{}`)

	evs := f.events(store.EventQuery{Types: []string{"api.request"}})
	type req struct {
		method, path string
		status       any
	}
	var got []req
	for _, e := range evs {
		if e.Source != "service" || e.Level != loop.LevelDebug {
			t.Errorf("envelope %+v", e)
		}
		got = append(got, req{e.Field("method").(string), e.Field("path").(string), e.Field("status")})
	}
	want := []req{
		{"POST", "/api/v1/standing-sessions/control", "200"},
		{"POST", "/api/v1/standing-sessions/delete", "404"},
		{"POST", "/api/v1/standing-sessions/control", "422"},
	}
	if len(got) != len(want) {
		t.Fatalf("api.request events %v, want %v", got, want)
	}
	for i := range want {
		if got[i].method != want[i].method || got[i].path != want[i].path || jsonNumber(got[i].status) != want[i].status {
			t.Fatalf("api.request events %v, want %v", got, want)
		}
	}
	if all := f.events(store.EventQuery{}); len(all) != len(evs) {
		t.Fatalf("reads left events: %d events, %d api.request", len(all), len(evs))
	}
}

func jsonNumber(v any) string {
	if s, ok := v.(interface{ String() string }); ok {
		return s.String()
	}
	return ""
}

func TestConfig_ReReadWhenTheFileChanges(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}, agentBin: t.TempDir()})
	names := func() []string {
		t.Helper()
		r := f.get("/api/v1/standing-sessions")
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		var rows []loop.StandingRow
		r.decode(t, &rows)
		var out []string
		for _, row := range rows {
			out = append(out, row.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"alpha"}) {
		t.Fatalf("rows %v", got)
	}
	good := f.configYAML(fixtureOptions{sessions: []string{"alpha", "beta"}})
	f.writeConfig(good)
	if got := names(); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("after the edit: rows %v", got)
	}
	// A file that no longer loads: the last good config stays in use.
	f.writeConfig(good + "service:\n  port: not-a-port\n")
	if got := names(); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("after a broken edit: rows %v", got)
	}
	// A malformed standingSessions block loads: the standing verbs refuse it.
	f.writeConfig(strings.Replace(good, "name: beta", "name: Beta!", 1))
	r := f.get("/api/v1/standing-sessions")
	if r.status != 400 || !strings.Contains(r.detail(t), "standingSessions.sessions[1].name: 'Beta!'") {
		t.Fatalf("malformed block: %d %s", r.status, r.body)
	}
	r = f.get("/api/v1/status")
	if r.status != 200 || !strings.Contains(string(r.body), `"outcome":"misconfigured"`) || !strings.Contains(string(r.body), `"ok":false`) {
		t.Fatalf("status with a malformed block: %d %s", r.status, r.body)
	}
}

func TestRoutes_TableMatchesOriginal(t *testing.T) {
	s := NewServer(Options{})
	want := []Route{
		{"GET", "/api/v1/health", "getHealth"},
		{"GET", "/api/v1/status", "getStatus"},
		{"GET", "/api/v1/environment", "getEnvironment"},
		{"GET", "/api/v1/events", "listEvents"},
		{"GET", "/api/v1/standing-sessions", "listStandingSessions"},
		{"GET", "/api/v1/standing-sessions/one", "getStandingSession"},
		{"POST", "/api/v1/standing-sessions/create", "createStandingSession"},
		{"POST", "/api/v1/standing-sessions/delete", "deleteStandingSession"},
		{"POST", "/api/v1/standing-sessions/control", "controlStandingSession"},
		{"POST", "/api/v1/standing-sessions/say", "sayToStandingSession"},
		{"GET", "/api/v1/standing-sessions/transcript", "getStandingSessionTranscript"},
		{"GET", "/api/v1/standing-sessions/peek", "peekStandingSession"},
		{"GET", "/api/v1/openapi.yaml", "getOpenAPI"},
		{"POST", "/api/v1/hooks", "postHook"},
		{"GET", "/metrics", "getMetrics"},
		{"GET", "/api/v1/sessions", "listSessions"},
		{"GET", "/api/v1/sessions/one", "getSession"},
		{"POST", "/api/v1/sessions/start", "startSession"},
		{"POST", "/api/v1/sessions/reply", "replySession"},
		{"POST", "/api/v1/sessions/close", "closeSession"},
		{"POST", "/api/v1/channels/poll", "pollChannels"},
		{"POST", "/api/v1/dashboard/codes", "createDashboardCode"},
		{"POST", "/api/v1/dashboard/session", "createDashboardSession"},
		{"POST", "/api/v1/dashboard/logout", "logoutDashboard"},
		{"POST", "/api/v1/dashboard/logout-all", "logoutAllDashboards"},
		{"GET", "/api/v1/stream", "streamEvents"},
		{"GET", "/api/v1/approvals", "listApprovals"},
		{"POST", "/api/v1/approvals/{id}", "decideApproval"},
		{"POST", "/api/v1/hooks/permission", "awaitPermissionDecision"},
	}
	if got := s.Routes(); !slices.Equal(got, want) {
		t.Fatalf("routes %v", got)
	}
	// Every listed route is really served (none is a 404 from the router).
	for _, r := range want {
		found := false
		for _, er := range s.echo.Routes() {
			if er.Method == r.Method && er.Path == echoPath(r.Path) && er.Name == r.OperationID {
				found = true
			}
		}
		if !found {
			t.Errorf("%v is not registered with echo", r)
		}
	}
}
