package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/store"
)

// DefaultWorkItemPrompt is the boot prompt of a work item's session
// started without one: it names the work item, and says how the
// operator's replies arrive.
func DefaultWorkItemPrompt(ref loop.WorkItemRef) string {
	where := ref.String()
	if u := ref.URL(); u != "" {
		where += " (" + u + ")"
	}
	return "You are the-loop's session for the work item " + where + ". Read the work item and work on it. " +
		"Replies from your operator arrive in this terminal, each starting with " +
		"\"Reply from the operator via the-loop control plane\"."
}

// StartSession starts a work item's session (decisions D23: an operator
// drives one by hand). A new session is a fresh conversation
// (--session-id <uuid>) booted with req.Prompt, or DefaultWorkItemPrompt;
// a recorded one whose pane is gone resumes its conversation (probed, and
// a fresh one when the resume does not take); a live pane under a record
// is already-running and is not touched; a live pane with no record is
// refused. Empty harness and cwd take the record's, then the config's
// defaults. A start that fails is a result with outcome failed and exit
// code 1 (session.spawn_failed); an invalid ref or unknown harness is an
// EINVALID error. With req.Slack, a session that is up is announced in
// Slack (announceWorkItem).
func (s *Service) StartSession(ctx context.Context, cfg *config.Config, req loop.SessionStartRequest) (loop.SessionStartResult, error) {
	item, err := loop.ParseWorkItemRef(req.Ref)
	if err != nil {
		return loop.SessionStartResult{}, err
	}
	defer s.lock(workItemLock(item))()
	st := &itemStarter{s: s, cfg: cfg, req: req, item: item, name: item.String(), target: item.TmuxTarget(),
		socket: cfg.Routing.Tmux.SocketName}
	for attempt := 0; attempt < 20; attempt++ {
		res, again, err := st.attempt(ctx)
		if err == nil && !again && req.Slack {
			res = s.announceWorkItem(ctx, cfg, item, res)
		}
		if err != nil || !again {
			return res, err
		}
	}
	return st.failed(nil, "the record kept changing under the start; try again"), nil
}

// itemStarter carries one work item's start through its transitions.
type itemStarter struct {
	s      *Service
	cfg    *config.Config
	req    loop.SessionStartRequest
	item   loop.WorkItemRef
	name   string // the ref, canonical
	target string
	socket string // the configured socket: where a new pane goes
	runner loop.Runner
	wr     loop.WorkItemRunner
	// pending events ride on the next transition.
	pending []loop.Event
}

func (st *itemStarter) result(rec *store.SessionRecord, running bool, outcome string, msgs ...loop.Message) loop.SessionStartResult {
	res := loop.SessionStartResult{WorkItem: st.name, Outcome: outcome, Messages: msgs}
	if rec != nil && shown(rec) {
		row := workItemRow(rec, running)
		res.Session = &row
	}
	if outcome == loop.OutcomeFailed {
		res.ExitCode = 1
	}
	if res.Messages == nil {
		res.Messages = []loop.Message{}
	}
	return res
}

func (st *itemStarter) failed(rec *store.SessionRecord, detail string) loop.SessionStartResult {
	return st.result(rec, false, loop.OutcomeFailed,
		loop.Message{Stream: "err", Text: fmt.Sprintf("error: could not start a session for %s: %s", st.name, detail)})
}

