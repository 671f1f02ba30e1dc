package lifecycle

// The two talk verbs, a standing session's say and a work item's reply:
// each checks what it may talk to, then hands a talk.Session to the one
// deliver–verify–await path (talk.Deliver).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/talk"
)

// frameFrom is the framing of req: as the agent whose credential carries
// it, its text fenced with a fresh nonce (talk.FramePeer), else as the
// operator's (talk.FrameSay).
func (s *Service) frameFrom(req loop.StandingSayRequest) string {
	if c := req.Caller; c != nil {
		return talk.FramePeer(*c, req.Name, req.Text, talk.NonceFor(req.Text, s.Nonce))
	}
	return talk.FrameSay(req.Name, req.Actor, req.Text)
}

// SayStanding pastes text into a running standing session and submits it
// (Say without waiting for the answer).
func (s *Service) SayStanding(ctx context.Context, cfg *config.Config, name, text, actor string) (loop.SayResult, error) {
	return s.Say(ctx, cfg, loop.StandingSayRequest{Name: name, Text: text, Actor: actor})
}

// Say pastes a message into a running standing session and submits it,
// reporting its outcome; with req.Wait it waits for the turn's answer
// (talk.Deliver). It never spawns or resumes one.
func (s *Service) Say(ctx context.Context, cfg *config.Config, req loop.StandingSayRequest) (loop.SayResult, error) {
	name := req.Name
	if err := loop.CheckName(name); err != nil {
		return loop.SayResult{}, err
	}
	if talk.Blank(req.Text) {
		return loop.SayResult{}, loop.Invalid("the message is empty (nothing but whitespace and control characters); nothing to deliver")
	}
	wait, err := talk.AnswerWait(req.Wait, req.TimeoutSeconds)
	if err != nil {
		return loop.SayResult{}, err
	}
	rec, runner, seen, err := s.sayable(ctx, cfg, name)
	if err != nil {
		return loop.SayResult{}, err
	}
	// Only a spawn of a CLI with hooks declares them (a record of another
	// harness may still read "starting").
	hooks := rec.Activity != "" && harnessHasHooks(s, rec.Harness, name)
	if req.Wait && !hooks {
		return loop.SayResult{}, loop.Invalid("standing session '%s' was spawned without hooks, so its answer cannot be heard; say without --wait (wait), or restart it with a harness that has hooks (claude, codex, gemini)", name)
	}
	if req.Wait && req.Caller != nil {
		leave, err := s.waits.Enter(*req.Caller, name)
		if err != nil {
			return loop.SayResult{}, err
		}
		defer leave()
	}
	sess := s.talkSession(ctx, cfg, rec.Harness, name, hooks, wait)
	sess.Runner, sess.Target, sess.Seen, sess.Framed, sess.Activity = runner, loop.TmuxTargetFor(name), seen, s.frameFrom(req), rec.Activity
	// A stop that claims the session meanwhile ends the wait, and one that
	// claimed it before the paste refuses it: the agent is flushing to
	// exit and would never read it.
	sess.Still = func() error {
		rec, err := s.read(name)
		if err != nil {
			return err
		}
		return stopClaimed(name, rec)
	}
	sess.Look = func() (talk.Heard, error) {
		rec, err := s.read(name)
		if err != nil || rec == nil {
			return talk.Heard{}, err
		}
		return talk.Heard{Hearing: &rec.Hearing, Running: rec.Status == loop.StatusRunning, Cwd: rec.Cwd, Conversation: rec.HarnessSessionID}, nil
	}
	actor := actorOrUser(req.Actor)
	if req.Caller != nil {
		actor = req.Caller.String()
	}
	sess.NotTaken = func() {
		_ = s.Emit(s.event("standing.say_failed", loop.LevelWarning, loop.F("standing", name), loop.F("tmux_target", sess.Target),
			loop.F("actor", actorOrUser(req.Actor)), loop.F("why", "no UserPromptSubmit held the text after one more submit key")))
	}
	sess.Delivered = func(outcome, promptID string) error {
		ev := s.event("standing.said", loop.LevelInfo, loop.F("standing", name), loop.F("tmux_target", sess.Target), loop.F("actor", actor), loop.F("outcome", outcome))
		return engine.Delivered(ctx, s.engine(), standingKind{name: name}, engine.EvSay, func(r *loop.StandingRecord) {
			r.LastMessageAt = s.stamp()
			if req.AnswerToThread && hooks {
				r.Awaited = append(slices.Clone(r.Awaited), loop.AwaitedAnswer{PromptID: promptID, Sum: loop.PromptSum(sess.Framed), At: s.stamp()})
				if n := len(r.Awaited); n > loop.MaxAwaited {
					r.Awaited = r.Awaited[n-loop.MaxAwaited:]
				}
			}
		}, ev)
	}
	sess.Words = sayWords(name)
	res, err := talk.Deliver(ctx, sess)
	return loop.SayResult{Name: name, Delivered: res.Delivered, Outcome: res.Outcome, Reply: res.Reply, ExitCode: res.ExitCode, Messages: res.Messages}, err
}

