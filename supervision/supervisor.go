package supervision

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle"
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
	Service *lifecycle.Service
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

// A Supervisor is what lifecycle asks of the service's supervisor.
var _ lifecycle.Supervisor = (*Supervisor)(nil)

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
	recs, err := sv.Service.StandingRecords()
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

// handle deals with one pane seen dead twice: it records the exit, then,
// unless the session is not to be restarted (whyNotRestarted) or its
// restarts hit the burst limit (countRestart), restarts it after its
// backoff (restartAfter). Each record it writes is checked against the
// record it read, so a change meanwhile (an operator's stop, say) ends it.
func (sv *Supervisor) handle(ctx context.Context, rec *loop.StandingRecord, info loop.PaneInfo, w *watch) {
	defer sv.work.Done()
	defer func() {
		sv.mu.Lock()
		w.busy = false
		sv.mu.Unlock()
	}()
	s, name := sv.Service, rec.Name
	exit := &loop.ExitInfo{Code: info.Code, Signal: info.Signal, At: sv.now().Format(loop.RecordTimeFormat)}
	exited, err := s.RecordExit(ctx, rec, exit)
	if err != nil {
		sv.log().Warn("supervisor: cannot record an exit", "standing", name, "error", err)
		return
	}
	if exited == nil {
		return // the record changed meanwhile
	}
	cfg := sv.Config()
	if why := whyNotRestarted(cfg, exited, exit); why != "" {
		if err := s.RecordNotRestarted(name, why); err != nil {
			sv.log().Warn("supervisor: cannot record an event", "event", "standing.not_restarted", "error", err)
		}
		return
	}
	rp := cfg.Supervision.Restart
	attempt, recent, limited := sv.countRestart(w, exited, rp)
	if limited {
		if err := s.GiveUpRestarts(ctx, exited, exit, recent, rp, sv.now()); err != nil {
			sv.log().Warn("supervisor: cannot record a restart limit", "standing", name, "error", err)
		}
		return
	}
	sv.restartAfter(ctx, exited, exit, w, attempt, rp)
}

// whyNotRestarted says why the session of exited, which exited as exit
// says, is not restarted under cfg ("" when it is): its definition is gone
// (a record whose config entry was removed is never restarted), or its
// restart policy is never, or on-failure and the exit was clean.
func whyNotRestarted(cfg *config.Config, exited *loop.StandingRecord, exit *loop.ExitInfo) string {
	def, known := lifecycle.DefinitionOf(cfg, exited)
	policy := cfg.Supervision.PolicyOf(def)
	switch {
	case !known:
		return "its definition is gone: neither declared in standingSessions.sessions nor created"
	case policy == loop.RestartNever:
		return "its restart policy is never"
	case policy == loop.RestartOnFailure && !exit.Failure():
		return "it exited with status 0 and its restart policy is on-failure"
	}
	return ""
}

// countRestart counts a restart of exited's session in w, under sv.mu.
// The attempt count starts afresh for a pane another start left (an
// operator's) and once the pane ran restart.resetSeconds; the history
// keeps the restarts within restart.intervalSeconds. With restart.burst of
// them already there, the restart is limited and not counted. It returns
// the attempt (1-based), the restarts in the interval and whether the
// restart is limited.
func (sv *Supervisor) countRestart(w *watch, exited *loop.StandingRecord, rp config.RestartPolicy) (attempt, recent int, limited bool) {
	now := sv.now()
	sv.mu.Lock()
	defer sv.mu.Unlock()
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
	limited = len(w.history) >= max(1, rp.Burst)
	if !limited {
		w.attempts++
		w.history = append(w.history, now)
	}
	return w.attempts, len(w.history), limited
}

// restartAfter restarts exited's session as attempt once its backoff
// (Delay, jittered) has passed: the restart is scheduled on the record
// first (standing.restarting), so a change meanwhile cancels it,
// and ctx's end cancels the wait. A session that came up is the
// supervisor's own start: its pane keeps w's counts.
func (sv *Supervisor) restartAfter(ctx context.Context, exited *loop.StandingRecord, exit *loop.ExitInfo, w *watch, attempt int, rp config.RestartPolicy) {
	s := sv.Service
	jitter := rand.Float64()
	if sv.Jitter != nil {
		jitter = sv.Jitter()
	}
	delay := Delay(attempt, rp.MaxDelay(), jitter)
	scheduled, err := s.ScheduleRestart(ctx, exited, attempt, delay)
	if err != nil {
		sv.log().Warn("supervisor: cannot record a restart", "standing", exited.Name, "error", err)
		return
	}
	if scheduled == nil {
		return // the record changed meanwhile
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
	if up := s.RestartCrashed(ctx, sv.Config, scheduled, exit, attempt); up != nil {
		sv.mu.Lock()
		w.own = generation(up)
		sv.mu.Unlock()
	}
}