// attempt evaluates the record and the pane once; again asks for another
// evaluation (a claim finished, or the record changed meanwhile).
func (st *itemStarter) attempt(ctx context.Context) (res loop.SessionStartResult, again bool, err error) {
	s := st.s
	rec, err := s.readWorkItem(st.item)
	if err != nil {
		return loop.SessionStartResult{}, false, err
	}
	if rec != nil && rec.Claim != nil {
		if s.claimLive(rec.Claim) {
			if err := s.waitWorkItemClaim(ctx, st.item, rec.Claim); err != nil {
				return st.failed(rec, loop.ErrorMessage(err)), false, nil
			}
		} else if err := s.settleWorkItemClaim(ctx, st.item, rec); err != nil && !errors.Is(err, errStale) {
			return st.failed(rec, loop.ErrorMessage(err)), false, nil
		}
		return loop.SessionStartResult{}, true, nil
	}
	harness := st.req.Harness
	if harness == "" && rec != nil {
		harness = rec.Harness
	}
	if harness == "" {
		harness = st.cfg.Routing.DefaultHarness
	}
	adapter, err := s.Harness(harness, st.name)
	if err != nil {
		return loop.SessionStartResult{}, false, unknownHarness(err, harness, st.name)
	}
	// An active record's pane is probed where it runs.
	socket := st.socket
	if rec != nil && rec.Status == loop.SessionActive {
		socket = rec.TmuxSocket
	}
	runner, wr, err := s.workItemRunner(socket)
	if err != nil {
		return loop.SessionStartResult{}, false, err
	}
	state := probe(ctx, runner, st.target)
	if state == loop.PaneUnknown {
		return st.failed(rec, fmt.Sprintf("tmux did not answer whether %s exists; not spawning over it", st.target)), false, nil
	}
	if state == loop.PaneLive {
		res, again := st.live(ctx, rec, runner, socket)
		return res, again, nil
	}
	if socket != st.socket { // the old socket's pane is gone: start on the configured one
		if runner, wr, err = s.workItemRunner(st.socket); err != nil {
			return loop.SessionStartResult{}, false, err
		}
		if state = probe(ctx, runner, st.target); state == loop.PaneUnknown || state == loop.PaneLive {
			return st.failed(rec, fmt.Sprintf("tmux session %s on the configured socket is %s; not spawning over it", st.target, state)), false, nil
		}
	}
	st.runner, st.wr = runner, wr
	res, again = st.spawn(ctx, rec, state, harness, adapter)
	return res, again, nil
}

// unknownHarness words an adapter lookup's refusal for a work item.
func unknownHarness(err error, harness, ref string) error {
	msg := loop.ErrorMessage(err)
	known := ""
	if i := strings.LastIndex(msg, "(one of "); i >= 0 {
		known = " " + msg[i:]
	}
	return loop.Invalid("unknown harness '%s' for the session of %s%s", harness, ref, known)
}

// live handles a live pane: refused without a record, else already-running.
func (st *itemStarter) live(ctx context.Context, rec *store.SessionRecord, runner loop.Runner, socket string) (loop.SessionStartResult, bool) {
	s := st.s
	if rec != nil {
		mine, err := ours(ctx, runner, st.target, rec.HarnessSessionID)
		if err != nil {
			return st.failed(rec, loop.ErrorMessage(err)), false
		}
		if !mine {
			why := "it is not the agent the-loop started for this work item"
			if err := s.Emit(s.event("session.spawn_failed", loop.LevelError, loop.F("work_item", st.name),
				loop.F("tmux_target", st.target), loop.F("error", "tmux session exists but "+why))); err != nil {
				return st.failed(rec, err.Error()), false
			}
			return st.failed(rec, notOurs(st.target, socket, why)), false
		}
	}
	if rec == nil {
		// The machine refuses "refuse" if a record appeared meanwhile.
		_, err := s.workItemTransition(ctx, st.item, WorkItemEvRefuse, nil, s.event("session.spawn_failed", loop.LevelError,
			loop.F("work_item", st.name), loop.F("tmux_target", st.target),
			loop.F("error", "tmux session exists but the-loop has no record for it")))
		if errors.Is(err, errStale) || errors.Is(err, ErrTransition) {
			return loop.SessionStartResult{}, true
		}
		detail := notOurs(st.target, socket, "the-loop has no record of it")
		if err != nil {
			detail = err.Error()
		}
		return st.failed(nil, detail), false
	}
	seenStatus, seenID := rec.Status, rec.HarnessSessionID
	out, err := s.workItemTransition(ctx, st.item, WorkItemEvAlreadyRunning, func(r *store.SessionRecord) error {
		if r.Status != seenStatus || r.HarnessSessionID != seenID || r.Claim != nil {
			return errStale
		}
		if r.TmuxTarget == "" {
			r.TmuxTarget = st.target
		}
		return nil
	})
	if errors.Is(err, errStale) || errors.Is(err, ErrTransition) {
		return loop.SessionStartResult{}, true
	}
	if err != nil {
		return st.failed(rec, err.Error()), false
	}
	return st.result(out, true, loop.OutcomeAlreadyRunning,
		loop.Message{Stream: "out", Text: fmt.Sprintf("%s is already running (%s)", st.name, out.Harness)}), false
}

