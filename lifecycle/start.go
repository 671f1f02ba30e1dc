package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// okStart are the outcomes a start counts as success.
func okStart(outcome string) bool {
	return outcome == loop.OutcomeStarted || outcome == loop.OutcomeResumed || outcome == loop.OutcomeAlreadyRunning
}

// Start brings standing sessions up: the named one, or (name "") every
// declared entry and every created session (decisions D20); autoOnly keeps
// the ones that auto-start (what `the-loop start` uses). Sessions start
// concurrently; a session that fails is a failed row, never an error.
func (s *Service) Start(ctx context.Context, cfg *config.Config, name string, autoOnly bool) (loop.ControlResult, error) {
	block, err := standingBlock(cfg)
	if err != nil {
		return loop.ControlResult{}, err
	}
	var defs []loop.StandingDefinition
	if name != "" {
		def, err := s.entryFor(cfg, block, name)
		if err != nil {
			return loop.ControlResult{}, err
		}
		defs = append(defs, def)
	} else {
		recs, err := s.records()
		if err != nil {
			return loop.ControlResult{}, err
		}
		for _, d := range block.Sessions {
			if !autoOnly || d.AutoStart {
				defs = append(defs, d)
			}
		}
		for _, r := range recs {
			if _, declared := block.Get(r.Name); declared || r.Origin != loop.OriginCreated {
				continue
			}
			if !autoOnly || r.AutoStart {
				defs = append(defs, r.Definition())
			}
		}
	}
	rows := make([]loop.Row, len(defs))
	var wg sync.WaitGroup
	for i, d := range defs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i] = s.startOne(ctx, cfg, d)
		}()
	}
	wg.Wait()
	res := loop.ControlResult{Sessions: rows, OK: true}
	for _, r := range rows {
		res.OK = res.OK && okStart(r.Outcome)
	}
	return res, nil
}

// starter carries one start through its transitions.
type starter struct {
	s      *Service
	cfg    *config.Config
	def    loop.StandingDefinition
	target string
	socket string
	runner loop.Runner
	// pending events ride on the next transition.
	pending []loop.Event
}

func (st *starter) row(rec *loop.StandingRecord, running bool, outcome, detail string) loop.Row {
	var def *loop.StandingDefinition
	if st.def.Declared {
		def = &st.def
	}
	r := rowFor(st.def.Name, def, rec, running)
	if def == nil && rec == nil {
		r.Harness, r.Cwd, r.Description = st.def.Harness, st.def.Cwd, st.def.Description
	}
	r.Outcome, r.Detail = outcome, detail
	return r
}

func (st *starter) failed(rec *loop.StandingRecord, detail string) loop.Row {
	return st.row(rec, false, loop.OutcomeFailed, detail)
}

// startOne is one session's start (original §5.6 _start_one, made safe for
// concurrent processes by the claim).
func (s *Service) startOne(ctx context.Context, cfg *config.Config, def loop.StandingDefinition) loop.Row {
	defer s.lock(def.Name)()
	st := &starter{s: s, cfg: cfg, def: def, target: loop.TmuxTargetFor(def.Name), socket: cfg.Routing.Tmux.SocketName}
	for attempt := 0; attempt < 20; attempt++ {
		row, again := st.attempt(ctx)
		if !again {
			return row
		}
	}
	return st.failed(nil, "the record kept changing under the start; try again")
}

