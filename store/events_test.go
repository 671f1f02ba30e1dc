package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	loop "github.com/the-loop-dev/the-loop"
)

func appendEvents(t testing.TB, db *DB, evs ...*loop.Event) {
	t.Helper()
	mustUpdate(t, db, func(tx *Tx) error {
		for _, ev := range evs {
			if err := tx.AppendEvent(ev); err != nil {
				return err
			}
		}
		return nil
	})
}

func seqs(evs []loop.Event) string {
	var s []string
	for _, ev := range evs {
		s = append(s, fmt.Sprint(ev.Seq))
	}
	return strings.Join(s, ",")
}

func query(t testing.TB, db *DB, q EventQuery) ([]loop.Event, error) {
	t.Helper()
	var evs []loop.Event
	err := db.View(func(tx *Tx) (err error) { evs, err = tx.Events(q); return err })
	return evs, err
}

func TestAppendEvent_KeepsTheLastMaxEventsAndSeqKeepsGrowing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	db := reopen(t, path, Options{MaxEvents: 5})
	for i := range 12 {
		ev := &loop.Event{TS: t0, Event: fmt.Sprintf("e%d", i+1)}
		appendEvents(t, db, ev)
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d got seq %d", i+1, ev.Seq)
		}
	}
	evs, _ := query(t, db, EventQuery{})
	if seqs(evs) != "8,9,10,11,12" || evs[0].Event != "e8" {
		t.Errorf("kept %s, want 8..12", seqs(evs))
	}
	// Several appends in one transaction prune as they go.
	appendEvents(t, db, &loop.Event{TS: t0, Event: "a"}, &loop.Event{TS: t0, Event: "b"}, &loop.Event{TS: t0, Event: "c"})
	evs, _ = query(t, db, EventQuery{})
	if seqs(evs) != "11,12,13,14,15" {
		t.Errorf("kept %s, want 11..15", seqs(evs))
	}
	_ = db.Close()

	// A smaller retention on a later open prunes down to it on the next write.
	db = reopen(t, path, Options{MaxEvents: 2})
	appendEvents(t, db, &loop.Event{TS: t0, Event: "d"})
	evs, _ = query(t, db, EventQuery{})
	if seqs(evs) != "15,16" {
		t.Errorf("kept %s, want 15,16", seqs(evs))
	}
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		if n := getUint(tx.Bucket(bucketMeta), keyEventCount); n != 2 {
			t.Errorf("eventCount = %d, want 2", n)
		}
		return nil
	})
}

func TestAppendEvent_WritesTheOriginalEnvelope(t *testing.T) {
	db := openTest(t, Options{})
	ev := &loop.Event{TS: t0, Source: "cli", Event: "standing.started", Level: "loud", PID: 123,
		Fields: []loop.Field{loop.F("standing", "a"), loop.F("harness", "claude"), loop.F("error", "")}}
	appendEvents(t, db, ev)
	var raw string
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		raw = string(tx.Bucket(bucketEvents).Get(u64(ev.Seq)))
		return nil
	})
	want := `{"ts":"2026-07-22T06:31:20.123Z","source":"cli","event":"standing.started","level":"info","pid":123,"standing":"a","harness":"claude"}`
	if raw != want {
		t.Errorf("stored\n %s\nwant\n %s", raw, want)
	}
	if err := db.Update(func(tx *Tx) error { return tx.AppendEvent(&loop.Event{Event: "no.ts"}) }); err == nil {
		t.Error("an event without a timestamp was appended")
	}
}

