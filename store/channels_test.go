package store

import (
	"fmt"
	"strings"
	"testing"
)

func ts(i int) string { return fmt.Sprintf("1700000%03d.000100", i) }

func TestBindThread_CapEvictsTheOldestWithItsCursor(t *testing.T) {
	db := openTest(t, Options{})
	mustUpdate(t, db, func(tx *Tx) error {
		for i := range MaxThreads {
			if err := tx.BindThread(ts(i), fmt.Sprintf("standing:s%d", i), "C1"); err != nil {
				return err
			}
		}
		if err := tx.Advance(ts(0), "1700000999.000001"); err != nil {
			return err
		}
		return tx.Advance(ts(1), "1700000999.000002")
	})
	mustUpdate(t, db, func(tx *Tx) error {
		// Re-binding thread 0 makes it the newest: thread 1 is now the oldest.
		if err := tx.BindThread(ts(0), "standing:s0", "C1"); err != nil {
			return err
		}
		return tx.BindThread(ts(MaxThreads), "standing:new", "C2")
	})
	_ = db.View(func(tx *Tx) error {
		all, err := tx.Threads()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != MaxThreads {
			t.Errorf("%d bindings, want %d", len(all), MaxThreads)
		}
		if all[0].ThreadTS != ts(2) || all[len(all)-2].ThreadTS != ts(0) || all[len(all)-1].ThreadTS != ts(MaxThreads) {
			t.Errorf("order: first %s, last two %s %s", all[0].ThreadTS, all[len(all)-2].ThreadTS, all[len(all)-1].ThreadTS)
		}
		if _, _, ok := tx.ThreadFor("standing:s1"); ok {
			t.Error("the oldest binding was not evicted")
		}
		if c := tx.Cursor(ts(1)); c != ts(1) {
			t.Errorf("the evicted thread kept its cursor %s", c)
		}
		if c := tx.Cursor(ts(0)); c != "1700000999.000001" {
			t.Errorf("a re-bound thread lost its cursor: %s", c)
		}
		if th, ch, ok := tx.ThreadFor("standing:new"); !ok || th != ts(MaxThreads) || ch != "C2" {
			t.Errorf("ThreadFor(new) = %s %s %v", th, ch, ok)
		}
		return nil
	})
}

func TestThreadFor_IsTheNewestBindingOfTheRef(t *testing.T) {
	db := openTest(t, Options{})
	mustUpdate(t, db, func(tx *Tx) error {
		_ = tx.BindThread("1.1", "standing:a", "C1")
		_ = tx.BindThread("2.2", "standing:a", "C2")
		_ = tx.BindThread("3.3", "standing:b", "C1")
		if th, ch, ok := tx.ThreadFor("standing:a"); th != "2.2" || ch != "C2" || !ok {
			t.Errorf("ThreadFor(a) = %s %s %v, want 2.2 C2", th, ch, ok)
		}
		_ = tx.BindThread("1.1", "standing:a", "C1")
		if th, _, _ := tx.ThreadFor("standing:a"); th != "1.1" {
			t.Errorf("after re-binding 1.1, ThreadFor(a) = %s", th)
		}
		if _, _, ok := tx.ThreadFor("standing:zzz"); ok {
			t.Error("ThreadFor of an unbound ref found one")
		}
		if err := tx.BindThread("", "standing:a", "C1"); err == nil {
			t.Error("bound an empty thread ts")
		}
		return nil
	})
}

func TestUnbindRef_LeavesTombstonesForEveryThreadOfTheRef(t *testing.T) {
	db := openTest(t, Options{})
	mustUpdate(t, db, func(tx *Tx) error {
		_ = tx.BindThread("1.1", "standing:a", "C1")
		_ = tx.BindThread("2.2", "standing:a", "C1")
		_ = tx.BindThread("3.3", "standing:b", "C1")
		_ = tx.Advance("1.1", "1.5")
		_ = tx.Advance("3.3", "3.5")
		return nil
	})
	mustUpdate(t, db, func(tx *Tx) error {
		n, err := tx.UnbindRef("standing:a")
		if n != 2 || err != nil {
			t.Errorf("UnbindRef = %d, %v; want 2", n, err)
		}
		return err
	})
	_ = db.View(func(tx *Tx) error {
		all, _ := tx.Threads()
		got := map[string]string{}
		for _, b := range all {
			got[b.ThreadTS] = b.Ref
		}
		if len(all) != 3 || got["1.1"] != "" || got["2.2"] != "" || got["3.3"] != "standing:b" {
			t.Errorf("left %+v", all)
		}
		if _, _, ok := tx.ThreadFor("standing:a"); ok {
			t.Error("standing:a still bound")
		}
		if _, _, ok := tx.ThreadFor(""); ok {
			t.Error("a tombstone answers ThreadFor")
		}
		if tx.Cursor("1.1") != "1.5" || tx.Cursor("3.3") != "3.5" {
			t.Errorf("cursors: 1.1→%s 3.3→%s", tx.Cursor("1.1"), tx.Cursor("3.3"))
		}
		return nil
	})
}

func TestCursor_DefaultsToTheThreadAndOnlyMovesForward(t *testing.T) {
	db := openTest(t, Options{})
	mustUpdate(t, db, func(tx *Tx) error {
		_ = tx.BindThread("1700000000.000100", "standing:a", "C1")
		if c := tx.Cursor("1700000000.000100"); c != "1700000000.000100" {
			t.Errorf("default cursor %s", c)
		}
		steps := []struct{ to, want string }{
			{"1700000001.000001", "1700000001.000001"},
			{"1700000000.900000", "1700000001.000001"}, // backwards: ignored
			{"1700000001.00001", "1700000001.00001"},   // a shorter fraction compares numerically
			{"1700000010.000000", "1700000010.000000"},
		}
		for _, s := range steps {
			if err := tx.Advance("1700000000.000100", s.to); err != nil {
				return err
			}
			if c := tx.Cursor("1700000000.000100"); c != s.want {
				t.Errorf("after Advance(%s) cursor = %s, want %s", s.to, c, s.want)
			}
		}
		_ = tx.Advance("9.9", "10.0") // not bound: keeps nothing
		if c := tx.Cursor("9.9"); c != "9.9" {
			t.Errorf("unbound thread cursor = %s", c)
		}
		return nil
	})
}

func TestThreadBinding_StoredKeyStaysWorkItem(t *testing.T) {
	db := openTest(t, Options{})
	// A binding as a store written before ThreadBinding.Ref was named so
	// holds it: the ref under "workItem".
	mustUpdate(t, db, func(tx *Tx) error {
		return threadsBucket(tx.tx).Put([]byte(ts(1)), []byte(`{"workItem":"standing:old","channel":"C1","boundSeq":1}`))
	})
	mustUpdate(t, db, func(tx *Tx) error { return tx.BindThread(ts(2), "github:octo/repo#1", "C2") })
	_ = db.View(func(tx *Tx) error {
		all, err := tx.Threads()
		if err != nil || len(all) != 2 || all[0].Ref != "standing:old" || all[1].Ref != "github:octo/repo#1" {
			t.Fatalf("bindings %+v (%v)", all, err)
		}
		if raw := string(threadsBucket(tx.tx).Get([]byte(ts(2)))); !strings.Contains(raw, `"workItem":"github:octo/repo#1"`) {
			t.Fatalf("stored %s, want the ref under workItem", raw)
		}
		return nil
	})
}
