package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/talk"
)

// okStop are the outcomes a stop counts as success.
func okStop(outcome string) bool {
	return outcome == loop.OutcomeStopped || outcome == loop.OutcomeNotRunning
}

// StopStanding stops the named session, or (name "") every recorded one whatever
// enabled and autoStart say. It works from the records — each carries the
// tmux socket it runs on — so a broken or edited config never strands a
// running agent. A live tmux session the-loop has no record of is never
// signalled.
func (s *Service) StopStanding(ctx context.Context, cfg *config.Config, name string) (loop.StandingControlResult, error) {
	if name != "" {
		if err := loop.CheckName(name); err != nil {
			return loop.StandingControlResult{}, err
		}
	}
	block := tolerantBlock(cfg)
	var names []string
	if name != "" {
		names = []string{name}
	} else {
		recs, err := s.records()
		if err != nil {
			return loop.StandingControlResult{}, err
		}
		for _, r := range recs {
			names = append(names, r.Name)
		}
		sort.Strings(names)
	}
	// A stop ends within its bound whatever holds a session: a row that
	// cannot finish in time is a failed row.
	ctx, cancel := context.WithTimeout(ctx, StopBound(cfg, len(names)))
	defer cancel()
	rows := make([]loop.StandingRow, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i] = s.stopOne(ctx, cfg, block, n)
		}()
	}
	wg.Wait()
	res := loop.StandingControlResult{Sessions: rows, OK: true}
	for _, r := range rows {
		res.OK = res.OK && okStop(r.Outcome)
	}
	return res, nil
}

// StopBound is how long a stop of n standing sessions may take before its
// rows that have not finished fail: the kill grace plus 5 s, and 50 ms a
// session beyond the first (a batch's tmux calls and hooks queue on one
// tmux server and the host's cores: 200 sessions get 10 s more). The
// SIGKILL, the wait for it and the kill-session that follow run past it,
// bounded too, so `the-loop stop` ends within StopBound plus 10 s.
func StopBound(cfg *config.Config, n int) time.Duration {
	return time.Duration(cfg.Routing.Tmux.HarnessKillGraceSeconds*float64(time.Second)) + 5*time.Second +
		time.Duration(max(n-1, 0))*stopPerSession
}

// stopPerSession is what StopBound allows each session of a batch beyond
// the first.
const stopPerSession = 50 * time.Millisecond

// MaxStopBatch is the batch the CLI's own bound on a stop allows for
// (verbBound): a stop of more sessions than this still ends, its rows
// beyond StopBound(cfg, MaxStopBatch) failed.
const MaxStopBatch = 1000

func (s *Service) stopOne(ctx context.Context, cfg *config.Config, block *config.StandingConfig, name string) loop.StandingRow {
	st := &standingStop{s: s, cfg: cfg, name: name, target: loop.TmuxTargetFor(name)}
	if d, ok := block.Get(name); ok {
		st.def = &d
	}
	unlock, err := s.engine().LockCtx(ctx, name)
	defer unlock()
	if err != nil {
		return st.row(nil, loop.OutcomeFailed, loop.ErrorMessage(err)+"; nothing was stopped — run the stop again once it finishes")
	}
	for attempt := 0; attempt < 20; attempt++ {
		if r, done := st.attempt(ctx); done {
			return r
		}
	}
	return st.row(nil, loop.OutcomeFailed, "the record kept changing under the stop; try again")
}

// standingStop is one stop of standing session name, under its lock.
type standingStop struct {
	s      *Service
	cfg    *config.Config
	name   string
	target string
	def    *loop.StandingDefinition
}

// row is the stop's row for rec with outcome and detail.
func (st *standingStop) row(rec *loop.StandingRecord, outcome, detail string) loop.StandingRow {
	r := rowFor(st.name, st.def, rec, false)
	r.Outcome, r.Detail = outcome, detail
	return r
}

