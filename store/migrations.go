package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	loop "github.com/the-loop-dev/the-loop"
)

// migration moves the file from version-1 to version. Migrations run in
// order, all in the one transaction Open migrates in, and each is applied
// once: the schema version stored in meta says how far a file has come.
type migration struct {
	version int
	name    string
	apply   func(*bolt.Tx) error
}

// migrations is the schema's history, oldest first. Append; never edit a
// migration a released binary has run.
var migrations = []migration{
	{version: 1, name: "create the buckets", apply: createBuckets},
	{version: 2, name: "create channels/pending", apply: createPending},
	{version: 3, name: "create approvals", apply: createApprovals},
}

// SchemaVersion is the schema this build writes: the last migration's.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// createBuckets is migration 1: the bucket tree drawn in store.go.
func createBuckets(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketMeta, bucketStanding, bucketSessions, bucketEvents} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("bucket %s: %w", name, err)
		}
	}
	ch, err := tx.CreateBucketIfNotExists(bucketChannels)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", bucketChannels, err)
	}
	for _, name := range [][]byte{bucketThreads, bucketCursors} {
		if _, err := ch.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("bucket %s/%s: %w", bucketChannels, name, err)
		}
	}
	return putUint(tx.Bucket(bucketMeta), keyEventCount, uint64(countKeys(tx.Bucket(bucketEvents))))
}

// createPending is migration 2: channels/pending, the Slack replies kept
// for a session that could not take them yet.
func createPending(tx *bolt.Tx) error {
	if _, err := tx.Bucket(bucketChannels).CreateBucketIfNotExists(bucketPending); err != nil {
		return fmt.Errorf("bucket %s/%s: %w", bucketChannels, bucketPending, err)
	}
	return nil
}

// createApprovals is migration 3: approvals, the permission requests of
// the agents and their decisions (decisions D35).
func createApprovals(tx *bolt.Tx) error {
	if _, err := tx.CreateBucketIfNotExists(bucketApproval); err != nil {
		return fmt.Errorf("bucket %s: %w", bucketApproval, err)
	}
	return nil
}

// ErrNewerStore is wrapped by the refusal of a store a newer the-loop
// wrote: every verb refuses it but stop, which may OpenReadOnly it.
var ErrNewerStore = errors.New("the store was written by a newer the-loop")

// newerStore is the refusal of the store at path, at schema version have,
// by this build, which knows want.
func newerStore(path string, have, want int) *loop.Error {
	return &loop.Error{Code: loop.EINTERNAL, Err: ErrNewerStore, Message: fmt.Sprintf(
		"the store %s has schema version %d, newer than this the-loop knows (%d): "+
			"it was written by a newer the-loop; upgrade the-loop (downgrades are not supported)", path, have, want)}
}

// migrate brings the file at path to the last version of ms (migrations,
// in order), refusing a file a newer build has written.
func migrate(tx *bolt.Tx, path string, ms []migration) error {
	have := 0
	if meta := tx.Bucket(bucketMeta); meta != nil {
		have = int(getUint(meta, keySchemaVersion))
	}
	want := ms[len(ms)-1].version
	if have > want {
		return newerStore(path, have, want)
	}
	for _, m := range ms {
		if m.version <= have {
			continue
		}
		if err := m.apply(tx); err != nil {
			return loop.Internal("store: migration %d (%s) of %s failed: %w", m.version, m.name, path, err)
		}
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if err := putUint(meta, keySchemaVersion, uint64(m.version)); err != nil {
			return err
		}
	}
	return nil
}

// u64 encodes v as 8 big-endian bytes (event keys sort by sequence).
func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// getUint reads an 8-byte big-endian value; absent or malformed reads as 0.
func getUint(b *bolt.Bucket, key []byte) uint64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func putUint(b *bolt.Bucket, key []byte, v uint64) error {
	return b.Put(key, u64(v))
}

// countKeys counts b's keys with a cursor, which (unlike Stats) sees what
// the current write transaction has changed.
func countKeys(b *bolt.Bucket) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}