// spawn claims the session, clears a dead pane, checks the cwd and the
// harness binary, and spawns (resume first when there is a conversation
// of the same harness to continue).
func (st *itemStarter) spawn(ctx context.Context, rec *store.SessionRecord, state loop.PaneState, harness string, adapter loop.Harness) (loop.SessionStartResult, bool) {
	s := st.s
	tmux := st.cfg.Routing.Tmux
	resume := rec != nil && rec.HarnessSessionID != "" && rec.Harness == harness && tmux.ResumeOnRespawn
	claim := &loop.Claim{Op: "start", PID: os.Getpid(), Since: s.stamp(), Resume: resume}
	if resume {
		claim.HarnessSessionID = rec.HarnessSessionID
	} else {
		claim.HarnessSessionID = s.newID()
	}
	seenStatus, seenID := "", ""
	if rec != nil {
		seenStatus, seenID = rec.Status, rec.HarnessSessionID
	}
	cred, err := s.newAgentCredential(st.cfg, st.target) // issue 14: the spawn's own credential
	if err != nil {
		return st.failed(rec, loop.ErrorMessage(err)), false
	}
	claimed, err := s.workItemTransition(ctx, st.item, WorkItemEvClaimStart, func(r *store.SessionRecord) error {
		if r.Status != seenStatus || r.HarnessSessionID != seenID || r.Claim != nil {
			return errStale
		}
		r.Claim = claim
		r.AgentTokenHash = cred.hash
		r.TmuxSocket = st.socket
		r.TmuxTarget = st.target
		return nil
	})
	if errors.Is(err, errStale) || errors.Is(err, ErrTransition) {
		return loop.SessionStartResult{}, true
	}
	if err != nil {
		return st.failed(rec, err.Error()), false
	}
	sess := loop.WorkItemTarget{Ref: st.name, TmuxTarget: st.target}
	if state == loop.PaneDead {
		if err := st.wr.Kill(ctx, sess); err != nil && st.runner.State(ctx, st.target) != loop.PaneAbsent {
			return st.spawnFailed(ctx, fmt.Sprintf("tmux session %s holds a dead pane that could not be cleared (%v); not spawning over it", st.target, loop.ErrorMessage(err)),
				loop.F("tmux_target", st.target))
		}
		if _, err := s.workItemTransition(ctx, st.item, WorkItemEvClearDead, nil, s.event("session.dead_pane_cleared", loop.LevelInfo,
			loop.F("work_item", st.name), loop.F("tmux_target", st.target))); err != nil {
			return st.failed(rec, err.Error()), false
		}
	}
	cwd := st.req.Cwd
	if cwd == "" && rec != nil {
		cwd = rec.Cwd
	}
	if cwd == "" {
		cwd = st.cfg.Routing.SpawnWorkdir
	}
	given := cwd
	cwd = expandHome(cwd)
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs // the record names the directory, wherever the next verb runs from
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return st.spawnFailed(ctx, fmt.Sprintf("cwd '%s' is not a directory; a session is never spawned into a directory that is not there", given))
	}
	bin, err := s.LookPath(adapter.Binary())
	if err != nil {
		return st.spawnFailed(ctx, fmt.Sprintf("harness CLI '%s' not found on PATH — install it or point the %s adapter at the binary", adapter.Binary(), adapter.Name()),
			loop.F("harness", harness))
	}
	args := st.cfg.Routing.HarnessArgs[harness]
	if err := adapter.Prepare(cwd, args); err != nil {
		st.pending = append(st.pending, s.event("workspace.trust_failed", loop.LevelWarning,
			loop.F("work_item", st.name), loop.F("harness", harness), loop.F("cwd", cwd), loop.F("error", err.Error())))
	}
	id := claimed.Claim.HarnessSessionID
	if resume {
		// The conversation goes on: only a prompt the operator gave is
		// submitted into it.
		argv, err := adapter.ResumeArgv(id, args, st.req.Prompt)
		if err == nil {
			err = st.wr.Spawn(ctx, st.item, cred.spec(adapter.Name(), loop.SpawnSpec{Argv: append([]string{bin}, argv...), Cwd: cwd, Tag: id}))
		}
		if err == nil && !survives(ctx, st.runner, st.target, tmux.ResumeProbe()) {
			err = errors.New("the resumed pane did not survive the probe")
		}
		if err == nil {
			return st.up(ctx, WorkItemEvResumed, harness, id, cwd, loop.OutcomeResumed)
		}
		_ = st.wr.Kill(ctx, sess)
		id = s.newID()
		if _, terr := s.workItemTransition(ctx, st.item, WorkItemEvResumeFailed, func(r *store.SessionRecord) error {
			r.Claim.HarnessSessionID, r.Claim.Resume = id, false
			return nil
		}, append(st.takePending(), s.event("session.resume_failed", loop.LevelWarning,
			loop.F("work_item", st.name), loop.F("harness_session_id", claimed.Claim.HarnessSessionID),
			loop.F("error", loop.ErrorMessage(err))))...); terr != nil {
			return st.failed(rec, terr.Error()), false
		}
	}
	prompt := st.req.Prompt
	if prompt == "" {
		prompt = DefaultWorkItemPrompt(st.item)
	}
	argv, err := adapter.FreshArgv(id, args, prompt)
	if err == nil {
		err = st.wr.Spawn(ctx, st.item, cred.spec(adapter.Name(), loop.SpawnSpec{Argv: append([]string{bin}, argv...), Cwd: cwd, Tag: id}))
	}
	if err != nil {
		return st.spawnFailed(ctx, loop.ErrorMessage(err), loop.F("harness", harness), loop.F("tmux_target", st.target))
	}
	return st.up(ctx, WorkItemEvStarted, harness, id, cwd, loop.OutcomeStarted)
}

