// Package store is the-loop's bbolt file: the only importer of bbolt. It
// opens the file with a bounded lock wait, migrates it, and gives the verbs
// one transaction at a time with typed helpers for every record it keeps.
//
// The file's buckets (names in buckets.go):
//
//	meta/
//	|--> schemaVersion -> uint64, big-endian (see migrations.go)
//	|--> eventCount    -> uint64, big-endian: keys in events/
//	|--> eventBytes    -> 2 × uint64, big-endian: bytes of events/ (keys and values), events/'s sequence then
//	standing/
//	|--> <name>        -> JSON loop.StandingRecord
//	sessions/
//	|--> <slug>        -> JSON loop.WorkItemRecord (work-item sessions)
//	events/               (sequence: bucket.NextSequence)
//	|--> <seq>         -> JSON envelope: ts, source, event, level, pid, fields…
//	channels/
//	|--> threads/
//	|    |--> <thread ts> -> JSON {workItem, channel, boundSeq}
//	|--> cursors/
//	|    |--> <thread ts> -> last processed reply ts
//	|--> pending/            (sequence: bucket.NextSequence; schema 2)
//	     |--> <seq>         -> JSON {thread, ts, ref, channel, author, text, queuedAt, attempts, error}
//	approvals/            (schema 3)
//	|--> <id>          -> JSON loop.Approval (a permission request and its decision)
//
// One Update is one bbolt write transaction: a record and the events that
// record its change land together or not at all (decisions D2, D5). Nothing
// read from a transaction aliases the file's memory map once it ends.
//
// A service opens the file once and holds it. A CLI opens it in transient
// mode (decisions D3): the file is opened around each transaction and
// closed right after, so concurrent CLI processes serialise on its lock and
// none holds it across a tmux, Slack or HTTP call.
package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	loop "github.com/the-loop-dev/the-loop"
)

// Defaults of Options.
const (
	DefaultTimeout   = 5 * time.Second
	DefaultMaxEvents = 100000
	DefaultMaxBytes  = 256 << 20
)

// Options tune Open.
type Options struct {
	// Timeout bounds the wait for the file's lock (each open in transient
	// mode). Zero means DefaultTimeout.
	Timeout time.Duration
	// Transient opens the file only around each Update and View (the CLI).
	Transient bool
	// MaxEvents is how many events the log keeps; the oldest are pruned as
	// it writes. Zero or less means DefaultMaxEvents.
	MaxEvents int
	// MaxBytes is how many bytes of events (keys and envelopes) the log
	// keeps; the oldest are pruned as it writes. Zero or less means
	// DefaultMaxBytes.
	MaxBytes int64
	// Committed, when set, hears the events each write transaction
	// appended, in order and with their Seq, once it has committed (never
	// for one rolled back): what the service's metrics count from. It runs
	// after the transaction, outside the file's lock, and must not block.
	Committed func(evs []loop.Event)
}

// DB is the-loop's store: one bbolt file.
type DB struct {
	path string
	opt  Options

	// mu guards bolt and closed against Close; in transient mode it also
	// serialises this handle's own transactions, so its goroutines queue
	// here rather than polling the file lock.
	mu     sync.RWMutex
	bolt   *bolt.DB // the open file; nil in transient mode
	closed bool

	// readOnly: every Update is refused and nothing is written
	// (OpenReadOnly); newer is why (the refusal of a newer store).
	readOnly bool
	newer    error

	// standing caches ListStanding's decoded records by the transaction id
	// of the commit they were read at (held mode only).
	standing standingCache

	// batch coalesces concurrent Batch calls, views concurrent Views in
	// transient mode (batch.go).
	batch, views batcher
}

// Tx is one transaction. It is valid only inside the function given to
// Update or View; nothing it returns refers to the file's memory.
type Tx struct {
	tx        *bolt.Tx
	maxEvents int
	maxBytes  int64
	db        *DB
	// appended are the events this transaction appended, kept only when
	// Options.Committed hears them.
	appended []loop.Event
}

// Open opens (creating it and its parent directories when missing) the
// store at path and migrates it to the current schema. In transient mode
// the file is closed again before Open returns.
func Open(path string, opt Options) (*DB, error) {
	if path == "" {
		return nil, loop.Internal("store: no database path given")
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.MaxEvents <= 0 {
		opt.MaxEvents = DefaultMaxEvents
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, loop.Internal("store: cannot create the directory %s for the database: %w", dir, err)
		}
	}
	db := &DB{path: path, opt: opt}
	bdb, err := db.openFile(false)
	if err != nil {
		return nil, err
	}
	// A file already at this schema is only read: an Update would commit
	// (and fsync) an empty transaction on every CLI call.
	current := false
	_ = bdb.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		current = meta != nil && int(getUint(meta, keySchemaVersion)) == SchemaVersion()
		return nil
	})
	if !current {
		if err := bdb.Update(func(tx *bolt.Tx) error { return migrate(tx, path, migrations) }); err != nil {
			_ = bdb.Close()
			var le *loop.Error
			if errors.As(err, &le) {
				return nil, err
			}
			return nil, loop.Internal("store: migrating %s: %w", path, err)
		}
	}
	if opt.Transient {
		if err := bdb.Close(); err != nil {
			return nil, loop.Internal("store: closing %s: %w", path, err)
		}
		return db, nil
	}
	db.bolt = bdb
	return db, nil
}

