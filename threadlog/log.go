package threadlog

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

var _ loop.ThreadLog = (*Log)(nil)

// Log is the Slack thread log over one store (loop.ThreadLog).
type Log struct {
	DB *store.DB
	// Events stamps the envelopes of the events the log writes and appends
	// the events written outside a state change (lifecycle's Service in
	// the service and the CLI).
	Events loop.EventWriter
}

// NewEvent builds an event stamped by Events, for Emit or RecordReply
// (loop.EventWriter).
func (l *Log) NewEvent(name, level string, fields ...loop.Field) loop.Event {
	return l.Events.NewEvent(name, level, fields...)
}

// Emit appends events outside any state change, through Events
// (loop.EventWriter).
func (l *Log) Emit(evs ...loop.Event) error { return l.Events.Emit(evs...) }

// Threads returns every bound thread with its cursor, oldest binding first
// (what one inbound poll cycle reads), each marked Closed when its work
// item's session is closed (loop.ThreadLog).
func (l *Log) Threads(_ context.Context) ([]loop.BoundThread, error) {
	var out []loop.BoundThread
	err := l.DB.View(func(tx *store.Tx) error {
		all, err := tx.Threads()
		if err != nil {
			return err
		}
		recs, err := tx.ListWorkItems()
		if err != nil {
			return err
		}
		closed := map[string]bool{}
		for _, r := range recs {
			if r.Status == loop.SessionClosed {
				closed[r.WorkItem.Ref] = true
			}
		}
		for _, b := range all {
			out = append(out, loop.BoundThread{ThreadTS: b.ThreadTS, Ref: b.Ref, Channel: b.Channel,
				Cursor: tx.Cursor(b.ThreadTS), Closed: b.Ref != "" && closed[b.Ref]})
		}
		return nil
	})
	return out, err
}

// RecordReply takes the reply ts of thread threadTS for processing, at most
// once (decisions D25; loop.ThreadLog). In one transaction it resolves the
// thread's binding now (not as it was when the reply was read), advances
// the thread's cursor to ts and appends the events decide returns for the
// bound ref — all or nothing, and before anything is delivered, so a crash
// after it loses the reply rather than delivering it twice.
//
// taken is false, and nothing is written, when the cursor is already at or
// past ts (another cycle took the reply). A thread no longer bound (its
// session was deleted meanwhile) has no cursor to advance: decide gets ref
// "" and its events are appended.
//
// decide runs inside the write transaction: it must only build events.
func (l *Log) RecordReply(_ context.Context, threadTS, ts string, decide func(ref string) []loop.Event) (ref string, taken bool, err error) {
	err = l.DB.Update(func(tx *store.Tx) error {
		ref, taken = "", false
		all, err := tx.Threads()
		if err != nil {
			return err
		}
		bound := false
		for _, b := range all {
			if b.ThreadTS == threadTS {
				ref, bound = b.Ref, true
			}
		}
		if bound { // a tombstone ("" ref) keeps its cursor too: dropped once
			before := tx.Cursor(threadTS)
			if err := tx.Advance(threadTS, ts); err != nil {
				return err
			}
			if tx.Cursor(threadTS) == before {
				return nil // at or before the cursor: already taken
			}
		}
		taken = true
		evs := decide(ref)
		for i := range evs {
			if err := tx.AppendEvent(&evs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", false, err
	}
	return ref, taken, nil
}

// WorkItemOpen reports whether the work item ref has a session that is not
// closed (one that may come back: its pane died, or its agent is busy).
func (l *Log) WorkItemOpen(_ context.Context, ref string) bool {
	item, err := loop.ParseWorkItemRef(ref)
	if err != nil {
		return false
	}
	open := false
	_ = l.DB.View(func(tx *store.Tx) error {
		rec, err := tx.WorkItem(item.Slug())
		open = err == nil && rec != nil && rec.Status != loop.SessionClosed
		return nil
	})
	return open
}
