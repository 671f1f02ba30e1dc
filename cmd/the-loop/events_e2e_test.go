package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
)

func TestEvents_JSONLEnvelopeOrderFiltersAndRetention(t *testing.T) {
	e := newEnv(t)
	e.config(`
routing: {tmux: {socketName: %SOCKET%}}
eventLog: {maxEvents: 5}
`)
	for i := range 7 {
		e.must(0, "standing", "create", fmt.Sprintf("s%d", i), "--cwd", e.dir, "--no-start")
	}
	e.must(1, "standing", "say", "s0", "--text", "x") // refused: no event
	r := e.must(0, "events", "--format", "jsonl", "--limit", "0")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 5 {
		t.Fatalf("retention kept %d events, want 5:\n%s", len(lines), r.stdout)
	}
	envelope := regexp.MustCompile(`^\{"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","source":"cli","event":"standing.created","level":"info","pid":\d+,"standing":"s(\d)",`)
	for i, line := range lines {
		m := envelope.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %d is not the original envelope: %s", i, line)
		}
		if want := fmt.Sprint(i + 2); m[1] != want { // the two oldest were pruned
			t.Fatalf("line %d is s%s, want s%s", i, m[1], want)
		}
	}

	if got := e.events("--standing", "s4"); len(got) != 1 || got[0].Field("standing") != "s4" {
		t.Fatalf("--standing: %+v", got)
	}
	if got := e.events("--work-item", "standing:s5"); len(got) != 1 {
		t.Fatalf("--work-item standing:NAME: %+v", got)
	}
	if got := e.events("--type", "standing.*"); len(got) != 5 {
		t.Fatalf("--type: %d", len(got))
	}
	if got := e.events("--type", "channel.*"); len(got) != 0 {
		t.Fatalf("--type channel.*: %d", len(got))
	}
	if got := e.events("--level", "warning"); len(got) != 0 {
		t.Fatalf("--level warning: %d", len(got))
	}
	if got := e.events("--since", "2999-01-01T00:00:00Z"); len(got) != 0 {
		t.Fatalf("--since future: %d", len(got))
	}
	if got := e.events("--since", "1h"); len(got) != 5 {
		t.Fatalf("--since 1h: %d", len(got))
	}
	r = e.must(0, "events", "--format", "jsonl", "--limit", "2")
	if n := len(strings.Split(strings.TrimSpace(r.stdout), "\n")); n != 2 || !strings.Contains(r.stdout, `"standing":"s6"`) {
		t.Fatalf("--limit 2 gave %d lines:\n%s", n, r.stdout)
	}
	r = e.must(0, "events")
	if !strings.HasPrefix(r.stdout, "Time") || !strings.Contains(r.stdout, "standing:s6") {
		t.Fatalf("table:\n%s", r.stdout)
	}
	r = e.must(0, "events", "--type", "nothing.*")
	if r.stdout != "" || !strings.Contains(r.stderr, "(no matching events)") {
		t.Fatalf("empty: %s", r)
	}
	e.must(2, "events", "--since", "yesterday")
}

func TestConfigValidate_NamesDottedKeyPaths(t *testing.T) {
	e := newEnv(t)
	e.config(`
standingSessions:
  sessions:
    - {name: ok}
    - {name: Bad}
    - {name: ok}
bogus: 1
`)
	r := e.must(2, "config", "validate")
	for _, want := range []string{"standingSessions.sessions[1]", "sessions[2]", "sessions[0]", "bogus"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("validate does not name %q:\n%s", want, r.stderr)
		}
	}
	// Outside standingSessions: every verb but stop refuses with exit 2.
	e.must(2, "standing", "list")
	e.must(0, "standing", "stop")
	r = e.must(0, "config", "schema")
	if !strings.Contains(r.stdout, `"standingSessions"`) || !strings.Contains(r.stdout, `"socketName"`) {
		t.Fatal("schema lacks standingSessions or our additions")
	}
	e.config("standingSessions:\n  sessions:\n    - {name: Bad}\n")
	r = e.must(2, "standing", "list")
	if !strings.Contains(r.stderr, "standingSessions.sessions[0]") {
		t.Fatalf("list with a malformed block: %s", r)
	}
}

// TestEvents_LimitZeroReadsEveryEventThroughTheService: with the service
// running (its answers hold at most 10,000 events), `events --limit 0`
// still prints every event, and --limit N the newest N.
func TestEvents_LimitZeroReadsEveryEventThroughTheService(t *testing.T) {
	e, _ := serviceEnv(t, "state: {root: .the-loop}\nservice: {port: %PORT%}\nrouting: {tmux: {socketName: %SOCKET%}}\n")
	db, err := store.Open(filepath.Join(e.dir, ".the-loop", "the-loop.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = sdk.EventsPage + 500
	err = db.Update(func(tx *store.Tx) error {
		for i := range n {
			if err := tx.AppendEvent(&loop.Event{TS: time.Now().UTC(), Source: "test", Event: "test.old", Level: loop.LevelInfo, Fields: []loop.Field{loop.F("i", i)}}); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	e.must(0, "start")
	if e.servicePID() == 0 {
		t.Fatal("no service runs")
	}
	r := e.must(0, "events", "--format", "jsonl", "--limit", "0", "--type", "test.old")
	if got := strings.Count(r.stdout, "\n"); got != n {
		t.Fatalf("--limit 0 printed %d events, want %d", got, n)
	}
	r = e.must(0, "events", "--format", "jsonl", "--limit", "3", "--type", "test.old")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 3 || !strings.Contains(lines[2], fmt.Sprintf(`"i":%d`, n-1)) {
		t.Fatalf("--limit 3:\n%s", r.stdout)
	}
}