// attempt evaluates the record and the pane once; again asks for another
// evaluation (a claim finished, or the record changed meanwhile).
func (st *starter) attempt(ctx context.Context) (row loop.Row, again bool) {
	s, name := st.s, st.def.Name
	rec, err := s.read(name)
	if err != nil {
		return st.failed(nil, err.Error()), false
	}
	if rec != nil && rec.Claim != nil {
		if s.claimLive(rec.Claim) {
			if err := s.waitClaim(ctx, name, rec.Claim); err != nil {
				return st.failed(rec, loop.ErrorMessage(err)), false
			}
			return loop.Row{}, true
		}
		if _, err := s.settleStaleClaim(ctx, rec); err != nil && !errors.Is(err, errStale) {
			return st.failed(rec, loop.ErrorMessage(err)), false
		}
		return loop.Row{}, true
	}
	// A running record on another socket is probed where it runs.
	socket := st.socket
	if rec != nil && rec.Status == loop.StatusRunning {
		socket = rec.TmuxSocket
	}
	runner := s.Runner(socket)
	state := probe(ctx, runner, st.target)
	if state == loop.PaneUnknown {
		return st.failed(rec, fmt.Sprintf("tmux did not answer whether %s exists; not spawning over it", st.target)), false
	}
	if state == loop.PaneLive {
		return st.live(ctx, rec, runner, socket)
	}
	if socket != st.socket { // the old socket's pane is gone: start on the configured one
		runner = s.Runner(st.socket)
		if state = probe(ctx, runner, st.target); state == loop.PaneUnknown || state == loop.PaneLive {
			return st.failed(rec, fmt.Sprintf("tmux session %s on the configured socket is %s; not spawning over it", st.target, state)), false
		}
	}
	st.runner = runner
	return st.spawn(ctx, rec, state)
}

// live handles a live pane: already-running when it is the agent the
// record says the-loop started (its tag), refused otherwise — with no record,
// or under a record it does not belong to — and never touched.
func (st *starter) live(ctx context.Context, rec *loop.StandingRecord, runner loop.Runner, socket string) (loop.Row, bool) {
	s, name := st.s, st.def.Name
	why := "the-loop has no record of it"
	if rec != nil && rec.Status != loop.StatusAbsent {
		mine, err := ours(ctx, runner, st.target, rec.HarnessSessionID)
		if err != nil {
			return st.failed(rec, loop.ErrorMessage(err)), false
		}
		if mine {
			seen := rec.Rev
			out, err := s.transition(ctx, name, EvAlreadyRunning, func(r *loop.StandingRecord) error {
				if r.Rev != seen || r.Claim != nil {
					return errStale
				}
				return nil
			})
			if errors.Is(err, errStale) || errors.Is(err, ErrTransition) {
				return loop.Row{}, true
			}
			if err != nil {
				return st.failed(rec, err.Error()), false
			}
			return st.row(out, true, loop.OutcomeAlreadyRunning, ""), false
		}
		why = "it is not the agent the-loop started for this record"
	}
	// The machine refuses "refuse" if the record changed meanwhile.
	seen := uint64(0)
	if rec != nil {
		seen = rec.Rev
	}
	_, err := s.transition(ctx, name, EvRefuse, func(r *loop.StandingRecord) error {
		if r.Rev != seen {
			return errStale
		}
		return nil
	}, s.event("standing.spawn_failed", loop.LevelError,
		loop.F("standing", name), loop.F("tmux_target", st.target),
		loop.F("error", "tmux session exists but "+why)))
	if errors.Is(err, errStale) || errors.Is(err, ErrTransition) {
		return loop.Row{}, true
	}
	detail := notOurs(st.target, socket, why)
	if err != nil {
		detail = err.Error()
	}
	if rec != nil && rec.Status == loop.StatusAbsent {
		rec = nil
	}
	return st.failed(rec, detail), false
}

