package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
)

// The work-item verbs (original §4.2, §10.2; decisions D23): a work item's
// session beside the standing ones, sharing only the tmux runner and the
// harness adapters. Refs are recognised by loop.ParseWorkItemRef alone, so
// a standing ref is an invalid ref here, and the standing verbs never see a
// work item.

// workItemRow renders one record (original §4.2 fields, plus its flat ref,
// a null control record and whether its pane runs).
func workItemRow(rec *loop.WorkItemRecord, running bool) loop.WorkItemRow {
	row := loop.WorkItemRow{
		Ref: rec.WorkItem.Ref,
		WorkItem: loop.WorkItemInfo{Ref: rec.WorkItem.Ref, Provider: rec.WorkItem.Provider, Owner: rec.WorkItem.Owner,
			Repo: rec.WorkItem.Repo, Number: rec.WorkItem.Number},
		Harness:          rec.Harness,
		HarnessSessionID: rec.HarnessSessionID,
		Cwd:              rec.Cwd,
		Status:           rec.Status,
		CreatedAt:        rec.CreatedAt,
		TmuxTarget:       rec.TmuxTarget,
		RecentDeliveries: append([]string{}, rec.RecentDeliveries...),
		URL:              rec.URL,
		Running:          running,
	}
	row.Activity, row.ActivityAt, row.LastAnswerAt, row.Tokens = rec.RowFields(running)
	if rec.LastEventAt != "" {
		at := rec.LastEventAt
		row.LastEventAt = &at
	}
	if rec.Status == loop.SessionBroken { // undecodable: its ref is the key
		row.Running, row.Detail = false, rec.Broken
	}
	return row
}

// shown reports whether a record is a session a list shows: a first start
// still in flight has no session yet.
func shown(rec *loop.WorkItemRecord) bool {
	return engine.WorkItemStateOf(rec) != engine.WorkItemFirstStart
}

// ListWorkItems returns every work-item session (status "" for all, else
// active, paused or closed), with liveness from one tmux query per socket
// in use. Standing sessions are in a store of their own: never here.
func (s *Service) ListWorkItems(ctx context.Context, cfg *config.Config, status string) ([]loop.WorkItemRow, error) {
	switch loop.SessionStatus(status) {
	case "", loop.SessionActive, loop.SessionPaused, loop.SessionClosed:
	default:
		return nil, loop.Invalid("invalid status '%s' (one of active, paused, closed)", status)
	}
	_ = s.applySpool(ctx, cfg.StateDir()) // hooks heard while the store was locked; best-effort
	recs, err := s.workItemRecords()
	if err != nil {
		return nil, err
	}
	var keep []*loop.WorkItemRecord
	bySocket := map[string][]string{}
	for _, r := range recs {
		if !shown(r) || (status != "" && r.Status != loop.SessionStatus(status)) {
			continue
		}
		keep = append(keep, r)
		if r.TmuxTarget != "" && r.Status != loop.SessionBroken {
			bySocket[r.TmuxSocket] = append(bySocket[r.TmuxSocket], r.TmuxTarget)
		}
	}
	live := map[string]map[string]bool{}
	for socket, targets := range bySocket {
		live[socket] = map[string]bool{}
		for target, st := range s.Runner(socket).States(ctx, targets) {
			live[socket][target] = st == loop.PaneLive // unknown is not running
		}
	}
	rows := make([]loop.WorkItemRow, 0, len(keep))
	for _, r := range keep {
		rows = append(rows, workItemRow(r, live[r.TmuxSocket][r.TmuxTarget]))
	}
	return rows, nil
}

// GetWorkItem returns one work item's session (closed ones included).
func (s *Service) GetWorkItem(ctx context.Context, cfg *config.Config, ref string) (loop.WorkItemRow, error) {
	item, err := loop.ParseWorkItemRef(ref)
	if err != nil {
		return loop.WorkItemRow{}, err
	}
	rec, err := s.readWorkItem(item)
	if err != nil && loop.ErrorCode(err) != loop.EINVALID {
		return loop.WorkItemRow{}, err
	}
	if rec == nil || !shown(rec) {
		return loop.WorkItemRow{}, loop.NotFound("no session registered for %s", item)
	}
	running := false
	if rec.TmuxTarget != "" {
		running = s.Runner(rec.TmuxSocket).State(ctx, rec.TmuxTarget) == loop.PaneLive
	}
	return workItemRow(rec, running), nil
}

