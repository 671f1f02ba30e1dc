package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
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

// TestBindThread_CapNeverEvictsALiveSessionAndTombstonesGoFirst:
// the long-lived standing thread, bound first, is the oldest binding;
// the cap evicts tombstones first, then the bindings of closed or absent
// sessions, oldest first, and never a live session's.
func TestBindThread_CapNeverEvictsALiveSessionAndTombstonesGoFirst(t *testing.T) {
	db := openTest(t, Options{})
	active, closed := "github:o/r#1", "github:o/r#2"
	mustUpdate(t, db, func(tx *Tx) error {
		if err := tx.PutStanding(rec("sup")); err != nil {
			return err
		}
		stopped := rec("paused")
		stopped.Status = loop.StatusStopped
		if err := tx.PutStanding(stopped); err != nil {
			return err
		}
		for ref, status := range map[string]loop.SessionStatus{active: loop.SessionActive, closed: loop.SessionClosed} {
			item, err := loop.ParseWorkItemRef(ref)
			if err != nil {
				return err
			}
			if err := tx.PutWorkItem(item.Slug(), &loop.WorkItemRecord{WorkItem: loop.WorkItemInfo{Ref: ref, Provider: item.Provider,
				Owner: item.Owner, Repo: item.Repo, Number: item.Number}, Harness: "claude", Status: status}); err != nil {
				return err
			}
		}
		for i, ref := range []string{"standing:sup", "standing:paused", active, "standing:gone", closed} {
			if err := tx.BindThread(ts(i), ref, "C1"); err != nil {
				return err
			}
		}
		if _, err := tx.UnbindRef("standing:gone"); err != nil { // ts(3) is a tombstone
			return err
		}
		for i := 5; i < MaxThreads; i++ { // sessions with no record: absent
			if err := tx.BindThread(ts(i), fmt.Sprintf("standing:absent%d", i), "C1"); err != nil {
				return err
			}
		}
		return tx.Advance(ts(0), "1700000999.000001")
	})
	bound := func() map[string]string {
		out := map[string]string{}
		_ = db.View(func(tx *Tx) error {
			all, err := tx.Threads()
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range all {
				out[b.ThreadTS] = b.Ref
			}
			return nil
		})
		return out
	}
	bind := func(i int) {
		t.Helper()
		mustUpdate(t, db, func(tx *Tx) error { return tx.BindThread(ts(i), fmt.Sprintf("standing:new%d", i), "C1") })
	}
	bind(MaxThreads) // evicts the tombstone, though a closed and absent ones are older
	got := bound()
	if _, ok := got[ts(3)]; ok || len(got) != MaxThreads {
		t.Fatalf("after one more: %d bindings, tombstone kept %v", len(got), ok)
	}
	bind(MaxThreads + 1) // then the closed work item's, the oldest ended one
	bind(MaxThreads + 2) // then the oldest absent session's
	got = bound()
	if _, ok := got[ts(4)]; ok {
		t.Error("the closed work item's binding was kept over an absent one's")
	}
	if _, ok := got[ts(5)]; ok {
		t.Error("the oldest absent session's binding was kept")
	}
	for i, ref := range []string{"standing:sup", "standing:paused", active} {
		if got[ts(i)] != ref {
			t.Errorf("the live binding %s → %s was evicted", ts(i), ref)
		}
	}
	_ = db.View(func(tx *Tx) error {
		if c := tx.Cursor(ts(0)); c != "1700000999.000001" {
			t.Errorf("the standing thread lost its cursor: %s", c)
		}
		if th, _, ok := tx.ThreadFor("standing:sup"); !ok || th != ts(0) {
			t.Errorf("ThreadFor(standing:sup) = %s %v", th, ok)
		}
		return nil
	})
}

