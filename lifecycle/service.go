package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/redact"
	"github.com/the-loop-dev/the-loop/store"
	"github.com/the-loop-dev/the-loop/talk"
)

// Service runs the standing verbs against one store. It is safe for
// concurrent use: verbs on one name serialise in-process (a per-name lock)
// and across processes (the claim stored in the record).
type Service struct {
	DB *store.DB
	// Runner returns the tmux runner for a socket name ("" = default server),
	// work-item entry points and pane pids included. The service's comes
	// already wrapped in the liveness cache (runner.NewCache, wired in
	// cmd/the-loop). Nil (the hook command's own service may have none): no
	// pane is any process's, so a SessionStart of source clear is never
	// trusted and no process is an agent's (AgentOfProcess).
	Runner func(socket string) loop.Runner
	// Harness returns the adapter for a harness name; session names the
	// standing session in the refusal.
	Harness func(name, session string) (loop.Harness, error)
	// LookPath resolves a harness binary (exec.LookPath).
	LookPath func(string) (string, error)
	Clock    loop.Clock
	Source   string // the event envelope's source: "cli" or "service"
	// NewID returns a new conversation id (uuid4).
	NewID func() string
	// ProcStart returns the start time of the running process pid, ok
	// false when none runs (runner.ProcessStart, wired in cmd/the-loop): a
	// claim is live while the process that made it runs, judged by pid and
	// start time. Nil: claims carry no start time and are judged by pid
	// alone (claimLive).
	ProcStart func(pid int) (start uint64, ok bool)
	// ClaimWait bounds how long a verb waits for another process's claim.
	ClaimWait time.Duration
	// Announcer posts a Slack-enabled session's announcement after it
	// starts (nil: never announced).
	Announcer Announcer
	// HookBinary is the absolute path of the-loop's binary: every claude,
	// codex and gemini spawn runs `<HookBinary> hook …` for its hooks.
	// Empty: no hooks are declared and activity stays unknown.
	HookBinary string
	// Getenv reads the environment (HOME, which a trusted directory must
	// not be; an adapter reads its CLI's own variables through its
	// options); nil means os.Getenv.
	Getenv func(string) string
	// TmuxAvailable reports a tmux binary missing from PATH (the runner's
	// Available); a start then refuses at once, naming it and how to
	// install it. Nil: never checked.
	TmuxAvailable func() error
	// Nonce returns a fresh fence nonce for a peer's say (FramePeer; nil:
	// 64 random bits, hex).
	Nonce func() string
	// Redactor redacts every event's text fields before they are written
	// (nil: the credential shapes only) and learns each agent credential
	// this service issues.
	Redactor *redact.Redactor

	// Hearing is the hearing room (package hearing) this process applies
	// hooks with: a list or a say applies the spool through it first, and
	// a waiting say is woken by it (nil: neither; a say polls).
	Hearing Hearing

	// Supervisor is the service's supervisor (package supervision; what
	// lifecycle asks of it is in exits.go) once it runs; nil in a CLI
	// process. Rows say supervised only with one.
	Supervisor Supervisor

	mu     sync.Mutex
	names  map[string]chan struct{} // per-name locks: a token in a buffer of one
	spawns *slots                   // standingSessions.startConcurrency (slots.go)
	// waits is the waiting says in flight from agents (no deadlock).
	waits talk.Waits
	// probes are the resume probes' shared tmux queries (probes.go).
	probes probeRounds
}

