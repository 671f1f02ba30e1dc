package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// The work-item verbs (original §4.2, §10.2; decisions D23): a work item's
// session beside the standing ones, sharing only the tmux runner and the
// harness adapters. Refs are recognised by loop.ParseWorkItemRef alone, so
// a standing ref is an invalid ref here, and the standing verbs never see a
// work item.

// FrameReply returns what the pane receives for a reply: the operator's
// framing, a blank line, then the text (original §10.2).
func FrameReply(ref, actor, text string) string {
	return fmt.Sprintf("Reply from the operator via the-loop control plane%s to your question on %s:\n\n%s", signed(actor), ref, text)
}

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
func shown(rec *loop.WorkItemRecord) bool { return WorkItemStateOf(rec) != WorkItemFirstStart }

// ListWorkItems returns every work-item session (status "" for all, else
// active, paused or closed), with liveness from one tmux query per socket
// in use. Standing sessions are in a store of their own: never here.
func (s *Service) ListWorkItems(ctx context.Context, cfg *config.Config, status string) ([]loop.WorkItemRow, error) {
	switch status {
	case "", loop.SessionActive, loop.SessionPaused, loop.SessionClosed:
	default:
		return nil, loop.Invalid("invalid status '%s' (one of active, paused, closed)", status)
	}
	_ = s.ApplySpool(ctx, cfg.StateDir()) // hooks heard while the store was locked; best-effort
	recs, err := s.workItemRecords()
	if err != nil {
		return nil, err
	}
	var keep []*loop.WorkItemRecord
	bySocket := map[string][]string{}
	for _, r := range recs {
		if !shown(r) || (status != "" && r.Status != status) {
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

// ReplyWorkItem pastes an operator's answer into a work item's live session
// and submits it (original §10.2). It never spawns or respawns one: a work
// item with no session, a closed one, or one whose pane is not live is
// refused (ENOTFOUND). It waits for the agent to be ready for input
// (decisions D14); a delivery that fails is a result with delivered false
// and exit code 1. actor is audit data, never authentication. Nothing is
// posted to the ticket (there is no GitHub integration yet).
func (s *Service) ReplyWorkItem(ctx context.Context, cfg *config.Config, ref, text, actor string) (loop.ReplyResult, error) {
	return s.Reply(ctx, cfg, loop.WorkItemReplyRequest{Ref: ref, Text: text, Actor: actor})
}

// Reply is ReplyWorkItem with a say's outcome and, with req.Wait, the
// turn's answer.
func (s *Service) Reply(ctx context.Context, cfg *config.Config, req loop.WorkItemReplyRequest) (loop.ReplyResult, error) {
	ref, text, actor := req.Ref, req.Text, req.Actor
	item, err := loop.ParseWorkItemRef(ref)
	if err != nil {
		return loop.ReplyResult{}, err
	}
	if strings.TrimSpace(text) == "" {
		return loop.ReplyResult{}, loop.Invalid("the reply text is empty; nothing to deliver")
	}
	wait, err := sayWait(req.Wait, req.TimeoutSeconds)
	if err != nil {
		return loop.ReplyResult{}, err
	}
	name := item.String()
	rec, err := s.readWorkItem(item)
	if err != nil && loop.ErrorCode(err) != loop.EINVALID {
		return loop.ReplyResult{}, err
	}
	if rec == nil || rec.Status != loop.SessionActive {
		return loop.ReplyResult{}, loop.NotFound("no session registered for %[1]s — a reply never spawns one; answer on the ticket, "+
			"or start its session first with `the-loop sessions start --work-item %[1]s`", name)
	}
	noPane := loop.NotFound("the session for %[1]s has no live tmux pane to paste into — a reply never respawns one; answer on the ticket, "+
		"or start it again with `the-loop sessions start --work-item %[1]s`", name)
	runner := s.Runner(rec.TmuxSocket)
	if rec.TmuxTarget == "" || runner.State(ctx, rec.TmuxTarget) != loop.PaneLive {
		return loop.ReplyResult{}, noPane
	}
	if mine, err := ours(ctx, runner, rec.TmuxTarget, rec.TagFor(rec.HarnessSessionID)); err != nil {
		return loop.ReplyResult{}, err
	} else if !mine {
		return loop.ReplyResult{}, loop.NotFound("the session for %s has no live agent of the-loop's to paste into — %s", name,
			notOurs(rec.TmuxTarget, rec.TmuxSocket, "it is not the agent the-loop started for this work item"))
	}
	// Only a claude spawn declares the hooks (a record of another harness
	// may still read "starting").
	hooks := rec.Activity != "" && harnessHasHooks(s, rec.Harness, name)
	if req.Wait && !hooks {
		return loop.ReplyResult{}, loop.Invalid("the session for %s was spawned without hooks, so its answer cannot be heard; reply without --wait (wait)", name)
	}
	fail := func(outcome, msg string) loop.ReplyResult {
		return loop.ReplyResult{WorkItem: name, Delivered: false, Outcome: outcome, ExitCode: 1, Messages: []loop.Message{{Stream: "err", Text: msg}}}
	}
	notReady := func(why string) loop.ReplyResult {
		return fail(loop.SayNotReady, fmt.Sprintf("error: %s; nothing was delivered — answer it yourself with `the-loop sessions attach %[2]s`, or answer on the ticket", why, name))
	}
	if rec.Activity == loop.ActivityWaiting {
		return notReady(fmt.Sprintf("the agent in %s is waiting for a permission or dialog answer (a reply never answers one)", rec.TmuxTarget)), nil
	}
	adapter, err := s.Harness(rec.Harness, name)
	if err != nil {
		return fail("", "error: could not deliver the reply: "+loop.ErrorMessage(err)), nil
	}
	if err := waitReady(ctx, runner, adapter, rec.TmuxTarget, cfg.Routing.Tmux.ReadyTimeout(), nil); err != nil {
		if ctx.Err() != nil {
			return loop.ReplyResult{}, err
		}
		return fail(loop.SayNotReady, "error: "+err.Error()), nil
	}
	heard := func() (*loop.Hearing, bool, error) {
		r, err := s.readWorkItem(item)
		if err != nil || r == nil {
			return nil, false, err
		}
		return &r.Hearing, r.Status == loop.SessionActive, nil
	}
	before, _, err := heard()
	if err != nil {
		return loop.ReplyResult{}, err
	}
	if before == nil {
		return loop.ReplyResult{}, noPane
	}
	if hooks && before.Activity == loop.ActivityWaiting {
		return notReady(fmt.Sprintf("the agent in %s is waiting for a permission or dialog answer (a reply never answers one)", rec.TmuxTarget)), nil
	}
	framed := FrameReply(name, actor, text)
	mark := adapter.TranscriptMark(rec.Cwd, rec.HarnessSessionID)
	sess := loop.WorkItemTarget{Ref: name, TmuxTarget: rec.TmuxTarget}
	if err := deliverItem(ctx, runner, adapter, sess, framed); err != nil {
		if loop.ErrorCode(err) == loop.ENOTFOUND {
			return loop.ReplyResult{}, noPane
		}
		return fail("", "error: could not deliver the reply: "+loop.ErrorMessage(err)), nil
	}
	outcome, promptID := loop.SayDelivered, ""
	if hooks {
		v := s.verify(ctx, cfg.StateDir(), heard, rec.TmuxTarget, runner, *before, framed, cfg.Routing.Tmux.SubmitWait())
		if v.err != nil {
			return loop.ReplyResult{}, v.err
		}
		if v.outcome == loop.SayNotSubmitted {
			_ = s.Emit(s.event("session.reply_failed", loop.LevelWarning, loop.F("work_item", name), loop.F("actor", actor),
				loop.F("why", "no UserPromptSubmit held the text after one more submit key")))
			return fail(loop.SayNotSubmitted, fmt.Sprintf("error: the reply was pasted into %s but the agent never took it, even after one more submit key: the text is left in its input box — look with `the-loop sessions attach %s`", rec.TmuxTarget, name)), nil
		}
		outcome, promptID = v.outcome, v.promptID
	}
	ev := s.event("session.reply_sent", loop.LevelInfo, loop.F("work_item", name), loop.F("actor", actor), loop.F("outcome", outcome))
	err = delivered(ctx, s, workItemKind{ref: item}, WorkItemEvReply, func(r *loop.WorkItemRecord) { r.LastEventAt = s.stamp() }, ev)
	line := fmt.Sprintf("delivered the reply into %s (session.reply_sent)", rec.TmuxTarget)
	switch outcome {
	case loop.SaySubmitted:
		line = fmt.Sprintf("submitted the reply to %s: the agent took it (session.reply_sent)", rec.TmuxTarget)
	case loop.SayQueued:
		line = fmt.Sprintf("queued the reply in %s: the agent is busy and takes it after its running turn (session.reply_sent)", rec.TmuxTarget)
	}
	res := loop.ReplyResult{WorkItem: name, Delivered: true, Outcome: outcome, ExitCode: 0,
		Messages: []loop.Message{{Stream: "out", Text: line}}}
	if err != nil {
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "warning: delivered, but the event could not be recorded: " + err.Error()})
	}
	if !req.Wait {
		return res, nil
	}
	res.Messages[0].Stream = "err" // the answer goes to stdout
	answer, err := s.awaitSayAnswer(ctx, cfg.StateDir(), heard, "the session for "+name, "the-loop sessions attach "+name, promptID, adapter, mark, framed, before.Prompts, s.joinsTurn(rec.Harness, name), wait)
	switch {
	case err == nil:
		res.Reply = answer
	case ctx.Err() != nil:
		res.ExitCode = 1
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "stopped waiting: the reply stays delivered to " + rec.TmuxTarget})
	default:
		res.ExitCode = 1
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "error: " + err.Error()})
	}
	return res, nil
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
	defer s.lock(workItemLock(item))()
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
			if err := clearClaim(ctx, s, workItemKind{ref: item}, rec); err != nil {
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
		_, err = s.workItemTransition(ctx, item, WorkItemEvClose, func(r *loop.WorkItemRecord) error {
			if r.Claim != nil || r.HarnessSessionID != seen {
				return errStale
			}
			return nil
		}, s.event("session.closed", loop.LevelInfo, loop.F("work_item", name),
			loop.F("tmux_target", rec.TmuxTarget), loop.F("tmux", fate)))
		if errors.Is(err, errStale) || errors.Is(err, ErrTransition) {
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
		if mine, err := ours(ctx, runner, target, rec.TagFor(rec.HarnessSessionID)); err != nil || !mine {
			if err == nil {
				err = loop.NotFound("%s", notOurs(target, rec.TmuxSocket, "it is not the agent the-loop started for this work item; not signalling it"))
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
