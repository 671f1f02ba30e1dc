package threadlog

import (
	"context"
	"slices"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// A standing session's outbox is filled by lifecycle as it applies a hook
// (the Stop that answers a Slack reply awaiting an answer, a dialog's first
// needs-attention notification); the poll cycle takes it here (TakePosts),
// posts, and puts back what failed (ReturnPost).

// maxPostAttempts is how many cycles a post that fails is tried in.
const maxPostAttempts = 5

// TakePosts takes every standing session's outbox (loop.ThreadLog).
func (l *Log) TakePosts(ctx context.Context) ([]loop.OutgoingPost, error) {
	var out []loop.OutgoingPost
	any := false
	if err := l.DB.View(func(tx *store.Tx) error {
		recs, err := tx.ListStanding()
		any = slices.ContainsFunc(recs, func(r *loop.StandingRecord) bool { return len(r.Outbox) > 0 })
		return err
	}); err != nil || !any {
		return nil, err
	}
	err := l.DB.Update(func(tx *store.Tx) error {
		out = nil
		recs, err := tx.ListStanding()
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if len(rec.Outbox) == 0 {
				continue
			}
			if rec.SlackThread != "" {
				for _, p := range rec.Outbox {
					p.Standing, p.Channel, p.Thread = rec.Name, rec.SlackChannel, rec.SlackThread
					out = append(out, p)
				}
			}
			rec.Outbox = nil
			if err := tx.PutStanding(rec); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// ReturnPost puts a failed post back in its session's outbox
// (loop.ThreadLog); after maxPostAttempts it is dropped.
func (l *Log) ReturnPost(ctx context.Context, p loop.OutgoingPost) error {
	p.Attempts++
	if p.Attempts >= maxPostAttempts {
		return nil
	}
	return l.DB.Update(func(tx *store.Tx) error {
		rec, err := tx.Standing(p.Standing)
		if err != nil || rec == nil || rec.SlackThread != p.Thread {
			return err
		}
		p.Standing, p.Channel, p.Thread = "", "", ""
		rec.Outbox = append([]loop.OutgoingPost{p}, rec.Outbox...)
		return tx.PutStanding(rec)
	})
}
