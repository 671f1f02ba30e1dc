package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/store"
)

// A store a newer the-loop wrote is refused by every verb,
// naming the file and both versions — except stop, which stops what it can
// decode, writes nothing, and exits 1 naming both versions.
func TestNewerStore_RefusedButStopStops(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	e.must(0, "standing", "start", "supervisor")
	waitFor(t, "the agent", func() bool { return len(e.starts()) == 1 })
	path := filepath.Join(e.dir, ".the-loop", "the-loop.db")
	db, err := store.Open(path, store.Options{Transient: true})
	if err != nil {
		t.Fatal(err)
	}
	have, want := strconv.Itoa(store.SchemaVersion()+1), strconv.Itoa(store.SchemaVersion())
	if err := db.Update(func(tx *store.Tx) error { return tx.SetSchemaVersion(store.SchemaVersion() + 1) }); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	names := func(out string) bool {
		return strings.Contains(out, path) && strings.Contains(out, "schema version "+have) && strings.Contains(out, "("+want+")")
	}
	if r := e.run("standing", "list"); r.code == 0 || !names(r.stderr) {
		t.Fatalf("list of a newer store: %s", r)
	}
	r := e.must(1, "standing", "stop", "supervisor")
	if !names(r.stderr) || !strings.Contains(r.stdout+r.stderr, "stopped") || e.alive("loop-standing-supervisor") {
		t.Fatalf("standing stop of a newer store: %s", r)
	}
	if r := e.run("stop"); r.code != 1 || !names(r.stdout+r.stderr) {
		t.Fatalf("stop of a newer store: %s", r)
	}
	if r := e.run("standing", "start", "supervisor"); r.code == 0 || !names(r.stderr) || len(e.starts()) != 1 {
		t.Fatalf("start of a newer store: %s", r)
	}
}
