package http

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
)

// The control plane's boundary (decisions D24), REST and /mcp alike. Every
// REST exchange below also goes through the contract check.

// initialize is an MCP initialize request, as a raw body.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// mcpPost sends a raw MCP message as a streamable-HTTP client does.
func (f *fixture) mcpPost(body string, mods ...func(*http.Request)) response {
	f.t.Helper()
	mods = append([]func(*http.Request){
		withHeader("Content-Type", "application/json"),
		withHeader("Accept", "application/json, text/event-stream"),
	}, mods...)
	return f.request(http.MethodPost, MCPPath, body, mods...)
}

// roundTripper adapts a function (the go-sdk client takes an *http.Client).
type roundTripper func(*http.Request) (*http.Response, error)

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return rt(r) }

// clientWith is the fixture's client with mods applied to every request.
func (f *fixture) clientWith(mods ...func(*http.Request)) *http.Client {
	base := f.http.Transport
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		for _, mod := range mods {
			mod(r)
		}
		return base.RoundTrip(r)
	})}
}

// port is the fixture's port.
func (f *fixture) port() string {
	u, err := url.Parse(f.url)
	if err != nil {
		f.t.Fatal(err)
	}
	return u.Port()
}

// mcpTools connects through hc and lists the tools, or returns the error.
func (f *fixture) mcpTools(t *testing.T, hc *http.Client) (int, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "the-loop-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + MCPPath, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		return 0, err
	}
	return len(tools.Tools), nil
}

func TestSecurity_ForeignHostIsForbiddenOnRESTAndMCP(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	foreign := withHeader("Host", "rebound.example:"+f.port())

	for _, path := range []string{"/api/v1/standing-sessions", "/api/v1/health", "/api/v1/nope"} {
		r := f.request(http.MethodGet, path, "", foreign)
		if r.status != http.StatusForbidden || !strings.Contains(r.detail(t), `Host "rebound.example:`+f.port()+`"`) ||
			!strings.Contains(r.detail(t), "service.allowedHosts") {
			t.Fatalf("GET %s from a foreign Host: %d %s", path, r.status, r.body)
		}
	}
	if r := f.request(http.MethodPost, "/api/v1/standing-sessions/control", `{"verb":"stop"}`, foreign,
		withHeader("Content-Type", "application/json")); r.status != http.StatusForbidden {
		t.Fatalf("POST control from a foreign Host: %d %s", r.status, r.body)
	}
	if r := f.mcpPost(initialize, foreign); r.status != http.StatusForbidden || !strings.Contains(r.detail(t), "rebound.example") {
		t.Fatalf("POST /mcp from a foreign Host: %d %s", r.status, r.body)
	}
	if _, err := f.mcpTools(t, f.clientWith(foreign)); err == nil {
		t.Fatal("the MCP client got through from a foreign Host")
	}

	// decisions D24's defaults: the loopback names on the service's port.
	for _, host := range []string{"localhost:" + f.port(), "127.0.0.1:" + f.port(), "[::1]:" + f.port(), "LOCALHOST:" + f.port()} {
		if r := f.request(http.MethodGet, "/api/v1/standing-sessions", "", withHeader("Host", host)); r.status != http.StatusOK {
			t.Errorf("GET from Host %s: %d %s", host, r.status, r.body)
		}
		if n, err := f.mcpTools(t, f.clientWith(withHeader("Host", host))); err != nil || n != 6 {
			t.Errorf("MCP from Host %s: %d tools, %v", host, n, err)
		}
	}
	// Another port is another origin.
	if r := f.request(http.MethodGet, "/api/v1/health", "", withHeader("Host", "localhost:1")); r.status != http.StatusForbidden {
		t.Fatalf("GET from localhost:1: %d %s", r.status, r.body)
	}

	// A name added to service.allowedHosts is answered on both (the
	// config is read per request, so no restart).
	f.writeConfig(f.configYAML(fixtureOptions{extra: "service:\n  allowedHosts: [\"rebound.example:" + f.port() + "\"]\n"}))
	if r := f.request(http.MethodGet, "/api/v1/standing-sessions", "", foreign); r.status != http.StatusOK {
		t.Fatalf("GET from an allowed Host: %d %s", r.status, r.body)
	}
	if n, err := f.mcpTools(t, f.clientWith(foreign)); err != nil || n != 6 {
		t.Fatalf("MCP from an allowed Host: %d tools, %v", n, err)
	}
	// The loopback names still work beside it (the CLI dials them).
	if r := f.get("/api/v1/health"); r.status != http.StatusOK {
		t.Fatalf("GET from 127.0.0.1 with allowedHosts set: %d %s", r.status, r.body)
	}
}

