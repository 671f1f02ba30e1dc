package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/metrics"
)

// scrapeMetrics GETs the service's /metrics with the operator's token and
// parses it with Prometheus's text parser.
func (e *env) scrapeMetrics() []metrics.Sample {
	e.t.Helper()
	token, err := os.ReadFile(filepath.Join(e.dir, ".the-loop", "service.token"))
	if err != nil {
		e.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", e.port), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("/metrics: %d %s", resp.StatusCode, body)
	}
	samples, err := metrics.Parse(strings.NewReader(string(body)))
	if err != nil {
		e.t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return samples
}

// metricMoves waits until the series sum reaches at least want.
func (e *env) metricMoves(name string, labels map[string]string, want float64) {
	e.t.Helper()
	var got float64
	testkit.Eventually(e.t, func() bool {
		got = metrics.Sum(e.scrapeMetrics(), name, labels)
		return got >= want
	}, 15*time.Second, "%s%v to reach %v (last %v)", name, labels, want, got)
}

// TestMetrics_MoveWhenASessionStartsASayIsSubmittedAndAnAgentRestarts: the
// service's /metrics, scraped over real HTTP and parsed with Prometheus's
// parser, moves when a session starts, a say is submitted and an agent
// restarts.
func TestMetrics_MoveWhenASessionStartsASayIsSubmittedAndAnAgentRestarts(t *testing.T) {
	e := supervisedEnv(t, "", "")
	running := map[string]string{"status": "running"}
	submitted := map[string]string{"outcome": "submitted"}
	restarts := map[string]string{"standing": "supervisor"}

	e.must(0, "start")
	waitFor(t, "the agent", func() bool { return len(e.starts()) == 1 })
	first := e.lastStart()
	before := e.scrapeMetrics()
	if got := metrics.Sum(before, "the_loop_says_total", submitted); got != 0 {
		t.Fatalf("says before any: %v", got)
	}
	if got := metrics.Sum(before, "the_loop_restarts_total", restarts); got != 0 {
		t.Fatalf("restarts before any: %v", got)
	}
	e.metricMoves("the_loop_standing_sessions", running, 1)

	// The boot prompt's turn ends: one turn timed.
	waitFor(t, "the agent idle", func() bool { r := e.rows()["supervisor"]; return r.Activity == "idle" && r.LastAnswerAt != "" })
	e.metricMoves("the_loop_turn_duration_seconds_count", map[string]string{"kind": "standing"}, 1)

	e.must(0, "standing", "say", "supervisor", "--text", "status report, please")
	e.metricMoves("the_loop_says_total", submitted, 1)

	_ = syscall.Kill(first.Pid, syscall.SIGKILL)
	e.metricMoves("the_loop_restarts_total", restarts, 1)
	after := e.scrapeMetrics()
	if got := metrics.Sum(after, "the_loop_http_request_duration_seconds_count", map[string]string{"route": "/api/v1/standing-sessions/say"}); got != 1 {
		t.Errorf("say requests timed: %v", got)
	}
}
