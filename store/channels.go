package store

import (
	"encoding/binary"
	"encoding/json"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	loop "github.com/the-loop-dev/the-loop"
)

// MaxThreads is how many Slack thread bindings are kept (original §4.3).
// Binding one more evicts, with their cursors, the tombstones first, then
// the bindings of closed or absent sessions, oldest first; a live
// session's binding is never evicted, so the bindings outgrow the cap only
// while more than MaxThreads sessions live.
const MaxThreads = 200

// ThreadBinding is a Slack thread bound to a work item (Ref is its ref) or
// a standing session (Ref "standing:<name>"); Ref is "" for a thread whose
// session was deleted (a tombstone, see UnbindRef).
type ThreadBinding struct {
	ThreadTS string
	Ref      string
	Channel  string
	// BoundSeq orders bindings: the newest binding has the highest.
	BoundSeq uint64
}

// threadValue is a binding as stored under its thread ts. Its key stays
// "workItem" (what stores written before the field was named Ref hold),
// though it names standing sessions too.
type threadValue struct {
	Ref      string `json:"workItem"`
	Channel  string `json:"channel"`
	BoundSeq uint64 `json:"boundSeq"`
}

func threadsBucket(tx *bolt.Tx) *bolt.Bucket {
	return tx.Bucket(bucketChannels).Bucket(bucketThreads)
}

func cursorsBucket(tx *bolt.Tx) *bolt.Bucket {
	return tx.Bucket(bucketChannels).Bucket(bucketCursors)
}

// BindThread binds threadTS in channel to ref as the newest binding (a
// re-bound thread moves to newest and keeps its cursor). Past MaxThreads
// bindings are evicted with their cursors (see MaxThreads): tombstones
// first, then the bindings of closed or absent sessions, each oldest
// first; never a live session's, nor the one just bound.
func (t *Tx) BindThread(threadTS, ref, channel string) error {
	if threadTS == "" || ref == "" {
		return loop.Invalid("cannot bind Slack thread '%s' to work item '%s': both are required", threadTS, ref)
	}
	b := threadsBucket(t.tx)
	seq, err := b.NextSequence()
	if err != nil {
		return loop.Internal("store: binding Slack thread '%s': %w", threadTS, err)
	}
	v, err := json.Marshal(threadValue{Ref: ref, Channel: channel, BoundSeq: seq})
	if err != nil {
		return loop.Internal("store: encoding Slack thread '%s': %w", threadTS, err)
	}
	if err := b.Put([]byte(threadTS), v); err != nil {
		return loop.Internal("store: binding Slack thread '%s': %w", threadTS, err)
	}
	excess := countKeys(b) - MaxThreads
	if excess <= 0 {
		return nil
	}
	all, err := t.Threads()
	if err != nil {
		return err
	}
	var tombs, ended []string
	for _, old := range all { // oldest first
		switch {
		case old.ThreadTS == threadTS:
		case old.Ref == "":
			tombs = append(tombs, old.ThreadTS)
		case !t.refLive(old.Ref):
			ended = append(ended, old.ThreadTS)
		}
	}
	for _, ts := range append(tombs, ended...) {
		if excess == 0 {
			break
		}
		if err := unbindImpl(t.tx, ts); err != nil {
			return err
		}
		excess--
	}
	return nil
}

// refLive reports whether ref names a session whose binding must be kept:
// a standing session with a record that is not absent, or a work item
// whose session is not closed. A record that cannot be read counts as
// live (nothing is evicted on a guess).
func (t *Tx) refLive(ref string) bool {
	if name, standing := loop.ParseStandingRef(ref); standing {
		rec, err := t.Standing(name)
		return err != nil || (rec != nil && rec.Status != loop.StatusAbsent)
	}
	item, err := loop.ParseWorkItemRef(ref)
	if err != nil {
		return false
	}
	rec, err := t.WorkItem(item.Slug())
	return err != nil || (rec != nil && rec.Status != loop.SessionClosed)
}

// ThreadFor returns the newest thread bound to ref and its channel.
func (t *Tx) ThreadFor(ref string) (threadTS, channel string, ok bool) {
	var best uint64
	_ = threadsBucket(t.tx).ForEach(func(k, v []byte) error {
		var tv threadValue
		if json.Unmarshal(v, &tv) != nil || tv.Ref == "" || tv.Ref != ref {
			return nil
		}
		if !ok || tv.BoundSeq > best {
			threadTS, channel, best, ok = string(k), tv.Channel, tv.BoundSeq, true
		}
		return nil
	})
	return threadTS, channel, ok
}

