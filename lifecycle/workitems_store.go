package lifecycle

import (
	"context"
	"slices"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/store"
)

// This file is the work-item side's plumbing: its transition (the sessions
// bucket's counterpart of Service.transition), reads and claims.

// workItemLock is the per-session lock key of a work item (standing names
// never contain ':', so the keys cannot meet).
func workItemLock(ref loop.WorkItemRef) string { return "workitem:" + ref.Slug() }

// sharedKey refuses a record stored under ref's key that belongs to another
// ref (two refs whose slugs agree).
func sharedKey(ref loop.WorkItemRef, rec *loop.WorkItemRecord) error {
	return loop.Invalid("work item %s shares its session key '%s' with %s, whose session is recorded there "+
		"(their refs differ only in characters the key rewrites); close that session first", ref, ref.Slug(), rec.WorkItem.Ref)
}

// readWorkItem returns ref's record, nil when there is none. A record of
// another ref under the same key is an EINVALID error.
func (s *Service) readWorkItem(ref loop.WorkItemRef) (*loop.WorkItemRecord, error) {
	return engine.Read(s.engine(), workItemKind{ref: ref})
}

// workItemRecords lists every work-item record, sorted by key.
func (s *Service) workItemRecords() ([]*loop.WorkItemRecord, error) {
	return engine.ReadAll(s.engine(), (*store.Tx).ListWorkItems)
}

// workItemTransition is one work-item machine event in one store
// transaction (Transition).
func (s *Service) workItemTransition(ctx context.Context, ref loop.WorkItemRef, event string, mutate func(rec *loop.WorkItemRecord) error, events ...loop.Event) (*loop.WorkItemRecord, error) {
	return engine.Transition(ctx, s.engine(), workItemKind{ref: ref}, event, mutate, nil, events...)
}

// workItemKind is a work item's record as the engine (engine.go) sees it:
// the sessions bucket, keyed by the ref's slug, and the work-item machine.
// A record of another ref under the same key is refused (sharedKey).
type workItemKind struct {
	ref loop.WorkItemRef
}

func (k workItemKind) What() string { return "the session of " + k.ref.String() }

func (k workItemKind) Get(tx *store.Tx) (*loop.WorkItemRecord, error) {
	rec, err := tx.WorkItem(k.ref.Slug())
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.WorkItem.Ref != k.ref.String() {
		return nil, sharedKey(k.ref, rec)
	}
	return rec, nil
}

// put writes the ref into the record and stamps a new one's creation.
func (k workItemKind) Put(tx *store.Tx, next, _ *loop.WorkItemRecord, stamp string) error {
	ref := k.ref
	next.WorkItem = loop.WorkItemInfo{Ref: ref.String(), Provider: ref.Provider, Owner: ref.Owner, Repo: ref.Repo, Number: ref.Number}
	if next.CreatedAt == "" {
		next.CreatedAt = stamp
	}
	return tx.PutWorkItem(ref.Slug(), next)
}

func (k workItemKind) Del(tx *store.Tx) error {
	_, err := tx.DeleteWorkItem(k.ref.Slug())
	return err
}

func (k workItemKind) CopyOf(cur *loop.WorkItemRecord) *loop.WorkItemRecord {
	if cur == nil {
		return &loop.WorkItemRecord{}
	}
	c := *cur
	c.RecentDeliveries = slices.Clone(cur.RecentDeliveries)
	return &c
}

func (k workItemKind) State(rec *loop.WorkItemRecord) string { return engine.WorkItemStateOf(rec) }

func (k workItemKind) Next(state, event string) (string, error) {
	return engine.NextWorkItem(context.Background(), state, event)
}

// enter: active and closed are stored statuses (the claim ends); a claim
// state stores the status it came from, none for a first start.
func (k workItemKind) Enter(rec *loop.WorkItemRecord, dst string) {
	status := map[string]loop.SessionStatus{engine.WorkItemActive: loop.SessionStatus(dst), engine.WorkItemClosed: loop.SessionStatus(dst), engine.WorkItemFirstStart: "",
		engine.WorkItemReopening: loop.SessionClosed, engine.WorkItemRespawning: loop.SessionActive}
	rec.Status = status[dst]
	if dst == engine.WorkItemActive || dst == engine.WorkItemClosed {
		rec.Claim = nil
	}
}

func (k workItemKind) Claim(rec *loop.WorkItemRecord) *loop.Claim { return rec.Claim }

func (k workItemKind) Target() string { return k.ref.TmuxTarget() }

func (k workItemKind) Socket(rec *loop.WorkItemRecord) string { return rec.TmuxSocket }

func (k workItemKind) Recovered(r *loop.WorkItemRecord, c loop.Claim) {
	recoveredIDs(c, &r.HarnessSessionID, &r.Hearing.PaneTag)
	r.TmuxTarget = k.Target()
}

func (k workItemKind) LogEvent(what string) string { return "session." + what }

func (k workItemKind) Subject() loop.Field { return loop.F("work_item", k.ref.String()) }
