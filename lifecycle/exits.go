package lifecycle

import (
	"context"
	"fmt"
	"math"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/talk"
)

// This file is the engine's side of supervision: the verbs the service's
// supervisor (package supervision) records exits and restarts through, and
// what lifecycle asks of the supervisor in return. The supervisor decides
// when a pane is dead, whether it restarts and after which delay; each
// state change it asks for is one transition here, guarded by the
// revision the supervisor saw, so an operator's verb meanwhile (a claim,
// then another status or another pane) always has the last word.

// Supervisor is what lifecycle needs of the service's supervisor
// (supervision.Supervisor). Service.Supervisor is nil without one — in a
// CLI process — and then nothing restarts and no row says supervised.
type Supervisor interface {
	// Active reports whether the supervisor runs: rows say supervised
	// only then.
	Active() bool
	// Poke asks for a look now (a SessionEnd hook's signal); it never
	// acts by itself.
	Poke()
}

// StandingRecords returns every standing record, as the supervisor looks
// at them.
func (s *Service) StandingRecords() ([]*loop.StandingRecord, error) { return s.records() }

// DefinitionOf is what a restart of rec would start: the entry declared in
// cfg, or a created session's record; ok false when neither (the entry
// was removed, or the block does not parse).
func DefinitionOf(cfg *config.Config, rec *loop.StandingRecord) (def loop.StandingDefinition, ok bool) {
	if cfg.StandingErr != nil || cfg.Standing == nil {
		return loop.StandingDefinition{}, false
	}
	if def, ok := cfg.Standing.Get(rec.Name); ok {
		return def, true
	}
	if rec.Origin == loop.OriginCreated {
		return rec.Definition(), true
	}
	return loop.StandingDefinition{}, false
}

// RecordExit records that the agent of rec (the record as the supervisor
// last read it) exited as exit says: transition EvExited sets the record's
// last exit and why it is down, and standing.exited (a warning for a
// failure, info otherwise) carries the status or signal tmux reported. It
// holds the name's lock and acts only on rec's revision, unclaimed. It
// returns the exited record; nil and no error when the record changed
// meanwhile or its state no longer allows the exit.
func (s *Service) RecordExit(ctx context.Context, rec *loop.StandingRecord, exit *loop.ExitInfo) (*loop.StandingRecord, error) {
	name, target := rec.Name, loop.TmuxTargetFor(rec.Name)
	var code any
	if exit.Code != nil {
		code = *exit.Code
	}
	level := loop.LevelInfo
	if exit.Failure() {
		level = loop.LevelWarning
	}
	unlock := s.engine().Lock(name)
	exited, err := s.transition(ctx, name, engine.EvExited, func(r *loop.StandingRecord) error {
		if r.Rev != rec.Rev || r.Claim != nil {
			return engine.ErrStale
		}
		r.LastExit = exit
		r.LastDown = &loop.Down{Why: "its agent " + exit.String(), At: exit.At}
		return nil
	}, s.event("standing.exited", level, loop.F("standing", name), loop.F("tmux_target", target),
		loop.F("harness_session_id", rec.HarnessSessionID), loop.F("exit_code", code), loop.F("signal", exit.Signal)))
	unlock()
	return unlessStale(exited, err)
}

// RecordNotRestarted records standing.not_restarted: the supervisor leaves
// the exited session name down, for reason.
func (s *Service) RecordNotRestarted(name, reason string) error {
	return s.Emit(s.event("standing.not_restarted", loop.LevelInfo, loop.F("standing", name), loop.F("reason", reason)))
}

// ScheduleRestart records that the supervisor restarts the exited session
// after delay, its attempt-th restart in a row: transition EvRestarting
// counts the restart on the record, and standing.restarting says when. It
// acts only on exited's revision, unclaimed, and returns the scheduled
// record; nil and no error when the record changed meanwhile.
func (s *Service) ScheduleRestart(ctx context.Context, exited *loop.StandingRecord, attempt int, delay time.Duration) (*loop.StandingRecord, error) {
	name := exited.Name
	scheduled, err := s.transition(ctx, name, engine.EvRestarting, func(r *loop.StandingRecord) error {
		if err := sameRev(exited.Rev)(r); err != nil {
			return err
		}
		r.Restarts++
		return nil
	}, s.event("standing.restarting", loop.LevelInfo,
		loop.F("standing", name), loop.F("attempt", attempt), loop.F("delay_seconds", math.Round(delay.Seconds()*1000)/1000)))
	return unlessStale(scheduled, err)
}