// Threads returns every binding, oldest first, leaving out one that does
// not decode.
func (t *Tx) Threads() ([]ThreadBinding, error) {
	var out []ThreadBinding
	err := threadsBucket(t.tx).ForEach(func(k, v []byte) error {
		var tv threadValue
		if err := json.Unmarshal(v, &tv); err != nil {
			// One bad binding never stops the others' polling;
			// Binding does not find it either.
			return nil
		}
		out = append(out, ThreadBinding{ThreadTS: string(k), Ref: tv.Ref, Channel: tv.Channel, BoundSeq: tv.BoundSeq})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].BoundSeq < out[j].BoundSeq })
	return out, err
}

// UnbindRef unbinds every thread bound to ref (decisions D17: a re-created
// name gets a new thread) and says how many there were. Each binding stays
// as a tombstone — its thread and cursor, with no work item — so later
// replies there are still read once and dropped as unmapped rather than
// silently ignored; tombstones age out with MaxThreads like any binding.
func (t *Tx) UnbindRef(ref string) (int, error) {
	b := threadsBucket(t.tx)
	var gone [][2][]byte
	_ = b.ForEach(func(k, v []byte) error {
		var tv threadValue
		if json.Unmarshal(v, &tv) == nil && tv.Ref == ref {
			tv.Ref = ""
			nv, err := json.Marshal(tv)
			if err != nil {
				return err
			}
			gone = append(gone, [2][]byte{append([]byte(nil), k...), nv})
		}
		return nil
	})
	for _, kv := range gone {
		if err := b.Put(kv[0], kv[1]); err != nil {
			return 0, loop.Internal("store: unbinding Slack thread '%s': %w", kv[0], err)
		}
	}
	return len(gone), nil
}

func unbindImpl(tx *bolt.Tx, threadTS string) error {
	if err := threadsBucket(tx).Delete([]byte(threadTS)); err != nil {
		return loop.Internal("store: unbinding Slack thread '%s': %w", threadTS, err)
	}
	if err := cursorsBucket(tx).Delete([]byte(threadTS)); err != nil {
		return loop.Internal("store: dropping the cursor of Slack thread '%s': %w", threadTS, err)
	}
	return nil
}

// Cursor returns the ts of the last reply processed in threadTS; the thread
// ts itself when none has been.
func (t *Tx) Cursor(threadTS string) string {
	if v := cursorsBucket(t.tx).Get([]byte(threadTS)); len(v) > 0 {
		return string(v) // string() copies
	}
	return threadTS
}

// Advance records ts as processed in threadTS. A cursor never moves
// backwards, and a thread that is not bound keeps none (its cursor went
// with its binding).
func (t *Tx) Advance(threadTS, ts string) error {
	if threadsBucket(t.tx).Get([]byte(threadTS)) == nil {
		return nil
	}
	if loop.CompareTS(ts, t.Cursor(threadTS)) <= 0 {
		return nil
	}
	if err := cursorsBucket(t.tx).Put([]byte(threadTS), []byte(ts)); err != nil {
		return loop.Internal("store: advancing the cursor of Slack thread '%s': %w", threadTS, err)
	}
	return nil
}

// Bounds of the replies kept for a session that cannot take them yet.
const (
	// MaxPendingPerThread is how many replies one thread keeps waiting.
	MaxPendingPerThread = loop.MaxPendingPerThread
	// MaxPending is how many replies wait across every thread.
	MaxPending = loop.MaxPending
)

// PendingReply is a kept Slack reply (the domain's type).
type PendingReply = loop.PendingReply

// pendingValue is a PendingReply as stored under its sequence.
type pendingValue struct {
	Thread   string    `json:"thread"`
	TS       string    `json:"ts"`
	Ref      string    `json:"ref"`
	Channel  string    `json:"channel,omitempty"`
	Author   string    `json:"author"`
	Text     string    `json:"text"`
	QueuedAt time.Time `json:"queuedAt"`
	Attempts int       `json:"attempts,omitempty"`
	Error    string    `json:"error,omitempty"`
}

func pendingBucket(tx *bolt.Tx) *bolt.Bucket {
	return tx.Bucket(bucketChannels).Bucket(bucketPending)
}

