package threadlog

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// PendingReplies returns the Slack replies kept for sessions that could not
// take them yet, oldest first.
func (l *Log) PendingReplies(_ context.Context) ([]loop.PendingReply, error) {
	var out []loop.PendingReply
	err := l.DB.View(func(tx *store.Tx) error {
		var err error
		out, err = tx.PendingReplies()
		return err
	})
	return out, err
}

// Waiting is how many replies thread keeps for its session: a new reply
// there waits behind them, so that they reach the pane in order.
func (l *Log) Waiting(_ context.Context, thread string) (int, error) {
	n := 0
	err := l.DB.View(func(tx *store.Tx) error {
		var err error
		n, err = tx.Waiting(thread)
		return err
	})
	return n, err
}

// KeepReply keeps pr for a later delivery (store.Tx.QueueReply) and
// appends kept in the same transaction. When its thread or the store keeps
// as many replies as they may (store.MaxPendingPerThread,
// store.MaxPending), nothing is kept, full is appended instead and kept
// is false. A reply taken by TakeReply goes back in its place (pr.Seq set).
func (l *Log) KeepReply(_ context.Context, pr loop.PendingReply, kept, full []loop.Event) (bool, error) {
	ok := false
	err := l.DB.Update(func(tx *store.Tx) error {
		var err error
		if ok, err = tx.QueueReply(&pr); err != nil {
			return err
		}
		evs := kept
		if !ok {
			evs = full
		}
		for i := range evs {
			if err := tx.AppendEvent(&evs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return ok, nil
}

// TakeReply takes the reply kept under seq for a delivery attempt: in one
// transaction it removes it, resolves its thread's binding now (ref "" for
// a thread unbound or a tombstone) and appends the events decide returns —
// before anything is pasted, so a crash after it loses the reply rather
// than delivering it twice (decisions D25). It returns nil when another
// cycle took the reply. decide runs inside the write transaction: it must
// only build events.
func (l *Log) TakeReply(_ context.Context, seq uint64, decide func(pr loop.PendingReply, ref string) []loop.Event) (*loop.PendingReply, string, error) {
	var taken *loop.PendingReply
	ref := ""
	err := l.DB.Update(func(tx *store.Tx) error {
		taken, ref = nil, ""
		pr, err := tx.TakeReply(seq)
		if err != nil || pr == nil {
			return err
		}
		if b, ok := tx.Binding(pr.Thread); ok {
			ref = b.Ref
		}
		evs := decide(*pr, ref)
		for i := range evs {
			if err := tx.AppendEvent(&evs[i]); err != nil {
				return err
			}
		}
		taken = pr
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return taken, ref, nil
}
