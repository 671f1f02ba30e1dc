package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

func TestStandingNames_ReadsRecordedNamesWithoutCreatingAStore(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "state", "the-loop.db")
	names, err := StandingNames(missing, 50*time.Millisecond)
	if err != nil || names != nil {
		t.Fatalf("missing store: %q, %v", names, err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Fatalf("a missing store's directory was created (stat: %v)", err)
	}

	path := filepath.Join(dir, "the-loop.db")
	db, err := Open(path, Options{Transient: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"zeta", "alpha", "mid"} {
		if err := db.Update(func(tx *Tx) error { return tx.PutStanding(&loop.StandingRecord{Name: n}) }); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.Stat(path)
	names, err = StandingNames(path, time.Second)
	if err != nil || !slices.Equal(names, []string{"alpha", "mid", "zeta"}) {
		t.Fatalf("names %q, %v", names, err)
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("reading the names changed the file")
	}
}

func TestStandingNames_GivesUpOnAHeldStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	held, err := Open(path, Options{}) // as the service holds it
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = StandingNames(path, 100*time.Millisecond)
	if !IsLocked(err) {
		t.Fatalf("err = %v, want a lock timeout", err)
	}
	// It gave up by itself (the store is still held), on the timeout it was
	// given, not the store's default.
	if !strings.Contains(err.Error(), "(waited 100ms)") {
		t.Errorf("err = %v, want it to name the 100ms timeout", err)
	}
}
