package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// Supervisor is the service's watch over its standing sessions: it looks
// at every running session's agent pane with one batched tmux query per
// socket each Tick, and acts only on a pane seen dead twice (silence from
// tmux is not absence, and one odd answer is not a death). It records the
// exit (standing.exited, with the status or signal tmux reports) and, as
// the session's restart policy says, restarts it through the normal start
// path — the recorded conversation resumed, with start's fresh fallback —
// after a backoff of 1, 2, 4 … s capped at standingSessions.restart
// .maxDelaySeconds, plus 0–20 % jitter. More than restart.burst restarts
// within restart.intervalSeconds leave the session failed
// (standing.restart_limited).
//
// Only running records without a claim are watched, so an operator's stop,
// delete or restart (each a claim, then another status or another pane) is
// never followed by a supervisor restart; a restart re-checks the record
// under the name's lock before it starts anything. A record whose config
// entry was removed is never restarted. Without a running Supervisor —
// without the service — nothing restarts.
type Supervisor struct {
	Service *Service
	// Config is the config in use (the service's holder).
	Config func() *config.Config
	// Runner returns the runner the panes of socket are probed with (nil:
	// Service.Runner), exit statuses included where its PaneStates reports
	// them (package runner's does).
	Runner func(socket string) loop.Runner
	// Clock stamps exits and measures the restart windows (nil: time.Now).
	Clock loop.Clock
	// Jitter returns a number in [0, 1): the share of the 20 % a delay is
	// lengthened by (nil: math/rand).
	Jitter func() float64
	// After waits for a restart's delay (nil: time.After).
	After func(time.Duration) <-chan time.Time
	// Tick is how often every pane is looked at (default 1 s); Confirm how
	// soon a pane seen dead once is looked at again (default 200 ms).
	Tick, Confirm time.Duration
	// Log receives what the supervisor could not record (nil: discarded).
	Log *slog.Logger

	pokes   chan struct{}
	mu      sync.Mutex
	active  bool
	watches map[string]*watch
	work    sync.WaitGroup
}

// watch is what the supervisor keeps of one session between looks.
type watch struct {
	gen  string // the pane watched: conversation id and start time
	dead int    // consecutive looks that saw it dead
	busy bool   // an exit is being handled
	// own is the gen of the supervisor's last restart: a pane of another
	// start (an operator's) starts the counts afresh.
	own      string
	attempts int
	history  []time.Time // restarts within the interval
}

func (sv *Supervisor) now() time.Time {
	if sv.Clock != nil {
		return sv.Clock().UTC()
	}
	return time.Now().UTC()
}