// sayWords are a say's sentences (talk.Words): its remedies name the
// standing verbs.
func sayWords(name string) talk.Words {
	w := talk.Words{Noun: "message",
		NotReady: func(why string) string {
			return fmt.Sprintf("error: %s; nothing was delivered — answer it yourself with `the-loop standing attach %[2]s --write`, or look with `the-loop standing peek %[2]s`", why, name)
		},
		Gone:         loop.NotFound("standing session '%s' was deleted while the message waited for it; nothing was delivered", name),
		NotTakenHint: "look with `the-loop standing peek " + name + "`",
		Line:         talkLine("", "standing.said"),
		Who:          "standing session '" + name + "'", Where: "the-loop standing transcript " + name,
		StillThere: "; its answer will be in `the-loop standing transcript " + name + "`",
	}
	w.ReadyFailed = func(err error) string {
		return w.NotReady(strings.TrimSuffix(strings.TrimSuffix(err.Error(), " — try again shortly"), "; nothing was delivered"))
	}
	return w
}

// sayable is standing session name's record and runner when a message may
// go into it — it runs, no stop claimed it, and its live pane is the agent
// the-loop started for it — with the one look at the pane that told
// (engine.LookAt).
func (s *Service) sayable(ctx context.Context, cfg *config.Config, name string) (*loop.StandingRecord, loop.Runner, *loop.PaneSnapshot, error) {
	rec, err := s.read(name)
	if err != nil {
		return nil, nil, nil, err
	}
	if rec == nil || rec.Status == loop.StatusAbsent {
		if _, declared := tolerantBlock(cfg).Get(name); !declared {
			return nil, nil, nil, unknownStanding(name)
		}
		return nil, nil, nil, neverStarted(name, "there is no agent to say it to (a message never spawns one)")
	}
	target := loop.TmuxTargetFor(name)
	runner := s.Runner(rec.TmuxSocket)
	if err := stopClaimed(name, rec); err != nil {
		return nil, nil, nil, err
	}
	absent := loop.NotFound("standing session '%[1]s' has no live tmux pane to paste into — a message never respawns one; run `the-loop standing start %[1]s` first", name)
	if rec.Status != loop.StatusRunning {
		return nil, nil, nil, absent
	}
	seen, err := engine.LookAt(ctx, runner, target, rec.TagFor(rec.HarnessSessionID))
	switch {
	case err != nil:
		return nil, nil, nil, err
	case !seen.Live:
		return nil, nil, nil, absent
	case !seen.Ours:
		return nil, nil, nil, loop.NotFound("standing session '%[1]s' has no live agent of the-loop's to paste into — %[2]s; run `the-loop standing start %[1]s` first", name,
			engine.NotOurs(target, rec.TmuxSocket, "it is not the agent the-loop started for this record"))
	}
	return rec, runner, &seen.Snap, nil
}