// When every binding is a live session's, the cap gives way: none is
// evicted.
func TestBindThread_LiveSessionsOutgrowTheCapRatherThanLoseTheirThreads(t *testing.T) {
	db := openTest(t, Options{})
	mustUpdate(t, db, func(tx *Tx) error {
		for i := range MaxThreads + 2 {
			name := fmt.Sprintf("s%d", i)
			if err := tx.PutStanding(rec(name)); err != nil {
				return err
			}
			if err := tx.BindThread(ts(i), "standing:"+name, "C1"); err != nil {
				return err
			}
		}
		return nil
	})
	_ = db.View(func(tx *Tx) error {
		if all, _ := tx.Threads(); len(all) != MaxThreads+2 {
			t.Errorf("%d bindings, want every live one (%d)", len(all), MaxThreads+2)
		}
		return nil
	})
}

// Replies kept for a session come back oldest first, are bounded per
// thread and in all, and are taken once; one taken and put back keeps its
// place.
func TestQueueReply_KeepsRepliesInOrderBoundedAndTakesEachOnce(t *testing.T) {
	db := openTest(t, Options{})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	reply := func(thread string, i int) *PendingReply {
		return &PendingReply{Thread: thread, TS: fmt.Sprintf("1700000001.%06d", i), Ref: "standing:a", Author: "U1",
			Text: fmt.Sprintf("reply %d", i), QueuedAt: at}
	}
	mustUpdate(t, db, func(tx *Tx) error {
		for i := range MaxPendingPerThread {
			if kept, err := tx.QueueReply(reply("1.1", i)); !kept || err != nil {
				t.Fatalf("reply %d: kept %v, %v", i, kept, err)
			}
		}
		if kept, err := tx.QueueReply(reply("1.1", 99)); kept || err != nil {
			t.Errorf("a reply past the thread's bound: kept %v, %v", kept, err)
		}
		if kept, err := tx.QueueReply(reply("2.2", 0)); !kept || err != nil {
			t.Errorf("another thread's reply: kept %v, %v", kept, err)
		}
		return nil
	})
	var first *PendingReply
	mustUpdate(t, db, func(tx *Tx) error {
		all, err := tx.PendingReplies()
		if err != nil || len(all) != MaxPendingPerThread+1 {
			t.Fatalf("%d kept, %v", len(all), err)
		}
		for i, p := range all[:MaxPendingPerThread] {
			if p.Text != fmt.Sprintf("reply %d", i) || p.Thread != "1.1" || !p.QueuedAt.Equal(at) {
				t.Fatalf("kept[%d] = %+v", i, p)
			}
		}
		if n, _ := tx.Waiting("1.1"); n != MaxPendingPerThread {
			t.Errorf("Waiting(1.1) = %d", n)
		}
		first, err = tx.TakeReply(all[0].Seq)
		if err != nil || first == nil || first.Text != "reply 0" {
			t.Fatalf("TakeReply = %+v, %v", first, err)
		}
		if again, err := tx.TakeReply(all[0].Seq); again != nil || err != nil {
			t.Errorf("taken twice: %+v, %v", again, err)
		}
		return nil
	})
	mustUpdate(t, db, func(tx *Tx) error {
		first.Attempts, first.Error = 1, "not ready"
		if kept, err := tx.QueueReply(first); !kept || err != nil {
			t.Fatalf("put back: %v %v", kept, err)
		}
		all, _ := tx.PendingReplies()
		if all[0].Text != "reply 0" || all[0].Attempts != 1 || all[0].Error != "not ready" {
			t.Errorf("put back out of place: %+v", all[0])
		}
		return nil
	})
	// The bound across threads.
	mustUpdate(t, db, func(tx *Tx) error {
		all, _ := tx.PendingReplies()
		for n, i := len(all), 0; n < MaxPending; n, i = n+1, i+1 {
			if kept, err := tx.QueueReply(reply(fmt.Sprintf("3.%d", i), 0)); !kept || err != nil {
				t.Fatalf("filling: %v %v", kept, err)
			}
		}
		if kept, err := tx.QueueReply(reply("4.4", 0)); kept || err != nil {
			t.Errorf("a reply past MaxPending: kept %v, %v", kept, err)
		}
		return nil
	})
}