// spawn claims the session, clears a dead pane, checks the definition and
// spawns (resume first when there is a conversation to continue).
func (st *starter) spawn(ctx context.Context, rec *loop.StandingRecord, state loop.PaneState) (loop.Row, bool) {
	s, name, def := st.s, st.def.Name, st.def
	tmux := st.cfg.Routing.Tmux
	resume := rec != nil && rec.HarnessSessionID != "" && tmux.ResumeOnRespawn
	claim := &loop.Claim{Op: "start", PID: os.Getpid(), Since: s.stamp(), Resume: resume}
	if resume {
		claim.HarnessSessionID = rec.HarnessSessionID
	} else {
		claim.HarnessSessionID = s.newID()
	}
	seen := uint64(0)
	if rec != nil {
		seen = rec.Rev
	}
	origin := loop.OriginConfig
	if !def.Declared {
		origin = loop.OriginCreated
	}
	cred, err := s.newAgentCredential(st.cfg, st.target) // issue 14: the spawn's own credential
	if err != nil {
		return st.failed(rec, loop.ErrorMessage(err)), false
	}
	claimed, err := s.transition(ctx, name, EvClaimStart, func(r *loop.StandingRecord) error {
		if r.Rev != seen || r.Claim != nil {
			return errStale
		}
		r.Claim = claim
		r.AgentTokenHash = cred.hash
		r.TmuxSocket = st.socket
		if r.Origin == "" {
			r.Origin = origin
		}
		// The definition rides with the claim, so a start interrupted after
		// its spawn is recovered into a record that can be talked to.
		st.define(r)
		return nil
	})
	if errors.Is(err, errStale) || errors.Is(err, ErrTransition) {
		return loop.Row{}, true
	}
	if err != nil {
		return st.failed(rec, err.Error()), false
	}
	prior := rec
	if state == loop.PaneDead {
		if err := st.runner.KillTarget(ctx, st.target); err != nil && st.runner.State(ctx, st.target) != loop.PaneAbsent {
			return st.spawnFailed(ctx, prior, fmt.Sprintf("tmux session %s holds a dead pane that could not be cleared (%v); not spawning over it", st.target, err), loop.F("tmux_target", st.target))
		}
		if claimed, err = s.transition(ctx, name, EvClearDead, nil, s.event("standing.dead_pane_cleared", loop.LevelInfo,
			loop.F("standing", name), loop.F("tmux_target", st.target))); err != nil {
			return st.failed(prior, err.Error()), false
		}
	}
	prompt, err := BootPrompt(def, st.cfg.Slack.Enabled, st.socket)
	if err != nil {
		return st.spawnFailed(ctx, prior, loop.ErrorMessage(err))
	}
	cwd := expandHome(def.Cwd)
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs // the record names the directory, wherever stop runs from
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return st.spawnFailed(ctx, prior, fmt.Sprintf("cwd '%s' is not a directory; a standing session is never spawned into a directory that is not there", def.Cwd))
	}
	adapter, err := s.Harness(def.Harness, name)
	if err != nil {
		return st.spawnFailed(ctx, prior, loop.ErrorMessage(err), loop.F("harness", def.Harness))
	}
	bin, err := s.LookPath(adapter.Binary())
	if err != nil {
		return st.spawnFailed(ctx, prior, fmt.Sprintf("harness CLI '%s' not found on PATH — install it or point the %s adapter at the binary", adapter.Binary(), adapter.Name()), loop.F("harness", def.Harness))
	}
	if err := adapter.Prepare(cwd, def.HarnessArgs); err != nil {
		st.pending = append(st.pending, s.event("workspace.trust_failed", loop.LevelWarning,
			loop.F("standing", name), loop.F("harness", def.Harness), loop.F("cwd", cwd), loop.F("error", err.Error())))
	}
	id := claimed.Claim.HarnessSessionID
	if resume {
		argv, err := adapter.ResumeArgv(id, def.HarnessArgs, prompt)
		if err == nil {
			err = st.runner.SpawnIn(ctx, st.target, cred.spec(adapter.Name(), loop.SpawnSpec{Argv: append([]string{bin}, argv...), Cwd: cwd, Tag: id}))
		}
		if err == nil && !survives(ctx, st.runner, st.target, tmux.ResumeProbe()) {
			err = errors.New("the resumed pane did not survive the probe")
		}
		if err == nil {
			return st.up(ctx, EvResumed, id, cwd, loop.OutcomeResumed)
		}
		_ = st.runner.KillTarget(ctx, st.target)
		id = s.newID()
		if _, terr := s.transition(ctx, name, EvResumeFailed, func(r *loop.StandingRecord) error {
			r.Claim.HarnessSessionID, r.Claim.Resume = id, false
			return nil
		}, append(st.takePending(), s.event("standing.resume_failed", loop.LevelWarning,
			loop.F("standing", name), loop.F("harness_session_id", claimed.Claim.HarnessSessionID), loop.F("error", loop.ErrorMessage(err))))...); terr != nil {
			return st.failed(prior, terr.Error()), false
		}
	}
	argv, err := adapter.FreshArgv(id, def.HarnessArgs, prompt)
	if err == nil {
		err = st.runner.SpawnIn(ctx, st.target, cred.spec(adapter.Name(), loop.SpawnSpec{Argv: append([]string{bin}, argv...), Cwd: cwd, Tag: id}))
	}
	if err != nil {
		return st.spawnFailed(ctx, prior, loop.ErrorMessage(err), loop.F("harness", def.Harness), loop.F("tmux_target", st.target))
	}
	return st.up(ctx, EvStarted, id, cwd, loop.OutcomeStarted)
}