// OpenReadOnly opens an existing store only to read it, whatever schema
// version it has, never migrating or writing it: what `stop` does with a
// store a newer the-loop wrote, so it can stop the sessions
// it can decode. Every Update fails naming the file; Newer says why the
// store was opened so (nil when its schema is not newer).
func OpenReadOnly(path string, opt Options) (*DB, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.MaxEvents <= 0 {
		opt.MaxEvents = DefaultMaxEvents
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	opt.Transient = true
	if _, err := os.Stat(path); err != nil {
		return nil, loop.Internal("store: cannot open %s read-only: %w", path, err)
	}
	db := &DB{path: path, opt: opt, readOnly: true}
	bdb, err := db.openFile(true)
	if err != nil {
		return nil, err
	}
	_ = bdb.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(bucketMeta); meta != nil {
			if have := int(getUint(meta, keySchemaVersion)); have > SchemaVersion() {
				db.newer = newerStore(path, have, SchemaVersion())
			}
		}
		return nil
	})
	if err := bdb.Close(); err != nil {
		return nil, loop.Internal("store: closing %s: %w", path, err)
	}
	return db, nil
}

// ReadOnly reports whether the store was opened by OpenReadOnly.
func (db *DB) ReadOnly() bool { return db.readOnly }

// Newer is the refusal of a store a newer the-loop wrote, when OpenReadOnly
// opened one (nil otherwise).
func (db *DB) Newer() error { return db.newer }

// Path returns the file the store lives in.
func (db *DB) Path() string { return db.path }

// Close releases the file (a no-op for the file in transient mode, which is
// never held between transactions). Transactions after Close fail.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	if db.bolt == nil {
		return nil
	}
	err := db.bolt.Close()
	db.bolt = nil
	if err != nil {
		return loop.Internal("store: closing %s: %w", db.path, err)
	}
	return nil
}

// Update runs fn in one write transaction. If fn returns an error (or
// panics) nothing it wrote is kept, and its error is returned unchanged.
func (db *DB) Update(fn func(*Tx) error) error {
	return db.run(true, fn)
}

// View runs fn in a read-only transaction; in transient mode it may share
// the transaction (and the file's one open) with the Views of other
// goroutines at the same time, run one after another (batch.go).
func (db *DB) View(fn func(*Tx) error) error {
	if db.opt.Transient {
		return db.view(fn)
	}
	return db.run(false, fn)
}

// run runs fn in one transaction; then, once the lock is let go, a
// committed write's events go to Options.Committed.
func (db *DB) run(writable bool, fn func(*Tx) error) error {
	var appended []loop.Event
	err := db.runLocked(writable, fn, &appended)
	if err == nil && len(appended) > 0 && db.opt.Committed != nil {
		db.opt.Committed(appended)
	}
	return err
}

func (db *DB) runLocked(writable bool, fn func(*Tx) error, appended *[]loop.Event) error {
	if db.opt.Transient {
		// A transient handle's goroutines take turns at the file. A held
		// file needs no turns: bbolt runs one writer beside many readers.
		db.mu.Lock()
		defer db.mu.Unlock()
	} else {
		db.mu.RLock()
		defer db.mu.RUnlock()
	}
	if db.closed {
		return loop.Internal("store: %s is closed", db.path)
	}
	if db.readOnly && writable {
		return loop.Internal("store: %s is open read-only; nothing is written to it", db.path)
	}
	bdb := db.bolt
	if db.opt.Transient {
		var err error
		if bdb, err = db.openFile(!writable); err != nil {
			return err
		}
		defer func() { _ = bdb.Close() }()
	}
	var fnErr error
	wrap := func(tx *bolt.Tx) error {
		t := &Tx{tx: tx, maxEvents: db.opt.MaxEvents, maxBytes: db.opt.MaxBytes, db: db}
		fnErr = fn(t)
		*appended = t.appended
		return fnErr
	}
	var err error
	if writable {
		err = bdb.Update(wrap)
	} else {
		err = bdb.View(wrap)
	}
	if err != nil && fnErr == nil {
		return loop.Internal("store: transaction on %s: %w", db.path, err)
	}
	if err == nil && db.opt.Transient {
		// The transaction is committed; a failing close only loses the lock.
		if cerr := bdb.Close(); cerr != nil {
			return loop.Internal("store: closing %s: %w", db.path, cerr)
		}
	}
	return err
}

// Lock polling: bbolt polls every 50 ms, which starves a waiter behind a
// process that reopens at once. We try once per attempt and back off with
// jitter from lockRetryMin to lockRetryMax instead.
const (
	lockRetryMin = time.Millisecond
	lockRetryMax = 5 * time.Millisecond
)

// openFile opens the bbolt file, waiting at most opt.Timeout for its lock.
// A read-only open takes a shared lock, so readers do not exclude each
// other.
func (db *DB) openFile(readOnly bool) (*bolt.DB, error) {
	bopt := &bolt.Options{
		// Any non-zero timeout below bbolt's poll interval means one try.
		Timeout:  time.Nanosecond,
		ReadOnly: readOnly,
	}
	deadline := time.Now().Add(db.opt.Timeout)
	wait := lockRetryMin
	for {
		bdb, err := bolt.Open(db.path, 0o600, bopt)
		if err == nil {
			return bdb, nil
		}
		if !errors.Is(err, bolterrors.ErrTimeout) {
			return nil, loop.Internal("store: cannot open %s: %w", db.path, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, lockTimeout(db.path, db.opt.Timeout)
		}
		sleep := wait/2 + rand.N(wait/2+1)
		time.Sleep(min(sleep, left))
		wait = min(2*wait, lockRetryMax)
	}
}

func lockTimeout(path string, waited time.Duration) *loop.Error {
	return &loop.Error{
		Code: loop.EINTERNAL,
		Message: fmt.Sprintf("the store %s is locked: another the-loop process holds it (waited %s); "+
			"if a the-loop service is stuck, run `the-loop stop`", path, waited),
		Err: bolterrors.ErrTimeout,
	}
}
