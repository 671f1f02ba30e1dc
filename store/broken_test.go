package store

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// One record or binding that does not decode is listed as
// broken (its key named) and never hides the others.
func TestList_BrokenRecordIsARowNotAFailure(t *testing.T) {
	for _, transient := range []bool{false, true} {
		db, err := Open(filepath.Join(t.TempDir(), "the-loop.db"), Options{Transient: transient})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(tx *Tx) error {
			if err := tx.PutStanding(&loop.StandingRecord{Name: "good", Status: loop.StatusRunning}); err != nil {
				return err
			}
			if err := tx.PutWorkItem("github-o-r-1", &loop.WorkItemRecord{WorkItem: loop.WorkItemInfo{Ref: "github:o/r#1"}, Status: loop.SessionActive}); err != nil {
				return err
			}
			if err := tx.BindThread("1.0", "standing:good", "C1"); err != nil {
				return err
			}
			for _, b := range []string{"standing", "sessions", "threads"} {
				if err := tx.PutRaw(b, "bad", []byte("{not json")); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		_ = db.View(func(tx *Tx) error {
			recs, err := tx.ListStanding()
			if err != nil || len(recs) != 2 || recs[0].Name != "bad" || recs[0].Status != loop.StatusBroken ||
				!strings.Contains(recs[0].Broken, "'bad'") || recs[1].Name != "good" || recs[1].Status != loop.StatusRunning {
				t.Errorf("ListStanding = %+v, %v", recs, err)
			}
			items, err := tx.ListWorkItems()
			if err != nil || len(items) != 2 || items[0].Status != loop.SessionBroken || items[0].WorkItem.Ref != "bad" ||
				!strings.Contains(items[0].Broken, "'bad'") || items[1].Status != loop.SessionActive {
				t.Errorf("ListWorkItems = %+v, %v", items, err)
			}
			threads, err := tx.Threads()
			if err != nil || len(threads) != 1 || threads[0].ThreadTS != "1.0" {
				t.Errorf("Threads = %+v, %v", threads, err)
			}
			return nil
		})
		_ = db.Close()
	}
}

// A store a newer the-loop wrote opens read-only for stop:
// it reads, refuses every write and names both versions.
func TestOpenReadOnly_NewerStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	db, err := Open(path, Options{Transient: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *Tx) error {
		if err := tx.PutStanding(&loop.StandingRecord{Name: "sup", Status: loop.StatusRunning}); err != nil {
			return err
		}
		return tx.SetSchemaVersion(SchemaVersion() + 1)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{Transient: true}); err == nil {
		t.Fatal("a newer store opened for writing")
	}
	ro, err := OpenReadOnly(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{path, "schema version " + strconv.Itoa(SchemaVersion()+1), "(" + strconv.Itoa(SchemaVersion()) + ")"}
	for _, w := range want {
		if ro.Newer() == nil || !strings.Contains(ro.Newer().Error(), w) {
			t.Fatalf("Newer() = %v, want it to name %q", ro.Newer(), w)
		}
	}
	var n int
	if err := ro.View(func(tx *Tx) error {
		recs, err := tx.ListStanding()
		n = len(recs)
		return err
	}); err != nil || n != 1 {
		t.Fatalf("read %d records: %v", n, err)
	}
	if err := ro.Update(func(tx *Tx) error { return nil }); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("Update on a read-only store = %v", err)
	}
}
