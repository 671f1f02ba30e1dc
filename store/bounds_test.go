package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	loop "github.com/the-loop-dev/the-loop"
)

var truncatedRE = regexp.MustCompile(`… \[truncated (\d+) bytes\]$`)

// storedBytes sums the events bucket's keys and values as the file holds
// them.
func storedBytes(t *testing.T, db *DB) (n int, total uint64) {
	t.Helper()
	mustView(t, db, func(tx *Tx) error {
		c := tx.tx.Bucket(bucketEvents).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			n++
			total += uint64(len(k) + len(v))
		}
		return nil
	})
	return n, total
}

func mustView(t *testing.T, db *DB, fn func(*Tx) error) {
	t.Helper()
	if err := db.View(fn); err != nil {
		t.Fatal(err)
	}
}

func TestAppendEvent_CutsAFieldAt64KiBAndSaysHowMuch(t *testing.T) {
	db := openTest(t, Options{})
	long := strings.Repeat("é", 1<<19) // 1 MiB of two-byte runes: a cut in the middle of one must step back
	list := make([]string, 10000)
	for i := range list {
		list[i] = strings.Repeat("x", 20)
	}
	fields := []loop.Field{loop.F("message", long), loop.F("short", "kept as is"), loop.F("list", list), loop.F("n", 7)}
	ev := &loop.Event{TS: t0, Event: "hook.attention", Fields: fields}
	appendEvents(t, db, ev)

	if fields[0].Value != long {
		t.Fatal("the caller's fields were written")
	}
	evs, err := query(t, db, EventQuery{})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v %v", evs, err)
	}
	got := evs[0]
	msg, _ := got.Field("message").(string)
	m := truncatedRE.FindStringSubmatch(msg)
	if m == nil || len(msg) > MaxEventField || !utf8.ValidString(msg) {
		t.Fatalf("message: %d bytes, valid UTF-8 %v, ends %q", len(msg), utf8.ValidString(msg), msg[max(0, len(msg)-40):])
	}
	kept := strings.TrimSuffix(msg, m[0])
	if cut, _ := strconv.Atoi(m[1]); cut != len(long)-len(kept) || !strings.HasPrefix(long, kept) || len(kept) < MaxEventField-64 {
		t.Errorf("kept %d bytes and says %s cut, of %d", len(kept), m[1], len(long))
	}
	if got.Field("short") != "kept as is" || fmt.Sprint(got.Field("n")) != "7" {
		t.Errorf("short fields changed: %v", got.Fields)
	}
	enc, _ := json.Marshal(list)
	ls, _ := got.Field("list").(string)
	if m := truncatedRE.FindStringSubmatch(ls); m == nil || len(ls) > MaxEventField || !strings.HasPrefix(string(enc), strings.TrimSuffix(ls, m[0])) {
		t.Errorf("list: %d bytes, ends %q", len(ls), ls[max(0, len(ls)-40):])
	}
	// What the committed hook hears is what was stored.
	if m, _ := ev.Field("message").(string); m != msg {
		t.Error("the appended event does not carry the cut field")
	}
}

// TestAppendEvent_KeepsTheLogUnderMaxBytes: a hundred 1 MB messages (what
// a flood of Notification hooks writes) leave at most MaxBytes of events,
// the newest kept, and the file stays near that size.
func TestAppendEvent_KeepsTheLogUnderMaxBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	const maxBytes = 512 << 10
	db := reopen(t, path, Options{MaxBytes: maxBytes})
	msg := strings.Repeat("m", 1<<20)
	var last uint64
	for i := range 100 {
		ev := &loop.Event{TS: t0, Event: "hook.attention", Fields: []loop.Field{loop.F("standing", "a"), loop.F("message", msg), loop.F("i", i)}}
		appendEvents(t, db, ev)
		last = ev.Seq
	}
	n, total := storedBytes(t, db)
	if total > maxBytes || n < 2 {
		t.Fatalf("the log keeps %d events, %d bytes; want at most %d bytes, more than one event", n, total, maxBytes)
	}
	evs, _ := query(t, db, EventQuery{Limit: 1})
	if len(evs) != 1 || evs[0].Seq != last {
		t.Errorf("the newest event is not kept: %v", evs)
	}
	mustView(t, db, func(tx *Tx) error {
		meta := tx.tx.Bucket(bucketMeta)
		v := meta.Get(keyEventBytes)
		if len(v) != 16 || binary.BigEndian.Uint64(v) != total || binary.BigEndian.Uint64(v[8:]) != last {
			t.Errorf("eventBytes = %x, the bucket holds %d bytes up to seq %d", v, total, last)
		}
		if got := getUint(meta, keyEventCount); got != uint64(n) {
			t.Errorf("eventCount = %d, the bucket holds %d", got, n)
		}
		return nil
	})
	_ = db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 8*maxBytes {
		t.Errorf("the file is %d bytes, want at most %d", fi.Size(), 8*maxBytes)
	}
}

// TestAppendEvent_RecountsATotalAnotherBuildLeftBehind: a build that
// appends without counting bytes leaves the total stale; the next append
// counts again and prunes to the bound.
func TestAppendEvent_RecountsATotalAnotherBuildLeftBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	db := reopen(t, path, Options{})
	appendEvents(t, db, &loop.Event{TS: t0, Event: "first"})
	_ = db.Close()

	// An older build: the event and its count, no byte total.
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("o", 200<<10)
	if err := bdb.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEvents)
		for range 3 {
			seq, _ := b.NextSequence()
			v, _ := json.Marshal(loop.Event{TS: t0, Event: "old", Fields: []loop.Field{loop.F("blob", big)}})
			if err := b.Put(u64(seq), v); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		return putUint(meta, keyEventCount, getUint(meta, keyEventCount)+3)
	}); err != nil {
		t.Fatal(err)
	}
	_ = bdb.Close()

	db = reopen(t, path, Options{MaxBytes: 300 << 10})
	appendEvents(t, db, &loop.Event{TS: t0, Event: "new"})
	if _, total := storedBytes(t, db); total > 300<<10 {
		t.Errorf("the log holds %d bytes after the append, want at most %d", total, 300<<10)
	}
	evs, _ := query(t, db, EventQuery{})
	if s := seqs(evs); s != "4,5" {
		t.Errorf("kept %s, want 4,5 (the newest old event and the new one)", s)
	}
}