func (sv *Supervisor) log() *slog.Logger {
	if sv.Log != nil {
		return sv.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (sv *Supervisor) init() {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.pokes == nil {
		sv.pokes = make(chan struct{}, 1)
	}
	if sv.watches == nil {
		sv.watches = map[string]*watch{}
	}
}

// Active reports whether Run is running.
func (sv *Supervisor) Active() bool {
	if sv == nil {
		return false
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.active
}

// Poke asks for a look now (a SessionEnd hook's signal): it never acts by
// itself, the pane must still be seen dead twice.
func (sv *Supervisor) Poke() {
	sv.init()
	select {
	case sv.pokes <- struct{}{}:
	default:
	}
}

// Run supervises until ctx ends, then waits for the exits it is handling
// (a restart's delay ends with ctx).
func (sv *Supervisor) Run(ctx context.Context) {
	sv.init()
	sv.mu.Lock()
	sv.active = true
	sv.mu.Unlock()
	defer func() {
		sv.mu.Lock()
		sv.active = false
		sv.mu.Unlock()
		sv.work.Wait()
	}()
	tick, confirm := sv.Tick, sv.Confirm
	if tick <= 0 {
		tick = time.Second
	}
	if confirm <= 0 {
		confirm = 200 * time.Millisecond
	}
	for {
		wait := tick
		if sv.look(ctx) {
			wait = confirm
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-sv.pokes:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// look probes every running session's pane once; it reports whether a pane
// was seen dead for the first time (look again soon).
func (sv *Supervisor) look(ctx context.Context) (again bool) {
	s := sv.Service
	recs, err := s.records()
	if err != nil {
		sv.log().Warn("supervisor: cannot read the standing records", "error", err)
		return false
	}
	bySocket := map[string][]*loop.StandingRecord{}
	exists := map[string]bool{}
	for _, r := range recs {
		exists[r.Name] = true
		if r.Status == loop.StatusRunning && r.Claim == nil {
			bySocket[r.TmuxSocket] = append(bySocket[r.TmuxSocket], r)
		}
	}
	sv.mu.Lock()
	for name, w := range sv.watches {
		if !exists[name] && !w.busy {
			delete(sv.watches, name)
		}
	}
	sv.mu.Unlock()
	for socket, rs := range bySocket {
		targets := make([]string, len(rs))
		for i, r := range rs {
			targets[i] = loop.TmuxTargetFor(r.Name)
		}
		infos := sv.panes(ctx, socket, targets)
		sv.mu.Lock()
		for i, r := range rs {
			w := sv.watches[r.Name]
			if w == nil {
				w = &watch{}
				sv.watches[r.Name] = w
			}
			if g := generation(r); w.gen != g {
				w.gen, w.dead = g, 0
			}
			if w.busy {
				continue
			}
			switch info := infos[targets[i]]; info.State {
			case loop.PaneDead:
				w.dead++
				if w.dead < 2 {
					again = true
					continue
				}
				w.dead, w.busy = 0, true
				sv.work.Add(1)
				go sv.handle(ctx, r, info, w)
			case loop.PaneUnknown: // silence is not absence, nor death
			default:
				w.dead = 0
			}
		}
		sv.mu.Unlock()
	}
	return again
}

// generation names the pane a record's start left.
func generation(r *loop.StandingRecord) string { return r.HarnessSessionID + "|" + r.StartedAt }

// panes asks socket's tmux about targets in one query.
func (sv *Supervisor) panes(ctx context.Context, socket string, targets []string) map[string]loop.PaneInfo {
	var r loop.Runner
	if sv.Runner != nil {
		r = sv.Runner(socket)
	} else {
		r = sv.Service.Runner(socket)
	}
	return r.PaneStates(ctx, targets)
}

// definition is what a restart would start: the declared entry, or a
// created session's record; ok false when neither (the entry was removed,
// or the block does not parse).
func definition(cfg *config.Config, rec *loop.StandingRecord) (loop.StandingDefinition, bool) {
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

// Delay is the backoff before restart attempt (1-based): 1, 2, 4 … s capped
// at max (0: no cap), lengthened by jitter (in [0, 1)) × 20 % — never
// shortened.
func Delay(attempt int, max time.Duration, jitter float64) time.Duration {
	base := time.Second
	if attempt > 1 {
		base = time.Duration(math.Min(math.Pow(2, float64(attempt-1)), float64(1<<30))) * time.Second
	}
	if max > 0 && base > max {
		base = max
	}
	jitter = math.Max(0, math.Min(jitter, 1))
	return base + time.Duration(float64(base)*0.2*jitter)
}

// handle deals with one pane seen dead twice.
func (sv *Supervisor) handle(ctx context.Context, rec *loop.StandingRecord, info loop.PaneInfo, w *watch) {
	defer sv.work.Done()
	defer func() {
		sv.mu.Lock()
		w.busy = false
		sv.mu.Unlock()
	}()
	s, name, target := sv.Service, rec.Name, loop.TmuxTargetFor(rec.Name)
	exit := &loop.ExitInfo{Code: info.Code, Signal: info.Signal, At: sv.now().Format(loop.RecordTimeFormat)}
	var code any
	if exit.Code != nil {
		code = *exit.Code
	}
	level := loop.LevelInfo
	if exit.Failure() {
		level = loop.LevelWarning
	}
	unlock := s.lock(name)
	exited, err := s.transition(ctx, name, EvExited, func(r *loop.StandingRecord) error {
		if r.Rev != rec.Rev || r.Claim != nil {
			return errStale
		}
		r.LastExit = exit
		r.LastDown = &loop.Down{Why: "its agent " + exit.String(), At: exit.At}
		return nil
	}, s.event("standing.exited", level, loop.F("standing", name), loop.F("tmux_target", target),
		loop.F("harness_session_id", rec.HarnessSessionID), loop.F("exit_code", code), loop.F("signal", exit.Signal)))
	unlock()
	if err != nil {
		if !stale(err) {
			sv.log().Warn("supervisor: cannot record an exit", "standing", name, "error", err)
		}
		return
	}
	cfg := sv.Config()
	def, known := definition(cfg, exited)
	policy := cfg.Supervision.PolicyOf(def)
	var why string
	switch {
	case !known:
		why = "its definition is gone: neither declared in standingSessions.sessions nor created"
	case policy == loop.RestartNever:
		why = "its restart policy is never"
	case policy == loop.RestartOnFailure && !exit.Failure():
		why = "it exited with status 0 and its restart policy is on-failure"
	}
	if why != "" {
		sv.emit(s.event("standing.not_restarted", loop.LevelInfo, loop.F("standing", name), loop.F("reason", why)))
		return
	}
	rp := cfg.Supervision.Restart
	now := sv.now()
	sv.mu.Lock()
	if w.own != generation(exited) {
		w.attempts, w.history = 0, nil // a start of someone else's: counts start afresh
	} else if started, err := time.Parse(loop.RecordTimeFormat, exited.StartedAt); err == nil && now.Sub(started) >= rp.Reset() {
		w.attempts = 0
	}
	kept := w.history[:0]
	for _, t := range w.history {
		if now.Sub(t) < rp.Interval() {
			kept = append(kept, t)
		}
	}
	w.history = kept
	limited := len(w.history) >= max(1, rp.Burst)
	if !limited {
		w.attempts++
		w.history = append(w.history, now)
	}
	attempt, recent := w.attempts, len(w.history)
	sv.mu.Unlock()
	if limited {
		sv.limited(ctx, exited, exit, recent, rp)
		return
	}
	jitter := rand.Float64()
	if sv.Jitter != nil {
		jitter = sv.Jitter()
	}
	delay := Delay(attempt, rp.MaxDelay(), jitter)
	scheduled, err := s.transition(ctx, name, EvRestarting, func(r *loop.StandingRecord) error {
		if err := sameRev(exited.Rev)(r); err != nil {
			return err
		}
		r.Restarts++
		return nil
	}, s.event("standing.restarting", loop.LevelInfo,
		loop.F("standing", name), loop.F("attempt", attempt), loop.F("delay_seconds", math.Round(delay.Seconds()*1000)/1000)))
	if err != nil {
		if !stale(err) {
			sv.log().Warn("supervisor: cannot record a restart", "standing", name, "error", err)
		}
		return
	}
	after := time.After
	if sv.After != nil {
		after = sv.After
	}
	select {
	case <-ctx.Done():
		return
	case <-after(delay):
	}
	unlock = s.lock(name)
	defer unlock()
	cur, err := s.read(name)
	if err != nil || cur == nil || cur.Rev != scheduled.Rev || cur.Status != loop.StatusRunning || cur.Claim != nil {
		return // an operator acted meanwhile: theirs is the last word
	}
	cfg = sv.Config()
	if def, known = definition(cfg, cur); !known || cfg.Supervision.PolicyOf(def) == loop.RestartNever {
		return
	}
	s.startLocked(ctx, cfg, def, whyCrash(exit, attempt))
	if up, err := s.read(name); err == nil && up != nil && up.Status == loop.StatusRunning {
		sv.mu.Lock()
		w.own = generation(up)
		sv.mu.Unlock()
	}
}

// limited records that the supervisor gave up on a session: more than
// restart.burst restarts within restart.intervalSeconds (recent of them)
// leave it failed, saying why.
func (sv *Supervisor) limited(ctx context.Context, exited *loop.StandingRecord, exit *loop.ExitInfo, recent int, rp config.RestartPolicy) {
	s, name := sv.Service, exited.Name
	_, err := s.transition(ctx, name, EvRestartLimited, func(r *loop.StandingRecord) error {
		if err := sameRev(exited.Rev)(r); err != nil {
			return err
		}
		r.LastDown = &loop.Down{Why: fmt.Sprintf("its agent %s, and the supervisor gave up: %d restarts within %gs (standingSessions.restart.burst %d)",
			exit, recent, rp.IntervalSeconds, rp.Burst), At: sv.now().Format(loop.RecordTimeFormat)}
		return nil
	}, s.event("standing.restart_limited", loop.LevelError,
		loop.F("standing", name), loop.F("restarts", recent), loop.F("burst", rp.Burst), loop.F("interval_seconds", rp.IntervalSeconds),
		loop.F("detail", "more restarts than standingSessions.restart.burst allows within intervalSeconds; `the-loop standing start "+name+"` starts it again")))
	if err != nil && !stale(err) {
		sv.log().Warn("supervisor: cannot record a restart limit", "standing", name, "error", err)
	}
}

// sameRev is the guard of a transition on the revision the caller saw.
func sameRev(rev uint64) func(r *loop.StandingRecord) error {
	return func(r *loop.StandingRecord) error {
		if r.Rev != rev || r.Claim != nil {
			return errStale
		}
		return nil
	}
}

func (sv *Supervisor) emit(ev loop.Event) {
	if err := sv.Service.Emit(ev); err != nil {
		sv.log().Warn("supervisor: cannot record an event", "event", ev.Event, "error", err)
	}
}

// markSupervised sets rows' supervised: the service's supervisor runs and
// the session's policy is not never (a session with no definition left is
// never restarted, so never supervised).
func (s *Service) markSupervised(cfg *config.Config, block *config.StandingConfig, recs []*loop.StandingRecord, rows []loop.StandingRow) {
	if !s.Supervisor.Active() {
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
