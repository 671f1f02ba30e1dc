package store

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	loop "github.com/the-loop-dev/the-loop"
)

var t0 = time.Date(2026, 7, 22, 6, 31, 20, 123e6, time.UTC)

func openTest(t testing.TB, opt Options) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "state", "the-loop.db"), opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func reopen(t testing.TB, path string, opt Options) *DB {
	t.Helper()
	db, err := Open(path, opt)
	if err != nil {
		t.Fatalf("Open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func rec(name string) *loop.StandingRecord {
	return &loop.StandingRecord{
		Name: name, Harness: "claude", Cwd: "/work/" + name, Status: loop.StatusRunning,
		HarnessArgs: []string{"--model", "opus"}, AutoStart: true, Origin: loop.OriginCreated,
		Claim: &loop.Claim{Op: "start", PID: 42, Since: "2026-07-22T06:31:20Z"},
	}
}

func mustUpdate(t testing.TB, db *DB, fn func(*Tx) error) {
	t.Helper()
	if err := db.Update(fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func getStanding(t testing.TB, db *DB, name string) *loop.StandingRecord {
	t.Helper()
	var r *loop.StandingRecord
	if err := db.View(func(tx *Tx) (err error) { r, err = tx.Standing(name); return err }); err != nil {
		t.Fatalf("View: %v", err)
	}
	return r
}

func eventCount(t testing.TB, db *DB) int {
	t.Helper()
	var evs []loop.Event
	if err := db.View(func(tx *Tx) (err error) { evs, err = tx.Events(EventQuery{}); return err }); err != nil {
		t.Fatalf("View: %v", err)
	}
	return len(evs)
}

func TestOpen_CreatesParentDirectoriesPrivately(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "the-loop.db")
	db := reopen(t, path, Options{})
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestStanding_RoundTripListAndDelete(t *testing.T) {
	for _, transient := range []bool{false, true} {
		t.Run(fmt.Sprintf("transient=%v", transient), func(t *testing.T) {
			db := openTest(t, Options{Transient: transient})
			mustUpdate(t, db, func(tx *Tx) error {
				for _, n := range []string{"zeta", "alpha", "mid-1"} {
					r := rec(n)
					r.TmuxTarget = "something-else"
					if err := tx.PutStanding(r); err != nil {
						return err
					}
					if r.TmuxTarget != "loop-standing-"+n {
						t.Errorf("PutStanding left TmuxTarget %q", r.TmuxTarget)
					}
				}
				return nil
			})
			got := getStanding(t, db, "alpha")
			want := rec("alpha")
			want.TmuxTarget = "loop-standing-alpha"
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Standing(alpha) = %+v, want %+v", got, want)
			}
			if r := getStanding(t, db, "nobody"); r != nil {
				t.Errorf("Standing(nobody) = %+v, want nil", r)
			}
			var names []string
			_ = db.View(func(tx *Tx) error {
				all, err := tx.ListStanding()
				for _, r := range all {
					names = append(names, r.Name)
				}
				return err
			})
			if strings.Join(names, ",") != "alpha,mid-1,zeta" {
				t.Errorf("ListStanding order = %v", names)
			}
			mustUpdate(t, db, func(tx *Tx) error {
				if ok, err := tx.DeleteStanding("mid-1"); !ok || err != nil {
					t.Errorf("DeleteStanding(mid-1) = %v, %v; want true", ok, err)
				}
				if ok, err := tx.DeleteStanding("mid-1"); ok || err != nil {
					t.Errorf("second DeleteStanding(mid-1) = %v, %v; want false", ok, err)
				}
				return nil
			})
			if getStanding(t, db, "mid-1") != nil {
				t.Error("mid-1 survived its delete")
			}
		})
	}
}

func TestPutStanding_RefusesInvalidName(t *testing.T) {
	db := openTest(t, Options{})
	for _, name := range []string{"", "../escape", "a/b", "Upper", "-lead", strings.Repeat("a", 41)} {
		err := db.Update(func(tx *Tx) error { return tx.PutStanding(rec(name)) })
		if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), "invalid standing-session name '"+name+"'") {
			t.Errorf("PutStanding(%q) = %v, want invalid naming it", name, err)
		}
	}
}

func TestStanding_UnreadableRecordIsAnErrorNamingTheKey(t *testing.T) {
	db := openTest(t, Options{})
	_ = db.bolt.Update(func(btx *bolt.Tx) error {
		_ = btx.Bucket(bucketStanding).Put([]byte("broken"), []byte("{not json"))
		return btx.Bucket(bucketStanding).Put([]byte("liar"), []byte(`{"name":"other"}`))
	})
	for _, key := range []string{"broken", "liar"} {
		err := db.View(func(tx *Tx) error { _, err := tx.Standing(key); return err })
		if err == nil || !strings.Contains(err.Error(), "'"+key+"'") {
			t.Errorf("Standing(%s) error = %v, want one naming the key", key, err)
		}
	}
	// A list shows each as a broken record naming its key.
	var recs []*loop.StandingRecord
	err := db.View(func(tx *Tx) error { var err error; recs, err = tx.ListStanding(); return err })
	if err != nil || len(recs) != 2 {
		t.Fatalf("ListStanding = %+v, %v", recs, err)
	}
	for i, key := range []string{"broken", "liar"} {
		if recs[i].Name != key || recs[i].Status != loop.StatusBroken || !strings.Contains(recs[i].Broken, "'"+key+"'") {
			t.Errorf("ListStanding[%d] = %+v, want broken naming '%s'", i, recs[i], key)
		}
	}
}

func TestRead_ValuesSurviveTheTransactionAndTheFile(t *testing.T) {
	// Transient: the file is unmapped after View, so an alias would fault.
	db := openTest(t, Options{Transient: true})
	mustUpdate(t, db, func(tx *Tx) error {
		if err := tx.PutStanding(rec("keep")); err != nil {
			return err
		}
		if err := tx.PutWorkItem("github-octo-repo-15", &loop.WorkItemRecord{Harness: "claude", PullRequests: []byte(`[{"n":1}]`)}); err != nil {
			return err
		}
		if err := tx.BindThread("1700000000.000100", "standing:keep", "C1"); err != nil {
			return err
		}
		return tx.AppendEvent(&loop.Event{TS: t0, Source: "cli", Event: "standing.started", Level: "info", Fields: []loop.Field{loop.F("standing", "keep")}})
	})
	var (
		r      *loop.StandingRecord
		s      *loop.WorkItemRecord
		evs    []loop.Event
		thread string
		binds  []ThreadBinding
	)
	_ = db.View(func(tx *Tx) (err error) {
		r, _ = tx.Standing("keep")
		s, _ = tx.WorkItem("github-octo-repo-15")
		evs, _ = tx.Events(EventQuery{})
		thread, _, _ = tx.ThreadFor("standing:keep")
		binds, err = tx.Threads()
		return err
	})
	// Overwrite everything, then read what we kept.
	mustUpdate(t, db, func(tx *Tx) error {
		x := rec("keep")
		x.Cwd, x.HarnessArgs = "/elsewhere", []string{"XXXXXX", "YYYY"}
		_, _ = tx.UnbindRef("standing:keep")
		return tx.PutStanding(x)
	})
	if r.Cwd != "/work/keep" || r.HarnessArgs[0] != "--model" || r.Claim.Since != "2026-07-22T06:31:20Z" {
		t.Errorf("record changed after its transaction: %+v", r)
	}
	if string(s.PullRequests) != `[{"n":1}]` {
		t.Errorf("session changed: %s", s.PullRequests)
	}
	if len(evs) != 1 || evs[0].Event != "standing.started" || evs[0].Field("standing") != "keep" || evs[0].Seq != 1 {
		t.Errorf("events changed: %+v", evs)
	}
	if thread != "1700000000.000100" || binds[0].ThreadTS != thread || binds[0].Channel != "C1" {
		t.Errorf("thread changed: %q %+v", thread, binds)
	}
}

func TestSessions_RoundTripListAndDelete(t *testing.T) {
	db := openTest(t, Options{})
	s := &loop.WorkItemRecord{
		WorkItem: loop.WorkItemInfo{Ref: "github:octo/repo#15", Provider: "github", Owner: "octo", Repo: "repo", Number: 15},
		Harness:  "claude", HarnessSessionID: "u-1", Cwd: "/w", Status: "active",
		CreatedAt: "2026-07-22T06:31:20Z", LastEventAt: "2026-07-22T06:32:00Z", TmuxTarget: "loop-github-octo-repo-15",
		RecentDeliveries: []string{"d1", "d2"}, URL: "https://github.com/octo/repo/issues/15",
	}
	mustUpdate(t, db, func(tx *Tx) error {
		if err := tx.PutWorkItem("github-octo-repo-15", s); err != nil {
			return err
		}
		return tx.PutWorkItem("github-a-b-2", &loop.WorkItemRecord{WorkItem: loop.WorkItemInfo{Ref: "github:a/b#2"}})
	})
	if err := db.Update(func(tx *Tx) error { return tx.PutWorkItem("../x", s) }); loop.ErrorCode(err) != loop.EINVALID {
		t.Errorf("PutSession(../x) = %v, want invalid", err)
	}
	_ = db.View(func(tx *Tx) error {
		got, err := tx.WorkItem("github-octo-repo-15")
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Errorf("Session = %+v, %v; want %+v", got, err, s)
		}
		all, _ := tx.ListWorkItems()
		if len(all) != 2 || all[0].WorkItem.Ref != "github:a/b#2" {
			t.Errorf("ListWorkItems = %+v", all)
		}
		if none, _ := tx.ListStanding(); len(none) != 0 {
			t.Errorf("a work-item session shows as standing: %+v", none)
		}
		return nil
	})
	mustUpdate(t, db, func(tx *Tx) error {
		if ok, _ := tx.DeleteWorkItem("github-a-b-2"); !ok {
			t.Error("DeleteSession found nothing")
		}
		if got, _ := tx.WorkItem("github-a-b-2"); got != nil {
			t.Error("deleted session still there")
		}
		return nil
	})
}

