package store

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	loop "github.com/the-loop-dev/the-loop"
)

// Standing returns the standing record stored under name, or nil and no
// error when there is none. A stored record that does not decode, or whose
// name is not its key, is an error naming the key.
func (t *Tx) Standing(name string) (*loop.StandingRecord, error) {
	return getStandingImpl(t.tx, name)
}

// PutStanding stores rec under its name, refusing a name outside
// loop.NameRE. Its TmuxTarget is always derived from the name (and set on
// rec too).
func (t *Tx) PutStanding(rec *loop.StandingRecord) error {
	return putStandingImpl(t.tx, rec)
}

// DeleteStanding removes the standing record of name and reports whether
// there was one.
func (t *Tx) DeleteStanding(name string) (bool, error) {
	return deleteImpl(t.tx.Bucket(bucketStanding), name)
}

// ListStanding returns every standing record, sorted by name; a record
// that does not decode is listed as one with status broken, its Broken
// naming the key and the fault. On a held
// (non-transient) store, a read-only transaction reuses the records decoded
// at the same commit (bbolt's transaction id names the committed state), so
// repeated reads between writes decode nothing; each call gets its own
// copies.
func (t *Tx) ListStanding() ([]*loop.StandingRecord, error) {
	if t.db == nil || t.db.opt.Transient || t.tx.Writable() {
		return t.listStanding()
	}
	c := &t.db.standing
	id := t.tx.ID()
	c.mu.Lock()
	recs, ok := c.recs, c.ok && c.txid == id
	c.mu.Unlock()
	if !ok {
		var err error
		if recs, err = t.listStanding(); err != nil {
			return nil, err
		}
		c.mu.Lock()
		if !c.ok || id >= c.txid {
			c.txid, c.recs, c.ok = id, recs, true
		}
		c.mu.Unlock()
	}
	out := make([]*loop.StandingRecord, len(recs))
	for i, r := range recs {
		out[i] = copyStanding(r)
	}
	return out, nil
}

// standingCache is ListStanding's cache (see DB.standing).
type standingCache struct {
	mu   sync.Mutex
	ok   bool
	txid int
	recs []*loop.StandingRecord // never handed out: callers get copies
}

// copyStanding is a deep copy of a record.
func copyStanding(r *loop.StandingRecord) *loop.StandingRecord {
	c := *r
	c.HarnessArgs = slices.Clone(r.HarnessArgs)
	if r.Claim != nil {
		cl := *r.Claim
		c.Claim = &cl
	}
	c.Answers = slices.Clone(r.Answers)
	if r.Tokens != nil {
		tk := *r.Tokens
		c.Tokens = &tk
	}
	return &c
}

func (t *Tx) listStanding() ([]*loop.StandingRecord, error) {
	var out []*loop.StandingRecord
	err := t.tx.Bucket(bucketStanding).ForEach(func(k, v []byte) error {
		rec, err := decodeStanding(t.tx, string(k), v)
		if err != nil { // one bad record never hides the others
			rec = &loop.StandingRecord{Name: string(k), Status: loop.StatusBroken, Broken: loop.ErrorMessage(err)}
		}
		out = append(out, rec)
		return nil
	})
	return out, err
}

func getStandingImpl(tx *bolt.Tx, name string) (*loop.StandingRecord, error) {
	v := tx.Bucket(bucketStanding).Get([]byte(name))
	if v == nil {
		return nil, nil
	}
	return decodeStanding(tx, name, v)
}

func putStandingImpl(tx *bolt.Tx, rec *loop.StandingRecord) error {
	if rec == nil {
		return loop.Internal("store: no standing record to write")
	}
	if !loop.ValidName(rec.Name) {
		return loop.Invalid("invalid standing-session name '%s' (expected %s)", rec.Name, loop.NameRE)
	}
	rec.TmuxTarget = loop.TmuxTargetFor(rec.Name)
	v, err := json.Marshal(rec)
	if err != nil {
		return loop.Internal("store: encoding the standing record '%s': %w", rec.Name, err)
	}
	return tx.Bucket(bucketStanding).Put([]byte(rec.Name), v)
}

// decodeStanding decodes a stored record (json.Unmarshal copies, so the
// result does not alias the memory map). The tmux target is re-derived.
func decodeStanding(tx *bolt.Tx, key string, v []byte) (*loop.StandingRecord, error) {
	var rec loop.StandingRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, loop.Internal("store: the standing record '%s' in %s is unreadable: %w", key, tx.DB().Path(), err)
	}
	if rec.Name != key || !loop.ValidName(rec.Name) {
		return nil, loop.Internal("store: the standing record '%s' in %s is unreadable: it names '%s'",
			key, tx.DB().Path(), rec.Name)
	}
	rec.TmuxTarget = loop.TmuxTargetFor(rec.Name)
	return &rec, nil
}