func (st *starter) takePending() []loop.Event {
	p := st.pending
	st.pending = nil
	return p
}

// spawnFailed records standing.spawn_failed and releases the claim.
func (st *starter) spawnFailed(ctx context.Context, prior *loop.StandingRecord, detail string, extra ...loop.Field) (loop.Row, bool) {
	s, name := st.s, st.def.Name
	fields := append([]loop.Field{loop.F("standing", name)}, extra...)
	fields = append(fields, loop.F("error", detail))
	out, err := s.transition(ctx, name, EvSpawnFailed, nil, append(st.takePending(), s.event("standing.spawn_failed", loop.LevelError, fields...))...)
	if err != nil {
		detail += "; and the failure could not be recorded: " + err.Error()
		out = prior
	}
	return st.failed(out, detail), false
}

// define writes the session's definition into its record (original §5.6
// step 11): what a created session is, and what a recovered start needs.
func (st *starter) define(r *loop.StandingRecord) {
	def := st.def
	if r.Status == loop.StatusAbsent || r.Status == "" { // no record before this start
		r.SlackChannel = def.SlackChannel
	}
	r.Harness = def.Harness
	if cwd, err := filepath.Abs(expandHome(def.Cwd)); err == nil {
		r.Cwd = cwd
	}
	r.Description = def.Description
	r.HarnessArgs = append([]string(nil), def.HarnessArgs...)
	r.Prompt = def.Prompt
	r.AutoStart = def.AutoStart
	r.SlackEnabled = def.SlackEnabled
	r.TmuxSocket = st.socket
}

// up records a successful start or resume and announces it (original §5.6
// steps 11–14).
func (st *starter) up(ctx context.Context, event, id, cwd, outcome string) (loop.Row, bool) {
	s, name, def := st.s, st.def.Name, st.def
	ev := "standing.started"
	if event == EvResumed {
		ev = "standing.resumed"
	}
	out, err := s.transition(ctx, name, event, func(r *loop.StandingRecord) error {
		st.define(r)
		r.HarnessSessionID = id
		r.Cwd = cwd
		r.StartedAt = s.stamp()
		return nil
	}, append(st.takePending(), s.event(ev, loop.LevelInfo,
		loop.F("standing", name), loop.F("harness", def.Harness), loop.F("harness_session_id", id),
		loop.F("tmux_target", st.target), loop.F("cwd", cwd)))...)
	if err != nil {
		return st.failed(nil, "the agent runs in "+st.target+" but its record could not be written: "+err.Error()), false
	}
	out = st.announce(ctx, out)
	return st.row(out, true, outcome, fmt.Sprintf("%s %s (%s %s)", outcome, st.target, def.Harness, id)), false
}
