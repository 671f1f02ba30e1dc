package store

import (
	"fmt"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// BenchmarkAppendEvent appends one event per Update in a held DB, with
// retention pruning one event per append once the log is full.
func BenchmarkAppendEvent(b *testing.B) {
	db := openTest(b, Options{MaxEvents: 1000})
	fields := []loop.Field{loop.F("standing", "a"), loop.F("harness", "claude"), loop.F("tmux_target", "loop-standing-a")}
	b.ReportAllocs()
	for b.Loop() {
		if err := db.Update(func(tx *Tx) error {
			return tx.AppendEvent(&loop.Event{TS: t0, Source: "service", Event: "standing.started", Level: "info", PID: 1, Fields: fields})
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendEventBatch appends in one long transaction: the cost of
// the log itself, without a commit per event.
func BenchmarkAppendEventBatch(b *testing.B) {
	db := openTest(b, Options{MaxEvents: 1000})
	fields := []loop.Field{loop.F("standing", "a"), loop.F("harness", "claude")}
	b.ReportAllocs()
	_ = db.Update(func(tx *Tx) error {
		for b.Loop() {
			if err := tx.AppendEvent(&loop.Event{TS: t0, Source: "service", Event: "standing.started", Level: "info", Fields: fields}); err != nil {
				b.Fatal(err)
			}
		}
		return nil
	})
}

// BenchmarkTransientUpdate is one CLI transaction: open, update a record,
// append its event, commit, close.
func BenchmarkTransientUpdate(b *testing.B) {
	db := openTest(b, Options{Transient: true})
	b.ReportAllocs()
	for b.Loop() {
		if err := db.Update(func(tx *Tx) error {
			if err := increment(tx); err != nil {
				return err
			}
			return tx.AppendEvent(&loop.Event{TS: t0, Source: "cli", Event: "standing.said", Fields: []loop.Field{loop.F("standing", "counter")}})
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListStanding50 reads 50 standing records in one View.
func BenchmarkListStanding50(b *testing.B) {
	db := openTest(b, Options{})
	mustUpdate(b, db, func(tx *Tx) error {
		for i := range 50 {
			r := rec(fmt.Sprintf("session-%02d", i))
			r.Prompt = "You are a standing agent. Watch the queue and report."
			if err := tx.PutStanding(r); err != nil {
				return err
			}
		}
		return nil
	})
	b.ReportAllocs()
	for b.Loop() {
		if err := db.View(func(tx *Tx) error {
			all, err := tx.ListStanding()
			if len(all) != 50 {
				b.Fatalf("%d records", len(all))
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventsLast50Of100k is `the-loop events` on a full log: the last
// 50 of 100000 events for one standing session.
func BenchmarkEventsLast50Of100k(b *testing.B) {
	db := openTest(b, Options{})
	mustUpdate(b, db, func(tx *Tx) error {
		for i := range 100000 {
			name := fmt.Sprintf("s%d", i%20)
			if err := tx.AppendEvent(&loop.Event{TS: t0, Event: "standing.said", Fields: []loop.Field{loop.F("standing", name)}}); err != nil {
				return err
			}
		}
		return nil
	})
	b.ReportAllocs()
	for b.Loop() {
		if err := db.View(func(tx *Tx) error {
			evs, err := tx.Events(EventQuery{Standing: "s7", Limit: 50})
			if len(evs) != 50 {
				b.Fatalf("%d events", len(evs))
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}