// attempt reads the record and stops what it finds; done is false when the
// record changed under it (the stop looks again).
func (st *standingStop) attempt(ctx context.Context) (loop.StandingRow, bool) {
	s, name, target := st.s, st.name, st.target
	rec, err := s.read(name)
	if err != nil {
		return st.row(nil, loop.OutcomeFailed, err.Error()), true
	}
	if rec == nil || (rec.Status == loop.StatusAbsent && rec.Claim == nil) {
		return st.row(nil, loop.OutcomeNotRunning, "the-loop has no record of this session; nothing of its own to stop"), true
	}
	// A store opened read-only (one a newer the-loop wrote) is never
	// written: its claims stay as they are and nothing is recorded.
	readOnly := s.DB.ReadOnly()
	if rec.Claim != nil && !readOnly {
		if err := engine.ClearClaim(ctx, s.engine(), standingKind{name: name}, rec); err != nil {
			return st.row(rec, loop.OutcomeFailed, loop.ErrorMessage(err)), true
		}
		return loop.StandingRow{}, false
	}
	runner := s.Runner(rec.TmuxSocket)
	switch engine.Probe(ctx, runner, target) {
	case loop.PaneUnknown:
		return st.row(rec, loop.OutcomeFailed, fmt.Sprintf("tmux did not answer whether %s exists; the record is kept as it was", target)), true
	case loop.PaneAbsent:
		return st.notRunning(ctx, rec, readOnly, "")
	}
	// the-loop releases what the-loop started: a session under this
	// name that does not carry the record's tag is never signalled.
	mine, err := engine.Ours(ctx, runner, target, rec.TagFor(rec.HarnessSessionID))
	if err != nil {
		return st.row(rec, loop.OutcomeFailed, loop.ErrorMessage(err)), true
	}
	if !mine {
		return st.notRunning(ctx, rec, readOnly, engine.NotOurs(target, rec.TmuxSocket, "it is not the agent the-loop started for this record; not signalling it"))
	}
	if !readOnly {
		claim := s.engine().NewClaim("stop")
		_, err = s.transition(ctx, name, engine.EvClaimStop, func(r *loop.StandingRecord) error {
			if r.Rev != rec.Rev || r.Claim != nil {
				return engine.ErrStale
			}
			r.Claim = claim
			return nil
		})
		if errors.Is(err, engine.ErrStale) || errors.Is(err, engine.ErrTransition) {
			return loop.StandingRow{}, false
		}
		if err != nil {
			return st.row(rec, loop.OutcomeFailed, err.Error()), true
		}
	}
	return st.end(ctx, rec, runner, readOnly), true
}

// notRunning records that rec's session was found not running (its pane
// absent, or not the-loop's); done is false when the record changed
// meanwhile.
func (st *standingStop) notRunning(ctx context.Context, rec *loop.StandingRecord, readOnly bool, detail string) (loop.StandingRow, bool) {
	if readOnly {
		return st.row(rec, loop.OutcomeNotRunning, detail), true
	}
	s := st.s
	out, err := s.transition(ctx, st.name, engine.EvNotRunning, func(r *loop.StandingRecord) error {
		if r.Rev != rec.Rev || r.Claim != nil {
			return engine.ErrStale
		}
		if r.LastDown == nil && r.Status == loop.StatusRunning { // what ended it was not recorded
			r.LastDown = &loop.Down{Why: "an operator's stop found its agent already gone", At: s.stamp()}
		}
		return nil
	})
	if errors.Is(err, engine.ErrStale) || errors.Is(err, engine.ErrTransition) {
		return loop.StandingRow{}, false
	}
	if err != nil {
		return st.row(rec, loop.OutcomeFailed, err.Error()), true
	}
	return st.row(out, loop.OutcomeNotRunning, detail), true
}

// end ends the claimed session's agent and records how the stop went.
func (st *standingStop) end(ctx context.Context, rec *loop.StandingRecord, runner loop.Runner, readOnly bool) loop.StandingRow {
	s, name, target := st.s, st.name, st.target
	killErr := endAgent(ctx, runner, target, loop.StandingRef(name), st.cfg.Routing.Tmux.HarnessKillGraceSeconds)
	if readOnly {
		if killErr != nil {
			return st.row(rec, loop.OutcomeFailed, loop.ErrorMessage(killErr)+"; nothing recorded: the store is read-only")
		}
		return st.row(rec, loop.OutcomeStopped, "stopped "+target+"; nothing recorded: the store is read-only")
	}
	if killErr != nil {
		out, err := s.transition(ctx, name, engine.EvStopFailed, downBy(s, "stopped by an operator's stop, which could not end it all: "+loop.ErrorMessage(killErr)), s.event("standing.stop_failed", loop.LevelWarning,
			loop.F("standing", name), loop.F("tmux_target", target), loop.F("error", loop.ErrorMessage(killErr))))
		if err != nil {
			out = rec
		}
		return st.row(out, loop.OutcomeFailed, loop.ErrorMessage(killErr))
	}
	out, err := s.transition(ctx, name, engine.EvStopped, downBy(s, "stopped by an operator's stop"), s.event("standing.stopped", loop.LevelInfo,
		loop.F("standing", name), loop.F("tmux_target", target)))
	if err != nil {
		return st.row(rec, loop.OutcomeFailed, "stopped "+target+" but the record could not be written: "+err.Error())
	}
	return st.row(out, loop.OutcomeStopped, "stopped "+target)
}