// RestartCrashed starts the session of the scheduled record again once its
// delay has passed: through the normal start path, under the name's lock,
// resuming the recorded conversation with the crash's resume notice (its
// exit and attempt). Under the lock it re-checks the record — the same
// revision, still running, unclaimed — and the config current returns —
// a definition left whose restart policy is not never — and does nothing
// otherwise: an operator who acted meanwhile has the last word. It
// returns the record the start left when the session runs, else nil.
func (s *Service) RestartCrashed(ctx context.Context, current func() *config.Config, scheduled *loop.StandingRecord, exit *loop.ExitInfo, attempt int) *loop.StandingRecord {
	name := scheduled.Name
	unlock := s.engine().Lock(name)
	defer unlock()
	cur, err := s.read(name)
	if err != nil || cur == nil || cur.Rev != scheduled.Rev || cur.Status != loop.StatusRunning || cur.Claim != nil {
		return nil // an operator acted meanwhile: theirs is the last word
	}
	cfg := current()
	def, known := DefinitionOf(cfg, cur)
	if !known || cfg.Supervision.PolicyOf(def) == loop.RestartNever {
		return nil
	}
	s.startLocked(ctx, cfg, def, talk.WhyCrash(exit, attempt))
	if up, err := s.read(name); err == nil && up != nil && up.Status == loop.StatusRunning {
		return up
	}
	return nil
}

// GiveUpRestarts records that the supervisor gave up on the exited
// session: more than restart.burst restarts within
// restart.intervalSeconds (recent of them) leave it failed (transition
// EvRestartLimited, standing.restart_limited), saying why as of at. It
// acts only on exited's revision, unclaimed; a record changed meanwhile
// is left alone, without an error.
func (s *Service) GiveUpRestarts(ctx context.Context, exited *loop.StandingRecord, exit *loop.ExitInfo, recent int, rp config.RestartPolicy, at time.Time) error {
	name := exited.Name
	_, err := s.transition(ctx, name, engine.EvRestartLimited, func(r *loop.StandingRecord) error {
		if err := sameRev(exited.Rev)(r); err != nil {
			return err
		}
		r.LastDown = &loop.Down{Why: fmt.Sprintf("its agent %s, and the supervisor gave up: %d restarts within %gs (standingSessions.restart.burst %d)",
			exit, recent, rp.IntervalSeconds, rp.Burst), At: at.Format(loop.RecordTimeFormat)}
		return nil
	}, s.event("standing.restart_limited", loop.LevelError,
		loop.F("standing", name), loop.F("restarts", recent), loop.F("burst", rp.Burst), loop.F("interval_seconds", rp.IntervalSeconds),
		loop.F("detail", "more restarts than standingSessions.restart.burst allows within intervalSeconds; `the-loop standing start "+name+"` starts it again")))
	_, err = unlessStale(nil, err)
	return err
}

// unlessStale is a supervisor verb's outcome: a record that changed
// meanwhile, or whose state no longer allows the event (stale), is no
// error — the verb did nothing and the supervisor has nothing to record.
func unlessStale(rec *loop.StandingRecord, err error) (*loop.StandingRecord, error) {
	if err != nil {
		if engine.Stale(err) {
			return nil, nil
		}
		return nil, err
	}
	return rec, nil
}

// sameRev is the guard of a transition on the revision the caller saw.
func sameRev(rev uint64) func(r *loop.StandingRecord) error {
	return func(r *loop.StandingRecord) error {
		if r.Rev != rev || r.Claim != nil {
			return engine.ErrStale
		}
		return nil
	}
}

// markSupervised sets rows' supervised: the service's supervisor runs and
// the session's policy is not never (a session with no definition left is
// never restarted, so never supervised).
func (s *Service) markSupervised(cfg *config.Config, block *config.StandingConfig, recs []*loop.StandingRecord, rows []loop.StandingRow) {
	if s.Supervisor == nil || !s.Supervisor.Active() {
		return
	}
	byName := map[string]*loop.StandingRecord{}
	for _, r := range recs {
		byName[r.Name] = r
	}
	for i := range rows {
		def, ok := block.Get(rows[i].Name)
		if !ok {
			r := byName[rows[i].Name]
			if r == nil || r.Origin != loop.OriginCreated {
				continue
			}
			def = r.Definition()
		}
		rows[i].Supervised = cfg.Supervision.PolicyOf(def) != loop.RestartNever
	}
}

// SessionEnded is what a standing session agent's SessionEnd hook calls:
// the supervisor looks now instead of at its next tick. It never acts by
// itself — the pane must still be seen dead twice.
func (s *Service) SessionEnded() {
	if s.Supervisor != nil {
		s.Supervisor.Poke()
	}
}
