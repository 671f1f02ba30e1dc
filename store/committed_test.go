package store

import (
	"errors"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// TestCommitted_HearsCommittedEventsOnly: Options.Committed hears the
// events of each committed write, in order and with their Seq, in held and
// transient mode alike — never those of a transaction that rolled back,
// and nothing for a write that appended none.
func TestCommitted_HearsCommittedEventsOnly(t *testing.T) {
	for _, transient := range []bool{false, true} {
		var mu sync.Mutex
		var heard [][]loop.Event
		db := openTest(t, Options{Transient: transient, Committed: func(evs []loop.Event) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, evs)
		}})
		ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		appendEvents(t, db, &loop.Event{TS: ts, Event: "a.one"}, &loop.Event{TS: ts, Event: "a.two"})
		err := db.Update(func(tx *Tx) error {
			if err := tx.AppendEvent(&loop.Event{TS: ts, Event: "b.rolled_back"}); err != nil {
				return err
			}
			return errors.New("roll back")
		})
		if err == nil {
			t.Fatal("the failing update returned nil")
		}
		mustUpdate(t, db, func(*Tx) error { return nil })
		// Committed runs outside the lock: a transaction of its own may run in it.
		appendEvents(t, db, &loop.Event{TS: ts, Event: "c.three"})
		mu.Lock()
		if len(heard) != 2 || len(heard[0]) != 2 || len(heard[1]) != 1 {
			t.Fatalf("transient=%v: heard %v, want [[a.one a.two] [c.three]]", transient, heard)
		}
		if heard[0][0].Event != "a.one" || heard[0][1].Event != "a.two" || heard[1][0].Event != "c.three" {
			t.Errorf("transient=%v: heard %v", transient, heard)
		}
		if heard[0][0].Seq == 0 || heard[0][1].Seq != heard[0][0].Seq+1 {
			t.Errorf("transient=%v: seqs %d, %d: want consecutive, from 1", transient, heard[0][0].Seq, heard[0][1].Seq)
		}
		mu.Unlock()
	}
}

// TestCommitted_MayReadTheStore: the hook runs once the lock is let go, so
// it may itself read the store without deadlocking.
func TestCommitted_MayReadTheStore(t *testing.T) {
	var db *DB
	read := 0
	db = openTest(t, Options{Transient: true, Committed: func([]loop.Event) {
		_ = db.View(func(tx *Tx) error { evs, err := tx.Events(EventQuery{}); read = len(evs); return err })
	}})
	appendEvents(t, db, &loop.Event{TS: time.Now(), Event: "x.y"})
	if read != 1 {
		t.Fatalf("the hook read %d events, want 1", read)
	}
}