// endAgent ends target's agent: SIGTERM to its process tree, SIGKILL after
// graceSeconds, then the tmux session killed. The order is load-bearing:
// the agent flushes its conversation on SIGTERM; a kill-session straight
// away would lose it. The error says what could not be ended.
func endAgent(ctx context.Context, runner loop.Runner, target, label string, graceSeconds float64) error {
	grace := time.Duration(graceSeconds * float64(time.Second))
	termErr := runner.TerminateHarnessIn(ctx, target, label, grace)
	// The kill runs even when the stop's bound has passed (then the
	// terminate escalated at once): bounded on its own, by what is left of
	// the stop's bound plus 5 s.
	bound := 5 * time.Second
	if deadline, ok := ctx.Deadline(); ok {
		bound += max(time.Until(deadline), 0)
	}
	kctx, kcancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer kcancel()
	killErr := runner.KillTarget(kctx, target)
	if killErr != nil && runner.State(kctx, target) == loop.PaneAbsent {
		killErr = nil
	}
	if killErr == nil && termErr != nil && loop.ErrorCode(termErr) != loop.ENOTFOUND {
		// The session is gone but part of the agent's process tree may
		// have outlived SIGKILL (decisions D12): say so.
		killErr = loop.Internal("%s: %s", target, loop.ErrorMessage(termErr))
	}
	return killErr
}

// downBy is a transition's mutate recording why the session went down.
func downBy(s *Service, why string) func(r *loop.StandingRecord) error {
	return func(r *loop.StandingRecord) error {
		r.LastDown = &loop.Down{Why: why, At: s.stamp()}
		return nil
	}
}

// RestartStanding stops then starts one named session; the conversation resumes.
func (s *Service) RestartStanding(ctx context.Context, cfg *config.Config, name string) (loop.StandingControlResult, error) {
	if name == "" {
		return loop.StandingControlResult{}, loop.Invalid("restart names one standing session; it has no 'all' form")
	}
	if err := loop.CheckName(name); err != nil {
		return loop.StandingControlResult{}, err
	}
	block, err := standingBlock(cfg)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	def, err := s.entryFor(cfg, block, name)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	if _, err := s.HarnessBinary(cfg, def.Harness, name); err != nil {
		// What could not start again is not stopped.
		return s.notRestarted(ctx, def, block, name, err), nil
	}
	stopped, err := s.StopStanding(ctx, cfg, name)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	started, err := s.startStanding(ctx, cfg, name, false, talk.WhyRestart)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	started.OK = started.OK && stopped.OK
	started.Stopped = stopped.Sessions
	return started, nil
}

// notRestarted is a restart's result when the session could not be started
// again: one failed row saying why, and that it was left as it was.
func (s *Service) notRestarted(ctx context.Context, def loop.StandingDefinition, block *config.StandingConfig, name string, why error) loop.StandingControlResult {
	var declared *loop.StandingDefinition
	if d, ok := block.Get(name); ok {
		declared = &d
	}
	rec, _ := s.read(name)
	live := rec != nil && engine.Probe(ctx, s.Runner(rec.TmuxSocket), loop.TmuxTargetFor(name)) == loop.PaneLive
	row := rowFor(name, declared, rec, live)
	if declared == nil && rec == nil {
		row.Harness, row.Cwd = def.Harness, def.Cwd
	}
	row.Outcome = loop.OutcomeFailed
	row.Detail = "not restarted, nothing was stopped: " + loop.ErrorMessage(why)
	return loop.StandingControlResult{Sessions: []loop.StandingRow{row}}
}

// ControlStanding dispatches a control verb by name (REST's /control). An invalid
// name is refused whatever the verb (EINVALID); "" means every session.
func (s *Service) ControlStanding(ctx context.Context, cfg *config.Config, name, verb string, autoOnly bool) (loop.StandingControlResult, error) {
	if name != "" {
		if err := loop.CheckName(name); err != nil {
			return loop.StandingControlResult{}, err
		}
	}
	if verb == "start" || verb == "restart" {
		if err := s.tmuxMissing(verb); err != nil {
			return loop.StandingControlResult{}, err
		}
	}
	switch verb {
	case "start":
		return s.StartStanding(ctx, cfg, name, autoOnly)
	case "stop":
		return s.StopStanding(ctx, cfg, name)
	case "restart":
		return s.RestartStanding(ctx, cfg, name)
	}
	return loop.StandingControlResult{}, loop.Invalid("unknown verb '%s' (one of start, stop, restart)", verb)
}