// CloseWorkItem closes a work item's session: with the tmux session kept
// (keepTmux, else routing.tmux.keepSessionOnClose) it ends the harness in
// it when routing.tmux.killHarnessOnClose, so the transcript stays readable
// and nothing can be typed into it; otherwise it ends the harness's whole
// process tree and kills the tmux session. The record becomes closed
// (session.closed); its conversation id is kept, so a later start resumes
// it. A work item with no active session is a result with closed false and
// exit code 1.
func (s *Service) CloseWorkItem(ctx context.Context, cfg *config.Config, ref string, keepTmux *bool) (loop.CloseResult, error) {
	item, err := loop.ParseWorkItemRef(ref)
	if err != nil {
		return loop.CloseResult{}, err
	}
	name := item.String()
	defer s.engine().Lock(workItemLock(item))()
	tmux := cfg.Routing.Tmux
	keep := tmux.KeepSessionOnClose
	if keepTmux != nil {
		keep = *keepTmux
	}
	for attempt := 0; attempt < 20; attempt++ {
		rec, err := s.readWorkItem(item)
		if err != nil && loop.ErrorCode(err) != loop.EINVALID {
			return loop.CloseResult{}, err
		}
		if rec != nil && rec.Claim != nil {
			if err := engine.ClearClaim(ctx, s.engine(), workItemKind{ref: item}, rec); err != nil {
				return loop.CloseResult{}, err
			}
			continue
		}
		if rec == nil || rec.Status != loop.SessionActive {
			return loop.CloseResult{WorkItem: name, Closed: false, ExitCode: 1,
				Messages: []loop.Message{{Stream: "err", Text: "no active session for " + name}}}, nil
		}
		msgs := s.settleTmuxOnClose(ctx, item, rec, keep, tmux)
		seen := rec.HarnessSessionID
		fate := "killed"
		if keep {
			fate = "kept"
		}
		_, err = s.workItemTransition(ctx, item, engine.WorkItemEvClose, func(r *loop.WorkItemRecord) error {
			if r.Claim != nil || r.HarnessSessionID != seen {
				return engine.ErrStale
			}
			return nil
		}, s.event("session.closed", loop.LevelInfo, loop.F("work_item", name),
			loop.F("tmux_target", rec.TmuxTarget), loop.F("tmux", fate)))
		if errors.Is(err, engine.ErrStale) || errors.Is(err, engine.ErrTransition) {
			continue
		}
		if err != nil {
			return loop.CloseResult{}, err
		}
		msgs = append(msgs, loop.Message{Stream: "out", Text: "closed session for " + name})
		return loop.CloseResult{WorkItem: name, Closed: true, ExitCode: 0, Messages: msgs}, nil
	}
	return loop.CloseResult{}, loop.Internal("the session of %s kept changing under the close; try again", name)
}

// settleTmuxOnClose does a close's tmux half (best-effort: what it could
// not do is a note, never a failed close) and says what it did.
func (s *Service) settleTmuxOnClose(ctx context.Context, item loop.WorkItemRef, rec *loop.WorkItemRecord, keep bool, tmux config.Tmux) []loop.Message {
	target := rec.TmuxTarget
	if target == "" {
		return nil
	}
	var msgs []loop.Message
	out := func(format string, args ...any) {
		msgs = append(msgs, loop.Message{Stream: "out", Text: fmt.Sprintf(format, args...)})
	}
	note := func(err error) {
		msgs = append(msgs, loop.Message{Stream: "err", Text: "note: " + loop.ErrorMessage(err)})
	}
	runner := s.Runner(rec.TmuxSocket)
	sess := loop.WorkItemTarget{Ref: item.String(), TmuxTarget: target}
	grace := time.Duration(tmux.HarnessKillGraceSeconds * float64(time.Second))
	state := runner.State(ctx, target)
	if state != loop.PaneAbsent {
		// the-loop releases what the-loop started: never signal a session
		// under this name that does not carry the record's tag.
		if mine, err := engine.Ours(ctx, runner, target, rec.TagFor(rec.HarnessSessionID)); err != nil || !mine {
			if err == nil {
				err = loop.NotFound("%s", engine.NotOurs(target, rec.TmuxSocket, "it is not the agent the-loop started for this work item; not signalling it"))
			}
			note(err)
			return msgs
		}
	}
	if keep {
		if tmux.KillHarnessOnClose && state.LiveOrUnknown() {
			// remain-on-exit is re-set first, so the pane and its
			// scrollback outlive the harness.
			if err := runner.TerminateHarness(ctx, sess, grace); err != nil {
				note(err)
			} else {
				out("ended the harness in tmux session %s", target)
			}
		}
		attach := "tmux attach -r -t " + target
		if rec.TmuxSocket != "" {
			attach = "tmux -L " + rec.TmuxSocket + " attach -r -t " + target
		}
		out("kept tmux session %s — attach: %s (pass --kill-tmux to end it)", target, attach)
		return msgs
	}
	if state == loop.PaneAbsent {
		out("note: tmux session %s was already gone", target)
		return msgs
	}
	// The whole tree first (decisions D12): helpers a harness started would
	// otherwise outlive the kill-session.
	if state.LiveOrUnknown() {
		if err := runner.TerminateHarness(ctx, sess, grace); err != nil {
			note(err)
		}
	}
	if err := runner.Kill(ctx, sess); err != nil && runner.State(ctx, target) != loop.PaneAbsent {
		note(err)
	} else if err != nil {
		out("note: tmux session %s was already gone", target)
	} else {
		out("killed tmux session %s", target)
	}
	return msgs
}