func TestUpdate_ErrorRollsBackRecordAndEventTogether(t *testing.T) {
	for _, transient := range []bool{false, true} {
		t.Run(fmt.Sprintf("transient=%v", transient), func(t *testing.T) {
			db := openTest(t, Options{Transient: transient})
			boom := loop.Invalid("boom")
			err := db.Update(func(tx *Tx) error {
				if err := tx.PutStanding(rec("a")); err != nil {
					return err
				}
				if err := tx.AppendEvent(&loop.Event{TS: t0, Event: "standing.started", Level: "info"}); err != nil {
					return err
				}
				return boom
			})
			if err != boom {
				t.Fatalf("Update returned %v, want fn's error unchanged", err)
			}
			if getStanding(t, db, "a") != nil || eventCount(t, db) != 0 {
				t.Error("a failed Update left its record or its event")
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Error("panic did not propagate")
					}
				}()
				_ = db.Update(func(tx *Tx) error {
					_ = tx.PutStanding(rec("a"))
					_ = tx.AppendEvent(&loop.Event{TS: t0, Event: "standing.started"})
					panic("boom")
				})
			}()
			if getStanding(t, db, "a") != nil || eventCount(t, db) != 0 {
				t.Error("a panicking Update left its record or its event")
			}
			// The handle still works after the panic (its file lock was released).
			mustUpdate(t, db, func(tx *Tx) error { return tx.PutStanding(rec("a")) })
		})
	}
}