func TestSecurity_StateChangesMustBeJSON(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}, agentBin: t.TempDir()})
	cases := []struct {
		name, path, ct, body string
	}{
		{"text/plain", "/api/v1/standing-sessions/control", "text/plain", `{"name":"alpha","verb":"stop"}`},
		{"a form", "/api/v1/standing-sessions/say", "application/x-www-form-urlencoded", "name=alpha&text=hi"},
		{"multipart", "/api/v1/standing-sessions/create", "multipart/form-data; boundary=x", "--x--"},
		{"no content type, no body", "/api/v1/channels/poll", "", ""},
		{"text/plain to MCP", MCPPath, "text/plain", initialize},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mods []func(*http.Request)
			if c.ct != "" {
				mods = append(mods, withHeader("Content-Type", c.ct))
			}
			r := f.request(http.MethodPost, c.path, c.body, mods...)
			if r.status != http.StatusUnsupportedMediaType || !strings.Contains(r.detail(t), "Content-Type: application/json") {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	// Nothing was stopped or said, and no refusal reached the event log (a
	// web page can send these: they must not prune it).
	r := f.request(http.MethodPost, "/api/v1/standing-sessions/control", `{"name":"alpha","verb":"stop"}`,
		withHeader("Content-Type", "application/json; charset=utf-8"))
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"outcome":"not-running"`) {
		t.Fatalf("JSON with a charset: %d %s", r.status, r.body)
	}
	evs := f.events(store.EventQuery{Types: []string{"api.request"}})
	if len(evs) != 1 || jsonNumber(evs[0].Field("status")) != "200" {
		t.Fatalf("api.request events %+v, want only the admitted request's", evs)
	}
}

// TestSecurity_RefusalsGoToTheLogRateLimitedNotToTheEventLog: a flood of
// refused requests (403, 401, 415, 413) writes no api.request — it would
// prune the audit log — and only a line or so to the service's log.
func TestSecurity_RefusalsGoToTheLogRateLimitedNotToTheEventLog(t *testing.T) {
	const token = "s3cret-t0ken"
	logs := &lockedBuffer{}
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir(), token: token, logger: slog.New(slog.NewTextHandler(logs, nil)),
		extra: "service:\n  tokenEnv: THE_LOOP_TEST_TOKEN\n  maxBodyBytes: 64\n"})
	bearer := withHeader("Authorization", "Bearer "+token)
	for range 25 {
		f.request(http.MethodPost, "/api/v1/standing-sessions/control", `{"verb":"stop"}`, withHeader("Host", "evil.example:80"))
		f.request(http.MethodPost, "/api/v1/standing-sessions/control", `{"verb":"stop"}`, withHeader("Content-Type", "application/json"), withoutToken())
		f.request(http.MethodPost, "/api/v1/standing-sessions/control", `{"verb":"stop"}`, withHeader("Content-Type", "text/plain"), bearer)
		f.request(http.MethodPost, "/api/v1/standing-sessions/say", strings.Repeat("x", 100), withHeader("Content-Type", "application/json"), bearer)
	}
	if evs := f.events(store.EventQuery{}); len(evs) != 0 {
		t.Fatalf("refused requests left %d events, e.g. %+v", len(evs), evs[0])
	}
	lines := strings.Count(logs.String(), "refused a request")
	if lines < 1 || lines > 2 {
		t.Fatalf("%d log lines for 100 refusals:\n%s", lines, logs)
	}
	// An admitted request is still an api.request.
	if r := f.request(http.MethodPost, "/api/v1/standing-sessions/control", `{"verb":"stop"}`,
		withHeader("Content-Type", "application/json"), bearer); r.status != http.StatusOK {
		t.Fatalf("admitted: %d %s", r.status, r.body)
	}
	if evs := f.events(store.EventQuery{Types: []string{"api.request"}}); len(evs) != 1 {
		t.Fatalf("api.request events %+v", evs)
	}
}

// lockedBuffer is a log sink safe for the service's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestSecurity_BearerToken(t *testing.T) {
	const token = "s3cret-t0ken"
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}, agentBin: t.TempDir(), token: token,
		extra: "service:\n  tokenEnv: THE_LOOP_TEST_TOKEN\n"})
	bearer := func(tok string) func(*http.Request) { return withHeader("Authorization", "Bearer "+tok) }

	refusals := []struct {
		name string
		mods []func(*http.Request)
		want string
	}{
		{"no token", []func(*http.Request){withoutToken()}, "no bearer token"},
		{"a wrong token", []func(*http.Request){bearer("s3cret-t0kem")}, "the bearer token is wrong"},
		{"a prefix of the token", []func(*http.Request){bearer("s3cret")}, "the bearer token is wrong"},
		{"another scheme", []func(*http.Request){withHeader("Authorization", "Basic "+token)}, "the bearer token is wrong"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/standing-sessions", "/api/v1/status", "/api/v1/nope"} {
				r := f.request(http.MethodGet, path, "", c.mods...)
				if r.status != http.StatusUnauthorized || !strings.Contains(r.detail(t), c.want) || !strings.Contains(r.detail(t), "$THE_LOOP_TEST_TOKEN") {
					t.Fatalf("GET %s: %d %s", path, r.status, r.body)
				}
			}
			r := f.request(http.MethodPost, "/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`,
				append(c.mods, withHeader("Content-Type", "application/json"))...)
			if r.status != http.StatusUnauthorized {
				t.Fatalf("POST control: %d %s", r.status, r.body)
			}
			if r := f.mcpPost(initialize, c.mods...); r.status != http.StatusUnauthorized {
				t.Fatalf("POST /mcp: %d %s", r.status, r.body)
			}
			if _, err := f.mcpTools(t, f.clientWith(c.mods...)); err == nil {
				t.Fatal("the MCP client got through")
			}
		})
	}
	// The challenge names the scheme.
	req, _ := http.NewRequest(http.MethodGet, f.url+"/api/v1/status", nil)
	withoutToken()(req)
	resp, err := f.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
		t.Fatalf("401 with WWW-Authenticate %q", got)
	}
	// Nothing was started by the refused control.
	if row, err := f.client.Standing.Get(t.Context(), "alpha"); err != nil || row.Running {
		t.Fatalf("alpha after the refusals: %+v, %v", row, err)
	}

	// Health is exempt; the host check is not.
	if r := f.request(http.MethodGet, "/api/v1/health", "", withoutToken()); r.status != http.StatusOK {
		t.Fatalf("health without a token: %d %s", r.status, r.body)
	}
	if r := f.request(http.MethodGet, "/api/v1/health", "", withHeader("Host", "rebound.example")); r.status != http.StatusForbidden {
		t.Fatalf("health from a foreign Host: %d %s", r.status, r.body)
	}

	// The right token works on REST (the typed client the CLI and SDK use
	// sends it) and on MCP.
	if r := f.request(http.MethodGet, "/api/v1/standing-sessions", "", bearer(token)); r.status != http.StatusOK {
		t.Fatalf("GET with the token: %d %s", r.status, r.body)
	}
	if rep, err := f.client.Status(t.Context()); err != nil || len(rep.StandingSessions) != 1 {
		t.Fatalf("status with the token: %+v, %v", rep, err)
	}
	if n, err := f.mcpTools(t, f.clientWith(bearer(token))); err != nil || n != 6 {
		t.Fatalf("MCP with the token: %d tools, %v", n, err)
	}
	// Without it the typed client reads the 401's detail.
	_, err = sdk.New(f.url, sdk.WithHTTPClient(f.clientWith(withoutToken())), sdk.WithToken("")).Standing.List(t.Context())
	var le *loop.Error
	if !errors.As(err, &le) || !strings.Contains(le.Message, "no bearer token") {
		t.Fatalf("the client without the token: %v", err)
	}
}