// QueueReply keeps pr for a later delivery and reports whether it did. A
// reply with no Seq is new: it gets the next sequence (behind every reply
// kept), unless its thread already keeps MaxPendingPerThread or the store
// MaxPending, when nothing is written and kept is false. A reply with a
// Seq (taken by TakeReply and not delivered) goes back in its place.
func (t *Tx) QueueReply(pr *PendingReply) (kept bool, err error) {
	b := pendingBucket(t.tx)
	if pr.Seq == 0 {
		all, err := t.PendingReplies()
		if err != nil {
			return false, err
		}
		inThread := 0
		for _, p := range all {
			if p.Thread == pr.Thread {
				inThread++
			}
		}
		if inThread >= MaxPendingPerThread || len(all) >= MaxPending {
			return false, nil
		}
		if pr.Seq, err = b.NextSequence(); err != nil {
			return false, loop.Internal("store: keeping Slack reply %s of thread %s: %w", pr.TS, pr.Thread, err)
		}
	}
	v, err := json.Marshal(pendingValue{Thread: pr.Thread, TS: pr.TS, Ref: pr.Ref, Channel: pr.Channel, Author: pr.Author,
		Text: pr.Text, QueuedAt: pr.QueuedAt, Attempts: pr.Attempts, Error: pr.Error})
	if err != nil {
		return false, loop.Internal("store: encoding Slack reply %s of thread %s: %w", pr.TS, pr.Thread, err)
	}
	if err := b.Put(u64(pr.Seq), v); err != nil {
		return false, loop.Internal("store: keeping Slack reply %s of thread %s: %w", pr.TS, pr.Thread, err)
	}
	return true, nil
}

// PendingReplies returns every reply kept, oldest first. One that cannot
// be decoded is an error naming its key.
func (t *Tx) PendingReplies() ([]PendingReply, error) {
	var out []PendingReply
	err := pendingBucket(t.tx).ForEach(func(k, v []byte) error {
		pr, err := decodePending(t.tx, k, v)
		if err != nil {
			return err
		}
		out = append(out, pr)
		return nil
	})
	return out, err
}

// Waiting is how many replies thread keeps.
func (t *Tx) Waiting(thread string) (int, error) {
	all, err := t.PendingReplies()
	n := 0
	for _, p := range all {
		if p.Thread == thread {
			n++
		}
	}
	return n, err
}

// TakeReply removes the reply kept under seq and returns it; nil when
// there is none (another cycle took it). Removing it before anything is
// pasted is what keeps a delivery at most once.
func (t *Tx) TakeReply(seq uint64) (*PendingReply, error) {
	b := pendingBucket(t.tx)
	k := u64(seq)
	v := b.Get(k)
	if v == nil {
		return nil, nil
	}
	pr, err := decodePending(t.tx, k, v)
	if err != nil {
		return nil, err
	}
	if err := b.Delete(k); err != nil {
		return nil, loop.Internal("store: removing kept Slack reply %d: %w", seq, err)
	}
	return &pr, nil
}

func decodePending(tx *bolt.Tx, k, v []byte) (PendingReply, error) {
	var pv pendingValue
	if len(k) != 8 {
		return PendingReply{}, loop.Internal("store: the kept Slack reply under key %x in %s has a malformed key", k, tx.DB().Path())
	}
	seq := binary.BigEndian.Uint64(k)
	if err := json.Unmarshal(v, &pv); err != nil {
		return PendingReply{}, loop.Internal("store: the kept Slack reply %d in %s is unreadable: %w", seq, tx.DB().Path(), err)
	}
	return PendingReply{Seq: seq, Thread: pv.Thread, TS: pv.TS, Ref: pv.Ref, Channel: pv.Channel, Author: pv.Author,
		Text: pv.Text, QueuedAt: pv.QueuedAt, Attempts: pv.Attempts, Error: pv.Error}, nil
}

// Binding returns threadTS's binding (ok false when it is not bound; a
// tombstone is bound, with WorkItem "").
func (t *Tx) Binding(threadTS string) (ThreadBinding, bool) {
	v := threadsBucket(t.tx).Get([]byte(threadTS))
	var tv threadValue
	if v == nil || json.Unmarshal(v, &tv) != nil {
		return ThreadBinding{}, false
	}
	return ThreadBinding{ThreadTS: threadTS, Ref: tv.Ref, Channel: tv.Channel, BoundSeq: tv.BoundSeq}, true
}