// talkSession is what a say and a reply share of a talk.Session: the
// harness adapter, how the agent is heard (the spool and this process's
// hooks, polled every sayPoll, the service's every servicePoll), the
// transcript and the bounds.
func (s *Service) talkSession(ctx context.Context, cfg *config.Config, harness, subject string, hooks bool, wait time.Duration) talk.Session {
	poll := sayPoll
	if s.Source == "service" {
		poll = servicePoll
	}
	return talk.Session{
		Adapter: func() (loop.Harness, error) { return s.Harness(harness, subject) },
		Hooks:   hooks,
		Ready:   cfg.Routing.Tmux.ReadyTimeout(),
		Submit:  cfg.Routing.Tmux.SubmitWait(),
		Wait:    wait,
		Joins:   s.engine().JoinsTurn(harness, subject),
		Hear:    func(ctx context.Context) error { return s.applySpool(ctx, cfg.StateDir()) },
		Woken:   s.heardCh,
		Poll:    poll,
	}
}

// talkLine is the line a delivered say (what "") or reply (what "the reply
// ") into target prints, naming the event that logged it.
func talkLine(what, event string) func(outcome, target string) string {
	return func(outcome, target string) string {
		switch outcome {
		case loop.SayQueued:
			return fmt.Sprintf("queued %sin %s: the agent is busy and takes it after its running turn (%s)", what, target, event)
		case loop.SaySubmitted:
			return fmt.Sprintf("submitted %sto %s: the agent took it (%s)", what, target, event)
		}
		return fmt.Sprintf("delivered %sinto %s (%s)", what, target, event)
	}
}

// harnessHasHooks reports whether the harness the record names is one the
// hooks are declared for (claude, codex, gemini: Hooked).
func harnessHasHooks(s *Service, harness, subject string) bool {
	adapter, err := s.Harness(harness, subject)
	return err == nil && engine.Hooked(adapter.Name())
}

// sayPoll is how often a say looks at what its agent's hooks reported
// when they may reach the store from another process (the CLI's, with
// the service down: the hook command writes the store itself); the
// service, which applies every hook itself, is woken by each (heard) and
// looks on its own only every servicePoll.
const (
	sayPoll     = 3 * time.Millisecond
	servicePoll = 100 * time.Millisecond
)

