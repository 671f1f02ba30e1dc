package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/talk"
)

// okStart are the outcomes a start counts as success.
func okStart(outcome string) bool {
	return outcome == loop.OutcomeStarted || outcome == loop.OutcomeResumed || outcome == loop.OutcomeAlreadyRunning
}

// StartStanding brings standing sessions up: the named one, or (name "") every
// declared entry and every created session (decisions D20); autoOnly keeps
// the ones that auto-start (what `the-loop start` uses). Sessions start
// concurrently; a session that fails is a failed row, never an error.
func (s *Service) StartStanding(ctx context.Context, cfg *config.Config, name string, autoOnly bool) (loop.StandingControlResult, error) {
	return s.startStanding(ctx, cfg, name, autoOnly, talk.WhyStart)
}

// startStanding is StartStanding saying why a resumed conversation is
// resumed (talk.ResumeNotice).
func (s *Service) startStanding(ctx context.Context, cfg *config.Config, name string, autoOnly bool, why string) (loop.StandingControlResult, error) {
	block, err := standingBlock(cfg)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	var defs []loop.StandingDefinition
	if name != "" {
		def, err := s.entryFor(cfg, block, name)
		if err != nil {
			return loop.StandingControlResult{}, err
		}
		if err := s.checkTrustCwd(cfg, def.Cwd, def.Cwd == cfg.Routing.SpawnWorkdir); err != nil {
			return loop.StandingControlResult{}, err
		}
		defs = append(defs, def)
	} else {
		recs, err := s.records()
		if err != nil {
			return loop.StandingControlResult{}, err
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
	rows := make([]loop.StandingRow, len(defs))
	var wg sync.WaitGroup
	for i, d := range defs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i] = s.startOne(ctx, cfg, d, why)
		}()
	}
	wg.Wait()
	res := loop.StandingControlResult{Sessions: rows, OK: true}
	for _, r := range rows {
		res.OK = res.OK && okStart(r.Outcome)
	}
	return res, nil
}

// standingStart is a standing session's start, as the engine's starter
// (starter.go) drives it.
type standingStart struct {
	standingKind
	s   *Service
	cfg *config.Config
	def loop.StandingDefinition
	// why says, in a resumed conversation's notice, why it was resumed.
	why string
}

// startOne is one session's start (original §5.6 _start_one, made safe for
// concurrent processes by the claim): startLocked under the name's lock,
// given up when ctx ends.
func (s *Service) startOne(ctx context.Context, cfg *config.Config, def loop.StandingDefinition, why string) loop.StandingRow {
	unlock, err := s.engine().LockCtx(ctx, def.Name)
	defer unlock()
	if err != nil {
		st := &standingStart{standingKind: standingKind{name: def.Name}, s: s, cfg: cfg, def: def, why: why}
		return st.Result(nil, false, loop.OutcomeFailed, loop.ErrorMessage(err))
	}
	return s.startLocked(ctx, cfg, def, why)
}

// startLocked is startOne with the name's lock held by the caller.
func (s *Service) startLocked(ctx context.Context, cfg *config.Config, def loop.StandingDefinition, why string) loop.StandingRow {
	st := &standingStart{standingKind: standingKind{name: def.Name}, s: s, cfg: cfg, def: def, why: why}
	row, err := engine.Start(ctx, s.engine(), cfg, st)
	if err != nil {
		return st.Result(nil, false, loop.OutcomeFailed, err.Error())
	}
	return row
}

func (st *standingStart) Runner(socket string) (loop.Runner, error) { return st.s.Runner(socket), nil }

func (st *standingStart) Ready(*loop.StandingRecord) error { return nil }

func (st *standingStart) Placed(rec *loop.StandingRecord) (string, bool) {
	if rec != nil && rec.Status == loop.StatusRunning {
		return rec.TmuxSocket, true
	}
	return "", false
}

func (st *standingStart) Owns(rec *loop.StandingRecord) bool {
	return rec != nil && rec.Status != loop.StatusAbsent
}

// version is the record's revision: every transition bumps it.
func (st *standingStart) Version(rec *loop.StandingRecord) string {
	if rec == nil {
		return "0"
	}
	return strconv.FormatUint(rec.Rev, 10)
}

func (st *standingStart) Conversation(rec *loop.StandingRecord) (string, bool) {
	if rec == nil {
		return "", false
	}
	return rec.HarnessSessionID, true
}

func (st *standingStart) Claimed(r *loop.StandingRecord, c *loop.Claim, socket, tokenHash string) {
	r.Claim = c
	r.AgentTokenHash = tokenHash
	r.TmuxSocket = socket
	if r.Origin == "" {
		r.Origin = loop.OriginConfig
		if !st.def.Declared {
			r.Origin = loop.OriginCreated
		}
	}
	// The definition rides with the claim, so a start interrupted after
	// its spawn is recovered into a record that can be talked to.
	st.define(r)
}

func (st *standingStart) Adopted(r *loop.StandingRecord) { r.LastDown = nil }

