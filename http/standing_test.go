package http

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// rowKeys are the keys of the original's row (original §5.2).
var rowKeys = []string{"name", "declared", "description", "autoStart", "harness", "cwd", "tmuxTarget", "ref",
	"status", "running", "harnessSessionId", "slackChannel", "slackThread", "startedAt", "lastMessageAt",
	"activity", "activityAt", "lastAnswerAt", "tokens"}

func requireKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks %q: %v", what, k, m)
		}
	}
}

func TestStanding_EveryRouteThroughTheService(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})

	// list before anything runs: the declared session, not running.
	r := f.get("/api/v1/standing-sessions")
	var list []map[string]any
	r.decode(t, &list)
	if r.status != 200 || len(list) != 1 || list[0]["name"] != "alpha" || list[0]["running"] != false || list[0]["status"] != "absent" {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	requireKeys(t, "list row", list[0], rowKeys...)

	// start: {sessions, ok} with outcome and detail.
	r = f.post("/api/v1/standing-sessions/control", `{"verb":"start"}`)
	var ctl map[string]any
	r.decode(t, &ctl)
	if r.status != 200 || ctl["ok"] != true {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	row := ctl["sessions"].([]any)[0].(map[string]any)
	requireKeys(t, "start row", row, append(rowKeys, "outcome", "detail")...)
	if row["outcome"] != "started" || row["running"] != true {
		t.Fatalf("start row %v", row)
	}

	// already running, and autoOnly accepted (decisions D4).
	r = f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start","autoOnly":true}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"outcome":"already-running"`) {
		t.Fatalf("second start: %d %s", r.status, r.body)
	}

	// one?name=
	r = f.get("/api/v1/standing-sessions/one?name=alpha")
	var one map[string]any
	r.decode(t, &one)
	if r.status != 200 || one["name"] != "alpha" || one["running"] != true || one["declared"] != true {
		t.Fatalf("one: %d %s", r.status, r.body)
	}

	// create a second session without starting it, then with.
	r = f.post("/api/v1/standing-sessions/create", `{"name":"beta","description":"made at runtime","autoStart":false,"start":false}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"ok":true`) || !strings.Contains(string(r.body), `"status":"stopped"`) {
		t.Fatalf("create without start: %d %s", r.status, r.body)
	}
	r = f.post("/api/v1/standing-sessions/create", mustJSON(t, map[string]any{"name": "gamma", "cwd": f.dir, "harnessArgs": []string{}}))
	r.decode(t, &ctl)
	if r.status != 200 || ctl["ok"] != true {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	row = ctl["sessions"].([]any)[0].(map[string]any)
	if row["outcome"] != "started" || row["autoStart"] != true {
		t.Fatalf("create row %v", row)
	}

	// say: delivered, and the agent reads it.
	r = f.post("/api/v1/standing-sessions/say", `{"name":"alpha","text":"hello <there> & welcome","actor":"ops"}`)
	var say map[string]any
	r.decode(t, &say)
	if r.status != 200 || say["delivered"] != true || say["exitCode"] != float64(0) || say["name"] != "alpha" {
		t.Fatalf("say: %d %s", r.status, r.body)
	}
	requireKeys(t, "say", say, "name", "delivered", "exitCode", "messages")
	f.agent.WaitFor(t, func(e testkit.Entry) bool {
		return e.Kind == "message" && strings.Contains(e.Text, "Message from your operator (ops) to standing session `alpha`:") &&
			strings.Contains(e.Text, "hello <there> & welcome")
	}, 5*time.Second)

	// status: one service row, the standing rows, ok.
	r = f.get("/api/v1/status")
	var rep loop.Report
	r.decode(t, &rep)
	if r.status != 200 || len(rep.Services) != 1 || !rep.OK || len(rep.StandingSessions) != 3 {
		t.Fatalf("status: %d %s", r.status, r.body)
	}
	svc := rep.Services[0]
	if svc.Service != "service" || !svc.Running || !svc.Healthy || svc.PID != os.Getpid() || svc.URL != f.url ||
		svc.MCP == nil || svc.MCP.Path != "/mcp" || !svc.MCP.Enabled || !svc.Enabled {
		t.Fatalf("service row %+v", svc)
	}

	// restart adds "stopped".
	r = f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"restart"}`)
	var restart map[string]any
	r.decode(t, &restart)
	if r.status != 200 || restart["ok"] != true || restart["stopped"] == nil {
		t.Fatalf("restart: %d %s", r.status, r.body)
	}
	if got := restart["sessions"].([]any)[0].(map[string]any)["outcome"]; got != "resumed" {
		t.Fatalf("restart outcome %v", got)
	}

	// delete a created session.
	r = f.post("/api/v1/standing-sessions/delete", `{"name":"gamma"}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"outcome":"deleted"`) || !strings.Contains(string(r.body), `"ok":true`) {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}

	// stop everything.
	r = f.post("/api/v1/standing-sessions/control", `{"verb":"stop"}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"ok":true`) {
		t.Fatalf("stop: %d %s", r.status, r.body)
	}
	testkit.Eventually(t, func() bool {
		rows, err := f.client.Standing.List(t.Context())
		return err == nil && len(rows) == 2 && !rows[0].Running && !rows[1].Running
	}, 2*time.Second, "rows still running after stop")

	// events: envelopes in the original's order, with seq last.
	r = f.get("/api/v1/events?type=standing.*")
	var evs []map[string]any
	r.decode(t, &evs)
	if r.status != 200 || len(evs) == 0 {
		t.Fatalf("events: %d %s", r.status, r.body)
	}
	first := string(r.body[1:])
	if !strings.HasPrefix(first, `{"ts":`) || !strings.Contains(first[:strings.Index(first, "}")], `"seq":`) {
		t.Fatalf("envelope order: %s", first[:min(len(first), 300)])
	}
	var names []string
	for _, e := range evs {
		names = append(names, e["event"].(string))
	}
	for _, want := range []string{"standing.started", "standing.created", "standing.said", "standing.resumed", "standing.deleted", "standing.stopped"} {
		if !slices.Contains(names, want) {
			t.Errorf("events lack %s: %v", want, names)
		}
	}
	// after= and limit= select by sequence.
	last := uint64(evs[len(evs)-1]["seq"].(float64))
	r = f.get("/api/v1/events?limit=1&type=standing.*")
	r.decode(t, &evs)
	if len(evs) != 1 || uint64(evs[0]["seq"].(float64)) != last {
		t.Fatalf("limit=1: %s", r.body)
	}
	r = f.get("/api/v1/events?type=standing.*&after=" + strconv.FormatUint(last, 10))
	if r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("after the last: %d %s", r.status, r.body)
	}
}

func TestStanding_SayThatCannotDeliverIs200(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`); r.status != 200 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	// A say whose agent never gets ready: the pane is a shell-less sleep.
	if _, err := testkit.TmuxRun(f.socket, "respawn-pane", "-k", "-t", "=loop-standing-alpha:", "sleep 30"); err != nil {
		t.Fatal(err)
	}
	cfg := f.configYAML(fixtureOptions{sessions: []string{"alpha"}})
	f.writeConfig(strings.Replace(cfg, "readySeconds: 10", "readySeconds: 0.3", 1))
	r := f.post("/api/v1/standing-sessions/say", `{"name":"alpha","text":"anyone?"}`)
	var say loop.SayResult
	r.decode(t, &say)
	if r.status != 200 || say.Delivered || say.ExitCode != 1 || len(say.Messages) != 1 || say.Messages[0].Stream != "err" {
		t.Fatalf("undeliverable say: %d %s", r.status, r.body)
	}
}

func TestStanding_ListIsAnEmptyArrayWithoutSessions(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	if r := f.get("/api/v1/standing-sessions"); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	r := f.get("/api/v1/status")
	if r.status != 200 || !strings.Contains(string(r.body), `"standingSessions":[]`) || !strings.Contains(string(r.body), `"ok":true`) {
		t.Fatalf("status: %d %s", r.status, r.body)
	}
	if r := f.get("/api/v1/events"); r.status != 200 || string(r.body) != "[]" {
		t.Fatalf("events: %d %s", r.status, r.body)
	}
	if r := f.post("/api/v1/standing-sessions/control", `{"verb":"start"}`); r.status != 200 || string(r.body) != `{"sessions":[],"ok":true}` {
		t.Fatalf("start of none: %d %s", r.status, r.body)
	}
}