func (st *itemStarter) takePending() []loop.Event {
	p := st.pending
	st.pending = nil
	return p
}

// spawnFailed records session.spawn_failed and releases the claim (back to
// absent, closed or active, wherever the start came from).
func (st *itemStarter) spawnFailed(ctx context.Context, detail string, extra ...loop.Field) (loop.SessionStartResult, bool) {
	s := st.s
	fields := append([]loop.Field{loop.F("work_item", st.name)}, extra...)
	fields = append(fields, loop.F("error", detail))
	out, err := s.workItemTransition(ctx, st.item, WorkItemEvSpawnFailed, nil,
		append(st.takePending(), s.event("session.spawn_failed", loop.LevelError, fields...))...)
	if err != nil {
		detail += "; and the failure could not be recorded: " + err.Error()
	}
	return st.failed(out, detail), false
}

// up records a successful start or resume.
func (st *itemStarter) up(ctx context.Context, event, harness, id, cwd, outcome string) (loop.SessionStartResult, bool) {
	s := st.s
	ev := "session.started"
	if event == WorkItemEvResumed {
		ev = "session.resumed"
	}
	out, err := s.workItemTransition(ctx, st.item, event, func(r *store.SessionRecord) error {
		r.Harness = harness
		r.HarnessSessionID = id
		r.Cwd = cwd
		r.TmuxTarget = st.target
		r.TmuxSocket = st.socket
		r.URL = st.item.URL()
		if r.RecentDeliveries == nil {
			r.RecentDeliveries = []string{}
		}
		return nil
	}, append(st.takePending(), s.event(ev, loop.LevelInfo,
		loop.F("work_item", st.name), loop.F("harness", harness), loop.F("harness_session_id", id),
		loop.F("tmux_target", st.target), loop.F("cwd", cwd)))...)
	if err != nil {
		return st.failed(nil, "the agent runs in "+st.target+" but its record could not be written: "+err.Error()), false
	}
	return st.result(out, true, outcome, loop.Message{Stream: "out",
		Text: fmt.Sprintf("%s %s session for %s (tmux: %s)", outcome, harness, st.name, st.target)}), false
}
