package threadlog_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/store"
	"github.com/the-loop-dev/the-loop/threadlog"
)

// ErrTransition is lifecycle's refusal of an invalid transition: the thread
// log's failures are the store's, never one of these.
var ErrTransition = engine.ErrTransition

// newTestLog is a thread log over a fresh store, its events stamped by a
// lifecycle service on the same store (as cmd/the-loop wires it).
func newTestLog(t *testing.T) *threadlog.Log {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "the-loop.db"), store.Options{Transient: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &threadlog.Log{DB: db, Events: &lifecycle.Service{DB: db, Source: "test"}}
}

func threads(t *testing.T, s *threadlog.Log) []loop.BoundThread {
	t.Helper()
	th, err := s.Threads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func events(t *testing.T, s *threadlog.Log, q store.EventQuery) []loop.Event {
	t.Helper()
	var evs []loop.Event
	if err := s.DB.View(func(tx *store.Tx) error {
		var err error
		evs, err = tx.Events(q)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return evs
}

func eventNames(evs []loop.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Event)
	}
	return out
}

func TestRecordReply_AdvancesTheCursorWithItsEventsOnce(t *testing.T) {
	s := newTestLog(t)
	if err := s.DB.Update(func(tx *store.Tx) error { return tx.BindThread("1700000000.000100", "standing:a", "C1") }); err != nil {
		t.Fatal(err)
	}
	received := func(ref string) []loop.Event {
		return []loop.Event{s.NewEvent("channel.reply_received", loop.LevelInfo, loop.F("work_item", ref))}
	}
	ref, taken, err := s.RecordReply(context.Background(), "1700000000.000100", "1700000000.000300", received)
	if err != nil || !taken || ref != "standing:a" {
		t.Fatalf("first: %q %v %v", ref, taken, err)
	}
	if c := threads(t, s)[0].Cursor; c != "1700000000.000300" {
		t.Fatalf("cursor %s", c)
	}
	// The same reply again, or an older one: not taken, nothing written.
	for _, ts := range []string{"1700000000.000300", "1700000000.000200"} {
		if _, taken, err := s.RecordReply(context.Background(), "1700000000.000100", ts, received); err != nil || taken {
			t.Fatalf("%s taken again (%v)", ts, err)
		}
	}
	if n := len(events(t, s, store.EventQuery{})); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
	// A thread no longer bound: decide gets "" and its events are kept.
	ref, taken, err = s.RecordReply(context.Background(), "1600000000.000100", "1600000000.000200", func(ref string) []loop.Event {
		return []loop.Event{s.NewEvent("channel.dropped", loop.LevelInfo, loop.F("reason", "unmapped"), loop.F("work_item", ref))}
	})
	if err != nil || !taken || ref != "" {
		t.Fatalf("unbound: %q %v %v", ref, taken, err)
	}
	if got := eventNames(events(t, s, store.EventQuery{})); !slices.Equal(got, []string{"channel.reply_received", "channel.dropped"}) {
		t.Fatalf("events %v", got)
	}
}

func TestRecordReply_AFailedEventWritesNoCursor(t *testing.T) {
	s := newTestLog(t)
	if err := s.DB.Update(func(tx *store.Tx) error { return tx.BindThread("1700000000.000100", "standing:a", "C1") }); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.RecordReply(context.Background(), "1700000000.000100", "1700000000.000200", func(string) []loop.Event {
		return []loop.Event{{Event: "no timestamp"}} // AppendEvent refuses it
	})
	if err == nil || errors.Is(err, ErrTransition) {
		t.Fatalf("err %v", err)
	}
	if c := threads(t, s)[0].Cursor; c != "1700000000.000100" {
		t.Fatalf("the cursor moved without its event: %s", c)
	}
}