// stopClaimed refuses a say to a standing session that is no longer
// running or that a stop has claimed (nil: a say may go on).
func stopClaimed(name string, rec *loop.StandingRecord) error {
	if rec == nil || rec.Status == loop.StatusAbsent || rec.Status == loop.StatusStopped {
		return loop.NotFound("standing session '%[1]s' has no live tmux pane to paste into — it is not running (stopped); nothing was delivered, and a message never respawns one; run `the-loop standing start %[1]s` first", name)
	}
	if rec.Claim != nil && rec.Claim.Op == "stop" {
		return loop.NotFound("standing session '%[1]s' is not running: a stop (process %[2]d, since %[3]s) has claimed it and the agent is exiting; nothing was delivered — run `the-loop standing start %[1]s` once it is stopped", name, rec.Claim.PID, rec.Claim.Since)
	}
	return nil
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
// turn's answer (talk.Deliver).
func (s *Service) Reply(ctx context.Context, cfg *config.Config, req loop.WorkItemReplyRequest) (loop.ReplyResult, error) {
	ref, text, actor := req.Ref, req.Text, req.Actor
	item, err := loop.ParseWorkItemRef(ref)
	if err != nil {
		return loop.ReplyResult{}, err
	}
	if strings.TrimSpace(text) == "" {
		return loop.ReplyResult{}, loop.Invalid("the reply text is empty; nothing to deliver")
	}
	wait, err := talk.AnswerWait(req.Wait, req.TimeoutSeconds)
	if err != nil {
		return loop.ReplyResult{}, err
	}
	name := item.String()
	rec, runner, seen, err := s.repliable(ctx, item)
	if err != nil {
		return loop.ReplyResult{}, err
	}
	// Only a claude spawn declares the hooks (a record of another harness
	// may still read "starting").
	hooks := rec.Activity != "" && harnessHasHooks(s, rec.Harness, name)
	if req.Wait && !hooks {
		return loop.ReplyResult{}, loop.Invalid("the session for %s was spawned without hooks, so its answer cannot be heard; reply without --wait (wait)", name)
	}
	sess := s.talkSession(ctx, cfg, rec.Harness, name, hooks, wait)
	sess.Runner, sess.Target, sess.Seen, sess.Framed, sess.Activity = runner, rec.TmuxTarget, seen, talk.FrameReply(name, actor, text), rec.Activity
	sess.Look = func() (talk.Heard, error) {
		r, err := s.readWorkItem(item)
		if err != nil || r == nil {
			return talk.Heard{}, err
		}
		return talk.Heard{Hearing: &r.Hearing, Running: r.Status == loop.SessionActive, Cwd: rec.Cwd, Conversation: rec.HarnessSessionID}, nil
	}
	sess.NotTaken = func() {
		_ = s.Emit(s.event("session.reply_failed", loop.LevelWarning, loop.F("work_item", name), loop.F("actor", actor),
			loop.F("why", "no UserPromptSubmit held the text after one more submit key")))
	}
	sess.Delivered = func(outcome, _ string) error {
		ev := s.event("session.reply_sent", loop.LevelInfo, loop.F("work_item", name), loop.F("actor", actor), loop.F("outcome", outcome))
		return engine.Delivered(ctx, s.engine(), workItemKind{ref: item}, engine.WorkItemEvReply, func(r *loop.WorkItemRecord) { r.LastEventAt = s.stamp() }, ev)
	}
	sess.Words = replyWords(name)
	res, err := talk.Deliver(ctx, sess)
	return loop.ReplyResult{WorkItem: name, Delivered: res.Delivered, Outcome: res.Outcome, Reply: res.Reply, ExitCode: res.ExitCode, Messages: res.Messages}, err
}

// replyWords are a reply's sentences (talk.Words): its remedies name the
// sessions verbs and the ticket.
func replyWords(name string) talk.Words {
	return talk.Words{Noun: "reply",
		NotReady: func(why string) string {
			return fmt.Sprintf("error: %s; nothing was delivered — answer it yourself with `the-loop sessions attach %[2]s`, or answer on the ticket", why, name)
		},
		ReadyFailed:  func(err error) string { return "error: " + err.Error() },
		Gone:         noPane(name),
		NoPane:       noPane(name),
		NotTakenHint: "look with `the-loop sessions attach " + name + "`",
		Line:         talkLine("the reply ", "session.reply_sent"),
		Who:          "the session for " + name, Where: "the-loop sessions attach " + name,
	}
}

// noPane refuses a reply to a work item whose session has no live pane.
func noPane(name string) error {
	return loop.NotFound("the session for %[1]s has no live tmux pane to paste into — a reply never respawns one; answer on the ticket, "+
		"or start it again with `the-loop sessions start --work-item %[1]s`", name)
}

// repliable is the work item's record and runner when a reply may go into
// its session — it is active, and its live pane is the agent the-loop
// started for it — with the one look at the pane that told.
func (s *Service) repliable(ctx context.Context, item loop.WorkItemRef) (*loop.WorkItemRecord, loop.Runner, *loop.PaneSnapshot, error) {
	name := item.String()
	rec, err := s.readWorkItem(item)
	if err != nil && loop.ErrorCode(err) != loop.EINVALID {
		return nil, nil, nil, err
	}
	if rec == nil || rec.Status != loop.SessionActive {
		return nil, nil, nil, loop.NotFound("no session registered for %[1]s — a reply never spawns one; answer on the ticket, "+
			"or start its session first with `the-loop sessions start --work-item %[1]s`", name)
	}
	runner := s.Runner(rec.TmuxSocket)
	if rec.TmuxTarget == "" {
		return nil, nil, nil, noPane(name)
	}
	seen, err := engine.LookAt(ctx, runner, rec.TmuxTarget, rec.TagFor(rec.HarnessSessionID))
	switch {
	case err != nil:
		return nil, nil, nil, err
	case !seen.Live:
		return nil, nil, nil, noPane(name)
	case !seen.Ours:
		return nil, nil, nil, loop.NotFound("the session for %s has no live agent of the-loop's to paste into — %s", name,
			engine.NotOurs(rec.TmuxTarget, rec.TmuxSocket, "it is not the agent the-loop started for this work item"))
	}
	return rec, runner, &seen.Snap, nil
}