func TestSecurity_BodyOverTheCapIsTooLargeOnRESTAndMCP(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir(), extra: "service:\n  maxBodyBytes: 2048\n"})
	big := `{"name":"alpha","text":"` + strings.Repeat("x", 4096) + `"}`
	if r := f.post("/api/v1/standing-sessions/say", big); r.status != http.StatusRequestEntityTooLarge ||
		!strings.Contains(r.detail(t), "larger than 2048 bytes (service.maxBodyBytes)") {
		t.Fatalf("REST: %d %s", r.status, r.body)
	}
	bigCall := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"say_to_standing_session","arguments":{"name":"alpha","text":"` +
		strings.Repeat("x", 4096) + `"}}}`
	if r := f.mcpPost(bigCall); r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.detail(t), "service.maxBodyBytes") {
		t.Fatalf("MCP: %d %s", r.status, r.body)
	}
	// Without a Content-Length (chunked), the cap still answers as REST does.
	chunked := func(r *http.Request) { r.ContentLength = -1; r.Body = io.NopCloser(strings.NewReader(bigCall)) }
	if r := f.mcpPost(bigCall, chunked); r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.detail(t), "service.maxBodyBytes") {
		t.Fatalf("MCP, chunked: %d %s", r.status, r.body)
	}
	// Under the cap, MCP answers.
	if n, err := f.mcpTools(t, f.http); err != nil || n != 6 {
		t.Fatalf("MCP under the cap: %d tools, %v", n, err)
	}
}
