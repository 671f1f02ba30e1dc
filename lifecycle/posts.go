package lifecycle

import (
	"context"
	"slices"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/store"
)

// maxPostAttempts is how many cycles a post that fails is tried in.
const maxPostAttempts = 5

// TakePosts takes every standing session's outbox (loop.ThreadLog).
func (s *Service) TakePosts(ctx context.Context) ([]loop.OutgoingPost, error) {
	var out []loop.OutgoingPost
	any := false
	if err := s.DB.View(func(tx *store.Tx) error {
		recs, err := tx.ListStanding()
		any = slices.ContainsFunc(recs, func(r *loop.StandingRecord) bool { return len(r.Outbox) > 0 })
		return err
	}); err != nil || !any {
		return nil, err
	}
	err := s.DB.Update(func(tx *store.Tx) error {
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
func (s *Service) ReturnPost(ctx context.Context, p loop.OutgoingPost) error {
	p.Attempts++
	if p.Attempts >= maxPostAttempts {
		return nil
	}
	return s.DB.Update(func(tx *store.Tx) error {
		rec, err := tx.Standing(p.Standing)
		if err != nil || rec == nil || rec.SlackThread != p.Thread {
			return err
		}
		p.Standing, p.Channel, p.Thread = "", "", ""
		rec.Outbox = append([]loop.OutgoingPost{p}, rec.Outbox...)
		return tx.PutStanding(rec)
	})
}

// SecretValues are the values of the secrets kept out of agents
// (SecretEnv's variables, as getenv reads them): a post from an agent's
// answer never carries one.
func SecretValues(cfg *config.Config, getenv func(string) string) []string {
	var out []string
	for _, name := range SecretEnv(cfg) {
		if v := getenv(name); len(v) >= 8 {
			out = append(out, v)
		}
	}
	return out
}