func TestEvents_Filters(t *testing.T) {
	db := openTest(t, Options{})
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	appendEvents(t, db,
		&loop.Event{TS: at(0), Event: "standing.created", Level: "info", Fields: []loop.Field{loop.F("standing", "a")}},
		&loop.Event{TS: at(1), Event: "standing.started", Level: "info", Fields: []loop.Field{loop.F("standing", "a")}},
		&loop.Event{TS: at(2), Event: "channel.reply_received", Level: "info", Fields: []loop.Field{loop.F("channel", "slack"), loop.F("work_item", "standing:a")}},
		&loop.Event{TS: at(3), Event: "standing.stop_failed", Level: "warning", Fields: []loop.Field{loop.F("standing", "b"), loop.F("error", "a")}},
		&loop.Event{TS: at(4), Event: "session.reply_sent", Level: "info", Fields: []loop.Field{loop.F("work_item", "github:octo/repo#15")}},
		&loop.Event{TS: at(5), Event: "standing.spawn_failed", Level: "error", Fields: []loop.Field{loop.F("standing", "a")}},
		&loop.Event{TS: at(6), Event: "poll.tick", Level: "debug", Fields: []loop.Field{loop.F("note", "standing:a")}},
	)
	cases := []struct {
		name string
		q    EventQuery
		want string
	}{
		{"all", EventQuery{}, "1,2,3,4,5,6,7"},
		{"type pattern", EventQuery{Types: []string{"standing.*"}}, "1,2,4,6"},
		{"type patterns are or-ed", EventQuery{Types: []string{"poll.*", "channel.reply_received"}}, "3,7"},
		{"type exact", EventQuery{Types: []string{"standing.started"}}, "2"},
		{"standing", EventQuery{Standing: "a"}, "1,2,6"},
		{"standing other", EventQuery{Standing: "b"}, "4"},
		{"work item standing ref (D19)", EventQuery{WorkItem: "standing:a"}, "1,2,3,6"},
		{"work item ticket", EventQuery{WorkItem: "github:octo/repo#15"}, "5"},
		{"work item unknown", EventQuery{WorkItem: "github:octo/repo#16"}, ""},
		{"min level warning", EventQuery{MinLevel: "warning"}, "4,6"},
		{"min level info", EventQuery{MinLevel: "info"}, "1,2,3,4,5,6"},
		{"min level debug", EventQuery{MinLevel: "debug"}, "1,2,3,4,5,6,7"},
		{"since", EventQuery{Since: at(3)}, "4,5,6,7"},
		{"after", EventQuery{After: 5}, "6,7"},
		{"after the end", EventQuery{After: 7}, ""},
		{"limit keeps the last, oldest first", EventQuery{Limit: 2}, "6,7"},
		{"limit of matching", EventQuery{Limit: 2, Types: []string{"standing.*"}}, "4,6"},
		{"limit larger than matches", EventQuery{Limit: 50, Standing: "a"}, "1,2,6"},
		{"limit with after", EventQuery{Limit: 3, After: 5}, "6,7"},
		{"limit with after is the first page after it", EventQuery{Limit: 2, After: 3}, "4,5"},
		{"forward from the start", EventQuery{Limit: 2, Forward: true}, "1,2"},
		{"forward page of matching", EventQuery{Limit: 2, Forward: true, After: 1, Standing: "a"}, "2,6"},
		{"forward without limit", EventQuery{Forward: true, After: 5}, "6,7"},
		{"criteria combine", EventQuery{Standing: "a", Types: []string{"standing.s*"}, MinLevel: "error"}, "6"},
		{"standing and work item combine", EventQuery{Standing: "a", WorkItem: "standing:a", Limit: 1}, "6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, err := query(t, db, c.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := seqs(evs); got != c.want {
				t.Errorf("seqs = %q, want %q", got, c.want)
			}
		})
	}
}

func TestEvents_RefusesAnInvalidQuery(t *testing.T) {
	db := openTest(t, Options{})
	for _, q := range []EventQuery{{Types: []string{"standing.["}}, {MinLevel: "loud"}, {Limit: -1}} {
		if _, err := query(t, db, q); loop.ErrorCode(err) != loop.EINVALID {
			t.Errorf("Events(%+v) = %v, want invalid", q, err)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 7, 22, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"30s", now.Add(-30 * time.Second)},
		{"15m", now.Add(-15 * time.Minute)},
		{"2h", now.Add(-2 * time.Hour)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"2026-07-22T06:31:20.123Z", t0},
		{"2026-07-22T06:31:20Z", t0.Truncate(time.Second)},
		{"2026-07-22T06:31:20", t0.Truncate(time.Second)},
		{"2026-07-22T06:31:20.123", t0},
		{"2026-07-22T08:31:20.123+02:00", t0},
		{"2026-07-22T06:31", t0.Truncate(time.Minute)},
		{"2026-07-22", time.Date(2026, 7, 22, 0, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		got, err := ParseSince(c.in, now)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"yesterday", "5w", "-5m", "2026-13-01", "99999999999999999999d"} {
		if _, err := ParseSince(bad, now); loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseSince(%q) = %v, want invalid naming it", bad, err)
		}
	}
}