// sessionKeyRE is the grammar of a work-item session's key: the ref's slug
// (original §10.1).
var sessionKeyRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func checkSessionKey(key string) error {
	if !sessionKeyRE.MatchString(key) || key == "." || key == ".." {
		return loop.Invalid("invalid work-item session key '%s' (expected the ref's slug, %s)", key, sessionKeyRE)
	}
	return nil
}

// WorkItem returns the work-item session stored under key (the ref's slug),
// or nil and no error when there is none.
func (t *Tx) WorkItem(key string) (*loop.WorkItemRecord, error) {
	v := t.tx.Bucket(bucketSessions).Get([]byte(key))
	if v == nil {
		return nil, nil
	}
	return decodeSession(t.tx, key, v)
}

// PutWorkItem stores rec under key (the ref's slug).
func (t *Tx) PutWorkItem(key string, rec *loop.WorkItemRecord) error {
	return putSessionImpl(t.tx, key, rec)
}

// DeleteWorkItem removes the work-item session under key and reports
// whether there was one.
func (t *Tx) DeleteWorkItem(key string) (bool, error) {
	return deleteImpl(t.tx.Bucket(bucketSessions), key)
}

// ListWorkItems returns every work-item session, sorted by key; one that
// does not decode is listed with status broken, its ref the key and its
// Broken naming the fault.
func (t *Tx) ListWorkItems() ([]*loop.WorkItemRecord, error) {
	var out []*loop.WorkItemRecord
	err := t.tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
		rec, err := decodeSession(t.tx, string(k), v)
		if err != nil { // one bad record never hides the others
			rec = &loop.WorkItemRecord{WorkItem: loop.WorkItemInfo{Ref: string(k)}, Status: loop.SessionBroken, Broken: loop.ErrorMessage(err)}
		}
		out = append(out, rec)
		return nil
	})
	return out, err
}

func putSessionImpl(tx *bolt.Tx, key string, rec *loop.WorkItemRecord) error {
	if err := checkSessionKey(key); err != nil {
		return err
	}
	if rec == nil {
		return loop.Internal("store: no work-item session to write under '%s'", key)
	}
	v, err := json.Marshal(rec)
	if err != nil {
		return loop.Internal("store: encoding the work-item session '%s': %w", key, err)
	}
	return tx.Bucket(bucketSessions).Put([]byte(key), v)
}

func decodeSession(tx *bolt.Tx, key string, v []byte) (*loop.WorkItemRecord, error) {
	var rec loop.WorkItemRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, loop.Internal("store: the work-item session '%s' in %s is unreadable: %w", key, tx.DB().Path(), err)
	}
	// RawMessage copies on unmarshal; clone anyway so a later change of
	// encoding/json cannot make it alias the map.
	rec.PullRequests = bytes.Clone(rec.PullRequests)
	return &rec, nil
}

// deleteImpl removes key from b and reports whether it was there.
func deleteImpl(b *bolt.Bucket, key string) (bool, error) {
	k := []byte(key)
	if b.Get(k) == nil {
		return false, nil
	}
	if err := b.Delete(k); err != nil {
		return false, loop.Internal("store: deleting '%s': %w", key, err)
	}
	return true, nil
}

// PutRaw writes v verbatim, unchecked, under key in one of the record
// buckets ("standing", "sessions", "threads", "meta"): for tests of how
// the verbs bear a record that does not decode, or a store a newer version
// wrote. Nothing in the-loop itself calls it.
func (t *Tx) PutRaw(bucket, key string, v []byte) error {
	var b *bolt.Bucket
	switch bucket {
	case "standing":
		b = t.tx.Bucket(bucketStanding)
	case "sessions":
		b = t.tx.Bucket(bucketSessions)
	case "threads":
		b = threadsBucket(t.tx)
	case "meta":
		b = t.tx.Bucket(bucketMeta)
	default:
		return loop.Invalid("store: no bucket '%s' to write raw into (one of standing, sessions, threads, meta)", bucket)
	}
	return b.Put([]byte(key), v)
}

// SetSchemaVersion stores v as the file's schema version: for tests of a
// store a newer the-loop wrote.
func (t *Tx) SetSchemaVersion(v int) error {
	return putUint(t.tx.Bucket(bucketMeta), keySchemaVersion, uint64(v))
}
