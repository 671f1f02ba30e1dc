package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// scrape serves m's handler once and parses it with Prometheus's parser.
func scrape(t *testing.T, m *Metrics) []Sample {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	samples, err := Parse(rec.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return samples
}

func ev(name string, ts time.Time, fields ...loop.Field) loop.Event {
	return loop.Event{Event: name, TS: ts, Level: loop.LevelInfo, Fields: fields}
}

// TestObserve_TurnsAndRestarts: a turn is timed from its turn_started to
// its turn_ended, per session and kind; a turn_ended with no start is not
// timed; standing.restarting counts a restart of its session.
func TestObserve_TurnsAndRestarts(t *testing.T) {
	m := New("v")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.Observe([]loop.Event{
		ev("standing.turn_started", t0, loop.F("standing", "a")),
		ev("standing.turn_started", t0.Add(time.Second), loop.F("standing", "b")),
		ev("session.turn_started", t0, loop.F("work_item", "github:o/r#1")),
	})
	m.Observe([]loop.Event{
		ev("standing.turn_ended", t0.Add(7*time.Second), loop.F("standing", "a")),
		ev("standing.turn_ended", t0.Add(9*time.Second), loop.F("standing", "c")), // never started
		ev("session.turn_ended", t0.Add(2*time.Second), loop.F("work_item", "github:o/r#1")),
		ev("standing.restarting", t0, loop.F("standing", "a"), loop.F("attempt", 1)),
		ev("standing.restarting", t0, loop.F("standing", "a"), loop.F("attempt", 2)),
		ev("standing.exited", t0, loop.F("standing", "b")),
		ev("standing.turn_ended", t0.Add(20*time.Second), loop.F("standing", "b")), // its agent exited meanwhile
	})
	s := scrape(t, m)
	if got := Sum(s, "the_loop_turn_duration_seconds_count", map[string]string{"kind": "standing"}); got != 1 {
		t.Errorf("standing turns timed: %v, want 1", got)
	}
	if got := Sum(s, "the_loop_turn_duration_seconds_sum", map[string]string{"kind": "standing"}); got != 7 {
		t.Errorf("standing turn seconds: %v, want 7", got)
	}
	if got := Sum(s, "the_loop_turn_duration_seconds_sum", map[string]string{"kind": "session"}); got != 2 {
		t.Errorf("work-item turn seconds: %v, want 2", got)
	}
	if got := Sum(s, "the_loop_restarts_total", map[string]string{"standing": "a"}); got != 2 {
		t.Errorf("restarts of a: %v", got)
	}
}

// TestObserve_TurnsBeingTimedAreBounded: turns whose Stop never comes do
// not grow without bound.
func TestObserve_TurnsBeingTimedAreBounded(t *testing.T) {
	m := New("v")
	t0 := time.Now()
	for i := range maxTurns + 10 {
		m.Observe([]loop.Event{ev("standing.turn_started", t0.Add(time.Duration(i)), loop.F("standing", strings.Repeat("x", 1+i%50)+string(rune('a'+i%26))+time.Duration(i).String()))})
	}
	if n := len(m.turnStart); n > maxTurns {
		t.Fatalf("%d turns kept, want at most %d", n, maxTurns)
	}
}

// TestPollCycle_CountsResultsAndErrors.
func TestPollCycle_CountsResultsAndErrors(t *testing.T) {
	m := New("v")
	m.PollCycle("", 0, nil)
	m.PollCycle("", 2, nil)
	m.PollCycle("Slack rate-limited the poller", 0, nil)
	m.PollCycle("", 0, errors.New("store"))
	s := scrape(t, m)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"the_loop_slack_poll_cycles_total", map[string]string{"result": PollOK}, 2},
		{"the_loop_slack_poll_cycles_total", map[string]string{"result": PollSkipped}, 1},
		{"the_loop_slack_poll_cycles_total", map[string]string{"result": PollFailed}, 1},
		{"the_loop_slack_poll_errors_total", map[string]string{"kind": PollErrorThread}, 2},
		{"the_loop_slack_poll_errors_total", map[string]string{"kind": PollErrorCycle}, 1},
	} {
		if got := Sum(s, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// fakeRows gives fixed rows, or an error.
type fakeRows struct {
	rows []loop.StandingRow
	err  error
}

func (f fakeRows) List(context.Context) ([]loop.StandingRow, error) { return f.rows, f.err }

// TestCountSessions_ByStatusAndActivity: the gauge counts the rows at
// each scrape; a failing read still serves the other series.
func TestCountSessions_ByStatusAndActivity(t *testing.T) {
	m := New("v")
	m.CountSessions(Rows{Standing: fakeRows{rows: []loop.StandingRow{
		{Status: loop.StatusRunning, Activity: loop.ActivityIdle},
		{Status: loop.StatusRunning, Activity: loop.ActivityIdle},
		{Status: loop.StatusRunning, Activity: loop.ActivityWorking},
		{Status: loop.StatusStopped, Activity: loop.ActivityExited},
	}}})
	s := scrape(t, m)
	if got := Sum(s, "the_loop_standing_sessions", map[string]string{"status": "running", "activity": "idle"}); got != 2 {
		t.Errorf("running idle: %v", got)
	}
	if got := Sum(s, "the_loop_standing_sessions", map[string]string{"status": "running"}); got != 3 {
		t.Errorf("running: %v", got)
	}

	broken := New("v")
	broken.CountSessions(Rows{Standing: fakeRows{err: errors.New("store closed")}})
	rec := httptest.NewRecorder()
	broken.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "the_loop_says_total") {
		t.Fatalf("a failing row read: %d %s", rec.Code, rec.Body)
	}
}

// TestParse_RefusesWhatIsNotTheTextFormat.
func TestParse_RefusesWhatIsNotTheTextFormat(t *testing.T) {
	if _, err := Parse(strings.NewReader("<html>not metrics</html>")); err == nil {
		t.Fatal("Parse took HTML")
	}
}

// labelValues collects the values label takes among the samples named name.
func labelValues(samples []Sample, name, label string) map[string]bool {
	out := map[string]bool{}
	for _, s := range samples {
		if s.Name == name {
			out[s.Labels[label]] = true
		}
	}
	return out
}

// TestObserveRequest_LabelsStayBoundedWhateverClientsSend: hundreds of
// made-up methods are one "other" method, routes past maxRoutes one
// "other" route, and a status outside HTTP's one "other" code; HTTP's own
// methods and the routes first seen keep their names.
func TestObserveRequest_LabelsStayBoundedWhateverClientsSend(t *testing.T) {
	m := New("v")
	m.ObserveRequest("GET", "/api/v1/health", 200, time.Millisecond)
	m.ObserveRequest("PATCH", "", 404, time.Millisecond)
	for i := range 500 {
		m.ObserveRequest(fmt.Sprintf("X%dMETHOD", i), "", 405, time.Millisecond)
		m.ObserveRequest("GET", fmt.Sprintf("/route/%d", i), 1000+i, time.Millisecond)
	}
	s := scrape(t, m)
	const name = "the_loop_http_request_duration_seconds_count"
	methods := labelValues(s, name, "method")
	if len(methods) != 3 || !methods["GET"] || !methods["PATCH"] || !methods[LabelOther] {
		t.Errorf("method labels %v, want GET, PATCH and %s", methods, LabelOther)
	}
	if got := Sum(s, name, map[string]string{"method": LabelOther}); got != 500 {
		t.Errorf("requests with made-up methods: %v, want 500", got)
	}
	routes := labelValues(s, name, "route")
	if len(routes) > maxRoutes+2 || !routes["/api/v1/health"] || !routes["unmatched"] || !routes[LabelOther] {
		t.Errorf("%d route labels (health %v, unmatched %v, other %v), want at most %d",
			len(routes), routes["/api/v1/health"], routes["unmatched"], routes[LabelOther], maxRoutes+2)
	}
	codes := labelValues(s, name, "code")
	if len(codes) != 4 || !codes["200"] || !codes["404"] || !codes["405"] || !codes[LabelOther] {
		t.Errorf("code labels %v", codes)
	}
}