func (s *Service) now() time.Time {
	if s.Clock != nil {
		return s.Clock().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) stamp() string { return s.now().Format(loop.RecordTimeFormat) }

func (s *Service) newID() string {
	if s.NewID != nil {
		return s.NewID()
	}
	return uuid.NewString()
}

// lock serialises verbs on one name inside this process.
func (s *Service) lock(name string) func() {
	unlock, _ := s.lockCtx(context.Background(), name)
	return unlock
}

// lockCtx is lock, given up when ctx ends (then the error says another verb
// of this process holds the name): a verb with a bound, stop above all,
// never waits without end behind a start that is stuck.
func (s *Service) lockCtx(ctx context.Context, name string) (func(), error) {
	s.mu.Lock()
	if s.names == nil {
		s.names = map[string]chan struct{}{}
	}
	m, ok := s.names[name]
	if !ok {
		m = make(chan struct{}, 1)
		s.names[name] = m
	}
	s.mu.Unlock()
	select {
	case m <- struct{}{}:
		return func() { <-m }, nil
	case <-ctx.Done():
		return func() {}, loop.Internal("another verb of this process (pid %d) on '%s' has not finished; gave up waiting for it (%v)", os.Getpid(), name, ctx.Err())
	}
}

// event builds an envelope stamped with this process's source and pid.
func (s *Service) event(name, level string, fields ...loop.Field) loop.Event {
	return loop.Event{TS: s.now(), Source: s.Source, Event: name, Level: level, PID: os.Getpid(), Fields: redactFields(s.Redactor, fields)}
}

// Emit appends events outside any state change (reads that still leave a
// paper trail, e.g. api.request), in a transaction it may share with
// other goroutines' (store.DB.Batch).
func (s *Service) Emit(evs ...loop.Event) error {
	return s.DB.Batch(func(tx *store.Tx) error {
		for i := range evs {
			if err := tx.AppendEvent(&evs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// read returns the stored record of name (nil when absent).
func (s *Service) read(name string) (*loop.StandingRecord, error) {
	return readIn(s, standingKind{name: name})
}

// errStale reports that the record changed between a probe and the
// transition that depended on it: the caller re-evaluates.
var errStale = errors.New("the record changed under the verb")

// transition is one standing machine event in one store transaction
// (transitionIn).
func (s *Service) transition(ctx context.Context, name, event string, mutate func(rec *loop.StandingRecord) error, events ...loop.Event) (*loop.StandingRecord, error) {
	return transitionIn(ctx, s, standingKind{name: name}, event, mutate, nil, events...)
}

// transitionWith is transition with more writes (also) in the same
// transaction, e.g. a delete's Slack unbinding.
func (s *Service) transitionWith(ctx context.Context, name, event string, mutate func(rec *loop.StandingRecord) error, also func(tx *store.Tx) error, events ...loop.Event) (*loop.StandingRecord, error) {
	return transitionIn(ctx, s, standingKind{name: name}, event, mutate, also, events...)
}

// standingKind is a standing session's record as the engine (engine.go)
// sees it: the standing bucket, keyed by name, and the standing machine.
type standingKind struct {
	name string
}

func (k standingKind) what() string { return fmt.Sprintf("standing session '%s'", k.name) }

func (k standingKind) get(tx *store.Tx) (*loop.StandingRecord, error) { return tx.Standing(k.name) }

// put stamps a new record's creation and bumps the revision.
func (k standingKind) put(tx *store.Tx, next, cur *loop.StandingRecord, stamp string) error {
	if next.CreatedAt == "" {
		next.CreatedAt = stamp
	}
	next.Rev = 1
	if cur != nil {
		next.Rev = cur.Rev + 1
	}
	return tx.PutStanding(next)
}

func (k standingKind) del(tx *store.Tx) error {
	_, err := tx.DeleteStanding(k.name)
	return err
}

func (k standingKind) copyOf(cur *loop.StandingRecord) *loop.StandingRecord {
	if cur == nil {
		return &loop.StandingRecord{Name: k.name}
	}
	c := *cur
	return &c
}

func (k standingKind) state(rec *loop.StandingRecord) string { return StandingStateOf(rec) }

func (k standingKind) next(state, event string) (string, error) {
	return NextStanding(context.Background(), state, event)
}

// enter: running and stopped are stored statuses (the claim ends), a first
// start claims under the absent status, the other claim states keep the
// status they came from.
func (k standingKind) enter(rec *loop.StandingRecord, dst string) {
	switch dst {
	case StateRunning, StateStopped, StateFailed:
		rec.Status, rec.Claim = loop.StandingStatus(dst), nil
	case StateFirstStart:
		rec.Status = loop.StatusAbsent
	}
}

func (k standingKind) claim(rec *loop.StandingRecord) *loop.Claim { return rec.Claim }

func (k standingKind) target() string { return loop.TmuxTargetFor(k.name) }

func (k standingKind) socket(rec *loop.StandingRecord) string { return rec.TmuxSocket }

func (k standingKind) recovered(r *loop.StandingRecord, c loop.Claim) {
	if c.HarnessSessionID != "" {
		r.HarnessSessionID = c.HarnessSessionID
	}
	if c.HeardID != "" { // codex: the id its pane's SessionStart named; the pane keeps its tag
		r.HarnessSessionID, r.Hearing.PaneTag = c.HeardID, c.HarnessSessionID
	}
	r.StartedAt = c.Since
	r.LastDown = nil
}

func (k standingKind) logEvent(what string) string { return "standing." + what }

func (k standingKind) subject() loop.Field { return loop.F("standing", k.name) }

// procStart is ProcStart; without one, start is 0 (not known) and ok is
// whether a process of pid runs (signal 0; EPERM, another user's process,
// is none of ours).
func (s *Service) procStart(pid int) (uint64, bool) {
	if s.ProcStart != nil {
		return s.ProcStart(pid)
	}
	return 0, pid > 0 && syscall.Kill(pid, 0) == nil
}

// newClaim is a claim of this process for op: its pid and that pid's start
// time, so no other process that later holds the pid (after a reboot, say)
// passes for it.
func (s *Service) newClaim(op string) *loop.Claim {
	start, _ := s.procStart(os.Getpid())
	return &loop.Claim{Op: op, PID: os.Getpid(), PIDStart: start, Since: s.stamp()}
}

// claimLive reports whether a claim belongs to a process that still runs
// it: its pid runs and started when the claim says (the same process, not
// a reused pid), however long the verb has been running. Claims of this
// process are never live here: the per-name lock is held, so one found is
// left by a verb that did not finish. A claim written before claims carried
// a start time, or judged by a service with no ProcStart, is judged by its
// pid, and only for 15 minutes.
func (s *Service) claimLive(c *loop.Claim) bool {
	if c == nil || c.PID == os.Getpid() || c.PID <= 0 {
		return false
	}
	start, ok := s.procStart(c.PID)
	if !ok {
		return false
	}
	if c.PIDStart != 0 && s.ProcStart != nil {
		return start == c.PIDStart
	}
	since, err := time.Parse(loop.RecordTimeFormat, c.Since)
	if err == nil && s.now().Sub(since) > 15*time.Minute {
		return false // a claim of an older version, older than any of its transitions took
	}
	// EPERM: the pid now belongs to another user's process, which cannot be
	// a the-loop verb of ours: the claim is stale.
	return syscall.Kill(c.PID, 0) == nil
}

// awaitClaim polls current until it reports no claim, or only one whose
// process is gone, for at most ClaimWait (default 2 minutes); what names
// the session in the refusal.
func (s *Service) awaitClaim(ctx context.Context, what string, c *loop.Claim, current func() (*loop.Claim, error)) error {
	wait := s.ClaimWait
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	deadline := time.Now().Add(wait)
	for {
		claim, err := current()
		if err != nil {
			return err
		}
		if claim == nil || !s.claimLive(claim) {
			return nil
		}
		if time.Now().After(deadline) {
			return loop.Internal("%s has had a %s in flight in process %d since %s; try again once it finishes", what, c.Op, c.PID, c.Since)
		}
		select {
		case <-ctx.Done():
			return loop.Internal("%s has had a %s in flight in process %d since %s; gave up waiting for it (%v) — try again once it finishes", what, c.Op, c.PID, c.Since, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe asks tmux for target's state before a decision that depends on it.
// A tmux that does not answer (a timeout under load) is asked twice more
// before the answer stands: silence is never taken for absence, but one
// slow reply should not fail a start.
func probe(ctx context.Context, runner loop.Runner, target string) loop.PaneState {
	state := runner.State(ctx, target)
	for try := 0; try < 2 && state == loop.PaneUnknown; try++ {
		select {
		case <-ctx.Done():
			return state
		case <-time.After(250 * time.Millisecond):
		}
		state = runner.State(ctx, target)
	}
	return state
}

// survives polls a resumed pane for the probe window: dead or gone at any
// point fails at once (claude --resume on an unknown id exits fast). The
// polls of concurrent probes on one socket share their tmux queries
// (probes.go).
func (s *Service) survives(ctx context.Context, runner loop.Runner, socket, target string, probe time.Duration) bool {
	deadline := time.Now().Add(probe)
	for {
		if !s.probes.state(ctx, runner, socket, target).LiveOrUnknown() {
			return false
		}
		left := time.Until(deadline)
		if left <= 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(min(left, nextProbe(time.Now()))):
		}
	}
}

// clearOwn clears what is left of a resume that failed its probe: a dead
// pane (nothing runs in it: the fresh spawn respawns into it, like any dead
// pane before a spawn), or
// a live one only when it is the pane the-loop spawned for conversation id
// (its tag) — a live tmux session someone else put under the name meanwhile
// is never killed. It returns "" when the name is free for a fresh spawn,
// else why not.
func clearOwn(ctx context.Context, runner loop.Runner, target, id string) string {
	switch runner.State(ctx, target) {
	case loop.PaneAbsent:
		return ""
	case loop.PaneDead:
		return "" // the fresh spawn respawns into the dead pane, other windows kept
	}
	mine, err := ours(ctx, runner, target, id)
	if err != nil {
		return loop.ErrorMessage(err)
	}
	if !mine {
		return fmt.Sprintf("the resumed pane did not survive the probe, and tmux session %s is not the one the-loop spawned; not touching it", target)
	}
	return killed(ctx, runner, target)
}

// killed kills target for clearOwn: "" once it is gone, else why not.
func killed(ctx context.Context, runner loop.Runner, target string) string {
	if err := runner.KillTarget(ctx, target); err != nil && runner.State(ctx, target) != loop.PaneAbsent {
		return fmt.Sprintf("the resumed pane did not survive the probe and tmux session %s could not be cleared (%v); not spawning over it", target, err)
	}
	return ""
}

// ours reports whether the tmux session target is the one the-loop spawned
// for conversation id (its tag, see loop.SpawnSpec.Tag). tmux not answering
// is an error: never adopt or signal on a guess.
func ours(ctx context.Context, runner loop.Runner, target, id string) (bool, error) {
	tag, ok := runner.Tag(ctx, target)
	if !ok {
		return false, loop.Internal("tmux did not answer whose session %s is; not touching it", target)
	}
	return id != "" && tag == id, nil
}

// notOurs is the refusal for a live tmux session the-loop cannot account
// for: it names how to inspect it, and never offers to kill it for you.
func notOurs(target, socket, why string) string {
	t := loop.TmuxCommand(socket)
	return fmt.Sprintf("a tmux session named %[1]s exists but %[3]s — inspect it with `%[2]s attach -r -t %[1]s`, then either `%[2]s kill-session -t =%[1]s` or leave it be", target, t, why)
}

// actorOrUser is the say actor: the given one, else the local OS user.
func actorOrUser(actor string) string {
	if actor != "" {
		return actor
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}
