package http

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/metrics"
)

// scrape GETs /metrics through the contract-checking client and parses it
// with Prometheus's text parser.
func (f *fixture) scrape(mods ...func(*http.Request)) (int, []metrics.Sample, string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.url+MetricsPath, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, mod := range mods {
		mod(req)
	}
	resp, err := f.http.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil, string(body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		f.t.Errorf("/metrics content type %q", ct)
	}
	samples, err := metrics.Parse(strings.NewReader(string(body)))
	if err != nil {
		f.t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return resp.StatusCode, samples, string(body)
}

// TestMetrics_BehindTheOperatorsToken: /metrics needs the operator's
// token; no credential is 401, an agent's credential 403.
func TestMetrics_BehindTheOperatorsToken(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}, meter: metrics.New("test-version")})
	if status, _, body := f.scrape(withoutToken()); status != http.StatusUnauthorized {
		t.Fatalf("no credential: %d %s", status, body)
	}
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`); r.status != 200 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	cred := f.agent.WaitForKind(t, "start", 10*time.Second).Env[credential.AgentTokenEnv]
	if status, _, body := f.scrape(withHeader("Authorization", "Bearer "+cred)); status != http.StatusForbidden {
		t.Fatalf("an agent's credential: %d %s", status, body)
	}
	if status, _, body := f.scrape(); status != http.StatusOK {
		t.Fatalf("the operator's token: %d %s", status, body)
	}
}

// TestMetrics_NotServedWithoutMetrics: a server given no metrics answers
// /metrics 404 with an ErrorBody.
func TestMetrics_NotServedWithoutMetrics(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	if r := f.get(MetricsPath); r.status != http.StatusNotFound || !strings.Contains(r.detail(t), "no metrics") {
		t.Fatalf("/metrics without metrics: %d %s", r.status, r.body)
	}
}

// TestMetrics_MoveWithSessionsSaysAndRequests: through real HTTP, the
// session gauge counts a started session, says_total counts each say by
// its outcome, and the request histogram counts by route template (no
// query, no made-up path).
func TestMetrics_MoveWithSessionsSaysAndRequests(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}, meter: metrics.New("test-version")})
	_, before, _ := f.scrape()
	if got := metrics.Sum(before, "the_loop_standing_sessions", map[string]string{"status": string(loop.StatusRunning)}); got != 0 {
		t.Fatalf("running before any start: %v", got)
	}
	if got := metrics.Sum(before, "the_loop_standing_sessions", nil); got != 1 {
		t.Fatalf("standing sessions before the start: %v, want the one declared", got)
	}
	if got := metrics.Sum(before, "the_loop_build_info", map[string]string{"version": "test-version"}); got != 1 {
		t.Fatalf("build_info: %v", got)
	}
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`); r.status != 200 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	f.agent.WaitForKind(t, "start", 10*time.Second)
	if r := f.post("/api/v1/standing-sessions/say", `{"name":"alpha","text":"hello"}`); r.status != 200 {
		t.Fatalf("say: %d %s", r.status, r.body)
	}
	if r := f.post("/api/v1/standing-sessions/say", `{"name":"nobody","text":"hello"}`); r.status != 404 {
		t.Fatalf("say to nobody: %d %s", r.status, r.body)
	}
	f.get("/api/v1/standing-sessions/one?name=alpha")
	if r := f.get("/api/v1/no-such-route/42"); r.status != 404 {
		t.Fatalf("unknown route: %d", r.status)
	}
	_, after, text := f.scrape()
	if got := metrics.Sum(after, "the_loop_standing_sessions", map[string]string{"status": string(loop.StatusRunning)}); got != 1 {
		t.Errorf("running after the start: %v\n%s", got, text)
	}
	if got := metrics.Sum(after, "the_loop_says_total", map[string]string{"outcome": metrics.OutcomeError}); got != 1 {
		t.Errorf("says with an error: %v", got)
	}
	if got := metrics.Sum(after, "the_loop_says_total", nil); got != 2 {
		t.Errorf("says: %v, want 2", got)
	}
	count := func(route, code string) float64 {
		return metrics.Sum(after, "the_loop_http_request_duration_seconds_count", map[string]string{"route": route, "code": code})
	}
	if got := count("/api/v1/standing-sessions/control", "200"); got != 1 {
		t.Errorf("control requests: %v", got)
	}
	if got := count("/api/v1/standing-sessions/one", "200"); got != 1 {
		t.Errorf("get requests by route template: %v", got)
	}
	if got := count(MetricsPath, "200"); got != 1 {
		t.Errorf("the first scrape: %v", got)
	}
	if got := count("unmatched", "404"); got != 1 {
		t.Errorf("unknown routes are one series: %v\n%s", got, text)
	}
	for _, s := range after {
		if strings.Contains(s.Labels["route"], "?") || strings.Contains(s.Labels["route"], "no-such-route") {
			t.Errorf("a route label holds a raw path: %+v", s)
		}
	}
}
