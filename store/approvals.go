package store

import (
	"encoding/json"
	"sort"

	bolt "go.etcd.io/bbolt"

	loop "github.com/the-loop-dev/the-loop"
)

// MaxKeptApprovals bounds the approvals bucket: past it the oldest
// decided ones go (a pending one is never dropped).
const MaxKeptApprovals = 1000

// approvalsBucket is approvals/, created by migration 3. A store opened
// read-only at an older schema has none: every read then finds nothing.
func approvalsBucket(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket(bucketApproval) }

// Approval returns the approval stored under id, or nil and no error when
// there is none. One that does not decode is an EINTERNAL error naming
// its key.
func (t *Tx) Approval(id string) (*loop.Approval, error) {
	b := approvalsBucket(t.tx)
	if b == nil {
		return nil, nil
	}
	v := b.Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	return decodeApproval(id, v)
}

// PutApproval stores a under its id, dropping the oldest decided
// approvals past MaxKeptApprovals.
func (t *Tx) PutApproval(a *loop.Approval) error {
	b := approvalsBucket(t.tx)
	if b == nil {
		return loop.Internal("the store has no approvals bucket (an older schema opened read-only); open it writable to migrate it")
	}
	if a == nil || a.ID == "" {
		return loop.Internal("store: an approval to write has no id")
	}
	data, err := json.Marshal(a)
	if err != nil {
		return loop.Internal("encoding approval %s: %v", a.ID, err)
	}
	if err := b.Put([]byte(a.ID), data); err != nil {
		return loop.Internal("writing approval %s: %v", a.ID, err)
	}
	if b.Stats().KeyN > MaxKeptApprovals {
		return t.pruneApprovals(b)
	}
	return nil
}

// pruneApprovals drops the oldest decided approvals until at most
// MaxKeptApprovals are kept.
func (t *Tx) pruneApprovals(b *bolt.Bucket) error {
	all, err := t.ListApprovals("")
	if err != nil {
		return err
	}
	extra := len(all) - MaxKeptApprovals
	for i := len(all) - 1; i >= 0 && extra > 0; i-- { // oldest last
		if all[i].Status == loop.ApprovalPending {
			continue
		}
		if err := b.Delete([]byte(all[i].ID)); err != nil {
			return loop.Internal("pruning approval %s: %v", all[i].ID, err)
		}
		extra--
	}
	return nil
}

// ListApprovals returns the approvals of session ("": every session's),
// pending first, then the newest first. One that does not decode is
// skipped: a bad record never hides the others.
func (t *Tx) ListApprovals(session string) ([]*loop.Approval, error) {
	b := approvalsBucket(t.tx)
	out := []*loop.Approval{}
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		a, err := decodeApproval(string(k), v)
		if err == nil && (session == "" || a.Session == session) {
			out = append(out, a)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := out[i].Status == loop.ApprovalPending, out[j].Status == loop.ApprovalPending
		if pi != pj {
			return pi
		}
		if out[i].RequestedAt != out[j].RequestedAt {
			return out[i].RequestedAt > out[j].RequestedAt
		}
		return out[i].ID < out[j].ID
	})
	return out, err
}

// decodeApproval decodes the approval stored under key.
func decodeApproval(key string, v []byte) (*loop.Approval, error) {
	var a loop.Approval
	if err := json.Unmarshal(v, &a); err != nil {
		return nil, loop.Internal("approval %s in the store does not decode: %v", key, err)
	}
	if a.ID != key {
		return nil, loop.Internal("approval under key %s names id %q", key, a.ID)
	}
	return &a, nil
}