// noteDown records why the session went down (a failed or refused start).
func (st *standingStart) NoteDown(r *loop.StandingRecord, why, at string) {
	r.LastDown = &loop.Down{Why: why, At: at}
}

func (st *standingStart) NotMine() string {
	return "it is not the agent the-loop started for this record"
}

// spawnIn holds one of standingSessions.startConcurrency's slots until the
// pane exists (the resume probe that follows holds none).
func (st *standingStart) SpawnIn(ctx context.Context, r loop.Runner, spec loop.SpawnSpec) error {
	release, err := st.s.engine().AcquireSpawn(ctx, st.cfg.Supervision.StartConcurrency)
	if err != nil {
		return err
	}
	defer release()
	return r.SpawnIn(ctx, st.Target(), spec)
}

// plan checks the definition: its boot prompt, its directory, its harness.
func (st *standingStart) Plan(*loop.StandingRecord) (engine.Plan, *engine.Refusal) {
	s, name, def := st.s, st.def.Name, st.def
	prompt, err := talk.BootPrompt(def, st.cfg.Slack.Enabled, st.cfg.Routing.Tmux.SocketName)
	if err != nil {
		return engine.Plan{}, &engine.Refusal{Detail: loop.ErrorMessage(err)}
	}
	cwd := config.ExpandHome(def.Cwd)
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs // the record names the directory, wherever stop runs from
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return engine.Plan{}, &engine.Refusal{Detail: fmt.Sprintf("cwd '%s' is not a directory; a standing session is never spawned into a directory that is not there", def.Cwd)}
	}
	if err := s.checkTrustCwd(st.cfg, def.Cwd, def.Cwd == st.cfg.Routing.SpawnWorkdir); err != nil {
		return engine.Plan{}, &engine.Refusal{Detail: loop.ErrorMessage(err), Fields: []loop.Field{loop.F("cwd", def.Cwd)}}
	}
	adapter, err := s.Harness(def.Harness, name)
	if err != nil {
		return engine.Plan{}, &engine.Refusal{Detail: loop.ErrorMessage(err), Fields: []loop.Field{loop.F("harness", def.Harness)}}
	}
	resume := prompt
	if st.cfg.Supervision.ResumePrompt != config.ResumeFull {
		resume = talk.ResumeNotice(name, st.why)
	}
	return engine.Plan{Harness: def.Harness, Adapter: adapter, Args: spawnArgs(def), Cwd: cwd, Env: def.Env, ResumePrompt: resume, FreshPrompt: prompt,
		Rules: st.cfg.Standing.RulesFor(def)}, nil
}

// spawnArgs are the harness arguments of def's spawn: --permission-mode
// first when it has one, then its harnessArgs.
func spawnArgs(def loop.StandingDefinition) []string {
	if def.PermissionMode == "" {
		return def.HarnessArgs
	}
	return append([]string{"--permission-mode", def.PermissionMode}, def.HarnessArgs...)
}

// define writes the session's definition into its record (original §5.6
// step 11): what a created session is, and what a recovered start needs.
func (st *standingStart) define(r *loop.StandingRecord) {
	def := st.def
	if r.Status == loop.StatusAbsent || r.Status == "" { // no record before this start
		r.SlackChannel = def.SlackChannel
	}
	r.Harness = def.Harness
	if cwd, err := filepath.Abs(config.ExpandHome(def.Cwd)); err == nil {
		r.Cwd = cwd
	}
	r.Description = def.Description
	r.HarnessArgs = append([]string(nil), def.HarnessArgs...)
	r.Prompt = def.Prompt
	r.AutoStart = def.AutoStart
	r.SlackEnabled = def.SlackEnabled
	r.Restart = def.Restart
	r.TmuxSocket = st.cfg.Routing.Tmux.SocketName
}

// up records a successful start or resume (original §5.6 steps 11–14).
func (st *standingStart) Up(r *loop.StandingRecord, p engine.Plan, id, _ string) {
	st.define(r)
	r.HarnessSessionID = id
	r.Cwd = p.Cwd
	r.StartedAt = st.s.stamp()
	addTrust(r, p.TrustAdded)
	r.LastDown = nil
}

// result is the start's row.
func (st *standingStart) Result(rec *loop.StandingRecord, running bool, outcome, detail string) loop.StandingRow {
	var def *loop.StandingDefinition
	if st.def.Declared {
		def = &st.def
	}
	r := rowFor(st.def.Name, def, rec, running)
	if def == nil && rec == nil {
		r.Harness, r.Cwd, r.Description = st.def.Harness, st.def.Cwd, st.def.Description
	}
	if outcome != loop.OutcomeFailed && outcome != loop.OutcomeAlreadyRunning && rec != nil && detail == "" {
		detail = fmt.Sprintf("%s %s (%s %s)", outcome, st.Target(), rec.Harness, rec.HarnessSessionID)
	}
	r.Outcome, r.Detail = outcome, detail
	return r
}
