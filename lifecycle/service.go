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
	"github.com/the-loop-dev/the-loop/store"
)

// Service runs the standing verbs against one store. It is safe for
// concurrent use: verbs on one name serialise in-process (a per-name lock)
// and across processes (the claim stored in the record).
type Service struct {
	DB *store.DB
	// Runner returns the tmux runner for a socket name ("" = default server).
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
	// ClaimWait bounds how long a verb waits for another process's claim.
	ClaimWait time.Duration
	// Announcer posts a Slack-enabled session's announcement after it
	// starts (nil: never announced).
	Announcer Announcer
	// TmuxAvailable reports a tmux binary missing from PATH (the runner's
	// Available); a start then refuses at once, naming it and how to
	// install it. Nil: never checked.
	TmuxAvailable func() error

	mu    sync.Mutex
	names map[string]*sync.Mutex
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
	s.mu.Lock()
	if s.names == nil {
		s.names = map[string]*sync.Mutex{}
	}
	m, ok := s.names[name]
	if !ok {
		m = &sync.Mutex{}
		s.names[name] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// event builds an envelope stamped with this process's source and pid.
func (s *Service) event(name, level string, fields ...loop.Field) loop.Event {
	return loop.Event{TS: s.now(), Source: s.Source, Event: name, Level: level, PID: os.Getpid(), Fields: fields}
}

// Emit appends events outside any state change (reads that still leave a
// paper trail, e.g. api.request).
func (s *Service) Emit(evs ...loop.Event) error {
	return s.DB.Update(func(tx *store.Tx) error {
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
	var rec *loop.StandingRecord
	err := s.DB.View(func(tx *store.Tx) error {
		var err error
		rec, err = tx.Standing(name)
		return err
	})
	return rec, err
}

// errStale reports that the record changed between a probe and the
// transition that depended on it: the caller re-evaluates.
var errStale = errors.New("the record changed under the verb")

// transition is one machine event in one store transaction: it re-reads the
// record, refuses an event its state does not allow, lets mutate change a
// copy (mutate may return errStale when the record is not what the caller
// saw), derives status and claim from the destination state, writes the
// record (or deletes it for absent) and appends events — all or nothing.
func (s *Service) transition(ctx context.Context, name, event string, mutate func(rec *loop.StandingRecord) error, events ...loop.Event) (*loop.StandingRecord, error) {
	return s.transitionWith(ctx, name, event, mutate, nil, events...)
}

// transitionWith is transition with more writes (also) in the same
// transaction, e.g. a delete's Slack unbinding.
func (s *Service) transitionWith(ctx context.Context, name, event string, mutate func(rec *loop.StandingRecord) error, also func(tx *store.Tx) error, events ...loop.Event) (*loop.StandingRecord, error) {
	var out *loop.StandingRecord
	err := s.DB.Update(func(tx *store.Tx) error {
		cur, err := tx.Standing(name)
		if err != nil {
			return err
		}
		src := StateOf(cur)
		dst, err := Next(ctx, src, event)
		if err != nil {
			return err
		}
		next := &loop.StandingRecord{Name: name}
		if cur != nil {
			c := *cur
			next = &c
		}
		if mutate != nil {
			if err := mutate(next); err != nil {
				return err
			}
		}
		switch dst {
		case StateAbsent:
			if cur != nil {
				if _, err := tx.DeleteStanding(name); err != nil {
					return err
				}
			}
			next = nil
		case StateRunning, StateStopped:
			next.Status = dst
			next.Claim = nil
		case StateFirstStart:
			next.Status = loop.StatusAbsent
		}
		if next != nil {
			if got := StateOf(next); got != dst {
				return loop.Internal("standing session '%s': %s moved the record to %q, the machine says %q", name, event, got, dst)
			}
			if next.CreatedAt == "" {
				next.CreatedAt = s.stamp()
			}
			next.Rev = 1
			if cur != nil {
				next.Rev = cur.Rev + 1
			}
			if err := tx.PutStanding(next); err != nil {
				return err
			}
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		for i := range events {
			if err := tx.AppendEvent(&events[i]); err != nil {
				return err
			}
		}
		out = next
		return nil
	})
	return out, err
}

// claimLive reports whether a claim belongs to a process that still runs
// it. Claims of this process are never live here: the per-name lock is held,
// so one found is left by a verb that did not finish.
func (s *Service) claimLive(c *loop.Claim) bool {
	if c == nil || c.PID == os.Getpid() || c.PID <= 0 {
		return false
	}
	since, err := time.Parse(loop.RecordTimeFormat, c.Since)
	if err == nil && s.now().Sub(since) > 15*time.Minute {
		return false // older than any transition takes: a recycled pid
	}
	// EPERM: the pid now belongs to another user's process, which cannot be
	// a the-loop verb of ours: the claim is stale.
	return syscall.Kill(c.PID, 0) == nil
}

// waitClaim polls until name carries no live claim of another process.
func (s *Service) waitClaim(ctx context.Context, name string, c *loop.Claim) error {
	return s.awaitClaim(ctx, fmt.Sprintf("standing session '%s'", name), c, func() (*loop.Claim, error) {
		rec, err := s.read(name)
		if rec == nil || err != nil {
			return nil, err
		}
		return rec.Claim, nil
	})
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
			return ctx.Err()
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
// point fails at once (claude --resume on an unknown id exits fast).
func survives(ctx context.Context, runner loop.Runner, target string, probe time.Duration) bool {
	deadline := time.Now().Add(probe)
	for {
		if !runner.State(ctx, target).LiveOrUnknown() {
			return false
		}
		left := time.Until(deadline)
		if left <= 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(min(left, 100*time.Millisecond)):
		}
	}
}

// settleStaleClaim resolves a claim whose process is gone: a start whose
// pane is live is recovered as running (with the conversation id it was
// spawning), anything else is abandoned back to its status.
func (s *Service) settleStaleClaim(ctx context.Context, rec *loop.StandingRecord) (recovered bool, err error) {
	target := loop.TmuxTargetFor(rec.Name)
	state := probe(ctx, s.Runner(rec.TmuxSocket), target)
	if state == loop.PaneUnknown {
		return false, loop.Internal("tmux did not answer whether %s exists; not settling the interrupted %s", target, rec.Claim.Op)
	}
	claim := *rec.Claim
	mine := false
	if state == loop.PaneLive && claim.Op == "start" {
		// Only the harness this claim spawned carries its tag; a placeholder
		// that never became the harness, or someone else's session, does not.
		if mine, err = ours(ctx, s.Runner(rec.TmuxSocket), target, claim.HarnessSessionID); err != nil {
			return false, err
		}
	}
	if mine {
		_, err := s.transition(ctx, rec.Name, EvRecover, func(r *loop.StandingRecord) error {
			if r.Claim == nil || r.Claim.PID != claim.PID {
				return errStale
			}
			if claim.HarnessSessionID != "" {
				r.HarnessSessionID = claim.HarnessSessionID
			}
			r.StartedAt = claim.Since
			return nil
		}, s.event("standing.recovered", loop.LevelWarning,
			loop.F("standing", rec.Name), loop.F("tmux_target", target),
			loop.F("harness_session_id", claim.HarnessSessionID),
			loop.F("detail", fmt.Sprintf("a start interrupted in process %d left a live pane; adopted it", claim.PID))))
		return err == nil, err
	}
	_, err = s.transition(ctx, rec.Name, EvAbandon, func(r *loop.StandingRecord) error {
		if r.Claim == nil || r.Claim.PID != claim.PID {
			return errStale
		}
		return nil
	}, s.event("standing.claim_abandoned", loop.LevelWarning,
		loop.F("standing", rec.Name), loop.F("op", claim.Op), loop.F("pid", claim.PID)))
	return false, err
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

// tmuxCommand is how an operator reaches the-loop's tmux server: "tmux",
// or "tmux -L <socket>" when routing.tmux.socketName is set.
func tmuxCommand(socket string) string {
	if socket == "" {
		return "tmux"
	}
	return "tmux -L " + socket
}

// notOurs is the refusal for a live tmux session the-loop cannot account
// for: it names how to inspect it, and never offers to kill it for you.
func notOurs(target, socket, why string) string {
	t := tmuxCommand(socket)
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
