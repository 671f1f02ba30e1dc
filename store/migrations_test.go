package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	loop "github.com/the-loop-dev/the-loop"
)

func TestMigrations_AreOrderedFromOne(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 || m.name == "" || m.apply == nil {
			t.Errorf("migration %d is %+v; versions must run 1, 2, 3… and each needs a name", i, m)
		}
	}
}

func TestOpen_FreshFileGetsTheCurrentVersionAndEveryBucket(t *testing.T) {
	db := openTest(t, Options{})
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		if v := getUint(tx.Bucket(bucketMeta), keySchemaVersion); v != uint64(SchemaVersion()) {
			t.Errorf("schemaVersion = %d, want %d", v, SchemaVersion())
		}
		for _, b := range [][]byte{bucketMeta, bucketStanding, bucketSessions, bucketEvents, bucketChannels} {
			if tx.Bucket(b) == nil {
				t.Errorf("no bucket %s", b)
			}
		}
		for _, b := range [][]byte{bucketThreads, bucketCursors, bucketPending} {
			if tx.Bucket(bucketChannels).Bucket(b) == nil {
				t.Errorf("no bucket channels/%s", b)
			}
		}
		return nil
	})
}

func TestOpen_RefusesAFileFromANewerVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	db := reopen(t, path, Options{})
	_ = db.bolt.Update(func(tx *bolt.Tx) error {
		return putUint(tx.Bucket(bucketMeta), keySchemaVersion, uint64(SchemaVersion()+1))
	})
	_ = db.Close()
	for _, transient := range []bool{false, true} {
		_, err := Open(path, Options{Transient: transient})
		if loop.ErrorCode(err) != loop.EINTERNAL || !strings.Contains(err.Error(), path) ||
			!strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), "downgrades are not supported") {
			t.Errorf("Open(transient=%v) of a newer file = %v", transient, err)
		}
	}
}

func TestMigrate_AppliesPendingMigrationsInOrderOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var ran []string
	step := func(name string) func(*bolt.Tx) error {
		return func(*bolt.Tx) error { ran = append(ran, name); return nil }
	}
	v1 := []migration{{1, "buckets", createBuckets}, {2, "two", step("two")}}
	v3 := append(v1, migration{3, "three", step("three")})
	for _, ms := range [][]migration{v1, v1, v3, v3} {
		if err := bdb.Update(func(tx *bolt.Tx) error { return migrate(tx, path, ms) }); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(ran, ",") != "two,three" {
		t.Errorf("ran %v, want two then three, once each", ran)
	}
	_ = bdb.View(func(tx *bolt.Tx) error {
		if v := getUint(tx.Bucket(bucketMeta), keySchemaVersion); v != 3 {
			t.Errorf("schemaVersion = %d, want 3", v)
		}
		return nil
	})
	// A failing migration leaves the file as it was: its transaction rolls back.
	bad := append(v3, migration{4, "four", func(tx *bolt.Tx) error {
		_ = tx.Bucket(bucketStanding).Put([]byte("x"), []byte("{}"))
		return bolterrors.ErrTxClosed
	}})
	err = bdb.Update(func(tx *bolt.Tx) error { return migrate(tx, path, bad) })
	if err == nil || !strings.Contains(err.Error(), "migration 4 (four)") {
		t.Errorf("failing migration: %v", err)
	}
	_ = bdb.View(func(tx *bolt.Tx) error {
		if v := getUint(tx.Bucket(bucketMeta), keySchemaVersion); v != 3 || tx.Bucket(bucketStanding).Get([]byte("x")) != nil {
			t.Errorf("a failed migration left version %d", v)
		}
		return nil
	})
}

// TestOpen_OfACurrentFileWritesNothing: a file already at this schema is
// only read on Open (every CLI call opens the store; an empty commit would
// fsync twice each time).
func TestOpen_OfACurrentFileWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	if _, err := Open(path, Options{Transient: true}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, transient := range []bool{true, false} {
		db, err := Open(path, Options{Transient: transient})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("Open(transient=%v) of a current file changed it", transient)
		}
	}
}

// A file at schema 1 gains channels/pending (migration 2) and approvals
// (migration 3) on Open, keeping what it holds.
func TestOpen_MigratesASchemaOneFileToThePendingAndApprovalBuckets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "the-loop.db")
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(tx *bolt.Tx) error {
		if err := migrate(tx, path, migrations[:1]); err != nil {
			return err
		}
		return tx.Bucket(bucketChannels).Bucket(bucketThreads).Put([]byte("1.1"), []byte(`{"workItem":"standing:a","boundSeq":1}`))
	}); err != nil {
		t.Fatal(err)
	}
	_ = bdb.Close()
	db := reopen(t, path, Options{})
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		if v := getUint(tx.Bucket(bucketMeta), keySchemaVersion); v != 3 {
			t.Errorf("schemaVersion = %d, want 3", v)
		}
		if tx.Bucket(bucketChannels).Bucket(bucketPending) == nil {
			t.Error("no bucket channels/pending")
		}
		if tx.Bucket(bucketApproval) == nil {
			t.Error("no bucket approvals")
		}
		return nil
	})
	if th, _, ok := threadFor(db, "standing:a"); !ok || th != "1.1" {
		t.Errorf("the binding did not survive the migration: %s %v", th, ok)
	}
}

func threadFor(db *DB, ref string) (th, ch string, ok bool) {
	_ = db.View(func(tx *Tx) error { th, ch, ok = tx.ThreadFor(ref); return nil })
	return
}
