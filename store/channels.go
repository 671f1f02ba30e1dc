package store

import (
	"encoding/json"
	"sort"

	bolt "go.etcd.io/bbolt"

	loop "github.com/the-loop-dev/the-loop"
)

// MaxThreads is how many Slack thread bindings are kept; binding one more
// evicts the oldest, with its cursor (original §4.3).
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
// the oldest bindings are evicted with their cursors.
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
	if countKeys(b) <= MaxThreads {
		return nil
	}
	all, err := t.Threads()
	if err != nil {
		return err
	}
	for _, old := range all[:len(all)-MaxThreads] {
		if err := unbindImpl(t.tx, old.ThreadTS); err != nil {
			return err
		}
	}
	return nil
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

// Threads returns every binding, oldest first.
func (t *Tx) Threads() ([]ThreadBinding, error) {
	var out []ThreadBinding
	err := threadsBucket(t.tx).ForEach(func(k, v []byte) error {
		var tv threadValue
		if err := json.Unmarshal(v, &tv); err != nil {
			return loop.Internal("store: the Slack thread binding '%s' in %s is unreadable: %w", k, t.tx.DB().Path(), err)
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
