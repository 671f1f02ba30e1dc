package lifecycle

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// The Service is the event log (the read, loop.EventLog) and the event
// writer (loop.EventWriter: its envelopes stamped with this service's
// clock, source and pid, their text fields redacted) that the thread log
// and the work-item mirror are given.
var _ loop.EventWriter = (*Service)(nil)

// NewEvent builds an event stamped with this service's clock, source and
// pid, for Emit or a thread log's RecordReply (loop.EventWriter).
func (s *Service) NewEvent(name, level string, fields ...loop.Field) loop.Event {
	return s.event(name, level, fields...)
}

// Events returns the events q selects, oldest first (loop.EventLog); q's
// since is read against this service's clock.
func (s *Service) Events(_ context.Context, q loop.EventQuery) ([]loop.Event, error) {
	since, err := store.ParseSince(q.Since, s.now())
	if err != nil {
		return nil, err
	}
	var evs []loop.Event
	err = s.DB.View(func(tx *store.Tx) error {
		evs, err = tx.Events(store.EventQuery{Types: q.Types, Standing: q.Standing, WorkItem: q.WorkItem,
			MinLevel: q.Level, Since: since, Limit: q.Limit, After: q.After, Forward: q.Forward})
		return err
	})
	return evs, err
}