func TestReopen_KeepsEveryCommittedRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		for i := range 3 {
			if err := tx.PutStanding(rec(fmt.Sprintf("s%d", i))); err != nil {
				return err
			}
			if err := tx.AppendEvent(&loop.Event{TS: t0, Event: "standing.created", Fields: []loop.Field{loop.F("standing", fmt.Sprintf("s%d", i))}}); err != nil {
				return err
			}
		}
		return tx.BindThread("1.1", "standing:s0", "C1")
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(*Tx) error { return nil }); err == nil {
		t.Error("Update after Close succeeded")
	}
	db = reopen(t, path, Options{})
	_ = db.View(func(tx *Tx) error {
		all, _ := tx.ListStanding()
		evs, _ := tx.Events(EventQuery{})
		ts, _, ok := tx.ThreadFor("standing:s0")
		if len(all) != 3 || len(evs) != 3 || !ok || ts != "1.1" {
			t.Errorf("after reopen: %d records, %d events, thread %q %v", len(all), len(evs), ts, ok)
		}
		return nil
	})
	mustUpdate(t, db, func(tx *Tx) error {
		ev := &loop.Event{TS: t0, Event: "x"}
		if err := tx.AppendEvent(ev); err != nil {
			return err
		}
		if ev.Seq != 4 {
			t.Errorf("seq after reopen = %d, want 4", ev.Seq)
		}
		return nil
	})
}

// increment adds one to the counter kept in the description of record "counter".
func increment(tx *Tx) error {
	r, err := tx.Standing("counter")
	if err != nil {
		return err
	}
	if r == nil {
		r = rec("counter")
	}
	n, _ := strconv.Atoi(r.Description)
	r.Description = strconv.Itoa(n + 1)
	return tx.PutStanding(r)
}

func TestTransient_ConcurrentHandlesLoseNoUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	opt := Options{Transient: true, Timeout: 60 * time.Second}
	handles := []*DB{reopen(t, path, opt), reopen(t, path, opt)}
	const perWorker, workers = 25, 4
	var wg sync.WaitGroup
	errs := make(chan error, len(handles)*workers*perWorker)
	for _, h := range handles {
		for range workers {
			wg.Go(func() {
				for range perWorker {
					errs <- h.Update(increment)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
	want := strconv.Itoa(len(handles) * workers * perWorker)
	if got := getStanding(t, handles[0], "counter").Description; got != want {
		t.Errorf("counter = %s, want %s", got, want)
	}
}

// TestHelperProcess is run as a separate process by
// TestTransient_ConcurrentProcessesLoseNoUpdate.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv("STORE_HELPER_DB")
	if path == "" {
		t.Skip("helper process only")
	}
	db, err := Open(path, Options{Transient: true, Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		if err := db.Update(increment); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTransient_ConcurrentProcessesLoseNoUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	db := reopen(t, path, Options{Transient: true, Timeout: 60 * time.Second})
	var procs []*exec.Cmd
	var outs []*strings.Builder
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "STORE_HELPER_DB="+path)
		out := new(strings.Builder)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, out)
	}
	for range 40 {
		if err := db.Update(increment); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("helper process: %v\n%s", err, outs[i])
		}
	}
	if got := getStanding(t, db, "counter").Description; got != "120" {
		t.Errorf("counter = %s, want 120", got)
	}
}

func TestTransient_LongUpdateMakesOthersWaitThenTimeOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	holder := reopen(t, path, Options{Transient: true})
	other := reopen(t, path, Options{Transient: true, Timeout: 200 * time.Millisecond})

	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- holder.Update(func(tx *Tx) error {
			close(inside)
			<-release
			return tx.PutStanding(rec("held"))
		})
	}()
	<-inside

	wantLocked := func(what string, err error, start time.Time) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s succeeded while the file was held", what)
		}
		var le *loop.Error
		if !errors.As(err, &le) || le.Code != loop.EINTERNAL {
			t.Errorf("%s: %v is not an internal *loop.Error", what, err)
		}
		for _, part := range []string{path, "another the-loop process holds it", "the-loop stop"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%s: message %q does not mention %q", what, err, part)
			}
		}
		if d := time.Since(start); d < 190*time.Millisecond {
			t.Errorf("%s gave up after %v, before its timeout", what, d)
		}
	}
	start := time.Now()
	_, err := Open(path, Options{Transient: true, Timeout: 200 * time.Millisecond})
	wantLocked("Open", err, start)
	start = time.Now()
	wantLocked("Update", other.Update(func(*Tx) error { return nil }), start)
	start = time.Now()
	wantLocked("View", other.View(func(*Tx) error { return nil }), start)

	// A waiter with time to spare gets in once the holder is done.
	waited := make(chan error)
	var returned time.Time
	refused := closedAgain(t, path)
	go func() {
		db, err := Open(path, Options{Transient: true, Timeout: 10 * time.Second})
		if err == nil {
			err = db.View(func(tx *Tx) error {
				if r, _ := tx.Standing("held"); r == nil {
					return errors.New("the holder's record is not visible")
				}
				return nil
			})
		}
		returned = time.Now()
		waited <- err
	}()
	select { // the waiter has tried the lock and been refused
	case <-refused:
	case err := <-waited:
		t.Fatalf("the waiter's Open returned (%v) while the file was held", err)
	}
	released := time.Now()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("waiting Open: %v", err)
	}
	if returned.Before(released) {
		t.Errorf("waiting Open returned %v before the holder let go", released.Sub(returned))
	}
}

func TestService_HoldsTheFileAgainstTransientOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	_ = reopen(t, path, Options{})
	_, err := Open(path, Options{Transient: true, Timeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "the-loop stop") {
		t.Fatalf("Open while a service holds the file = %v", err)
	}
}

func TestListStanding_HeldStoreDecodesOncePerCommit(t *testing.T) {
	db := openTest(t, Options{})
	mustUpdate(t, db, func(tx *Tx) error { return tx.PutStanding(rec("alpha")) })
	list := func() []*loop.StandingRecord {
		t.Helper()
		var out []*loop.StandingRecord
		if err := db.View(func(tx *Tx) error {
			var err error
			out, err = tx.ListStanding()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := list()
	first[0].Status = "scribbled"
	first[0].HarnessArgs = append(first[0].HarnessArgs, "scribbled")
	if again := list(); again[0].Status == "scribbled" || slices.Contains(again[0].HarnessArgs, "scribbled") {
		t.Fatal("a caller's change reached the cache")
	}
	if db.standing.recs == nil {
		t.Fatal("a held store's read was not cached")
	}
	mustUpdate(t, db, func(tx *Tx) error {
		r := rec("alpha")
		r.Status = loop.StatusStopped
		if err := tx.PutStanding(r); err != nil {
			return err
		}
		// Inside a write, ListStanding reads the transaction's own state.
		all, err := tx.ListStanding()
		if err == nil && all[0].Status != loop.StatusStopped {
			t.Error("a write transaction read the cache")
		}
		return err
	})
	if got := list(); got[0].Status != loop.StatusStopped {
		t.Fatalf("after a commit: status %q", got[0].Status)
	}
}
