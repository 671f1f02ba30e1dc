package lifecycle

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"sync"
	"time"

	"github.com/google/uuid"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
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

	// eng is the engine the verbs run on (package engine), made on first
	// use over this Service as its host (host.go).
	eng     *engine.Engine
	engOnce sync.Once
	// waits is the waiting says in flight from agents (no deadlock).
	waits talk.Waits
}

// engine is the engine the verbs run on.
func (s *Service) engine() *engine.Engine {
	s.engOnce.Do(func() { s.eng = engine.New(host{s}) })
	return s.eng
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
	return engine.Read(s.engine(), standingKind{name: name})
}

// transition is one standing machine event in one store transaction
// (Transition).
func (s *Service) transition(ctx context.Context, name, event string, mutate func(rec *loop.StandingRecord) error, events ...loop.Event) (*loop.StandingRecord, error) {
	return engine.Transition(ctx, s.engine(), standingKind{name: name}, event, mutate, nil, events...)
}

// transitionWith is transition with more writes (also) in the same
// transaction, e.g. a delete's Slack unbinding.
func (s *Service) transitionWith(ctx context.Context, name, event string, mutate func(rec *loop.StandingRecord) error, also func(tx *store.Tx) error, events ...loop.Event) (*loop.StandingRecord, error) {
	return engine.Transition(ctx, s.engine(), standingKind{name: name}, event, mutate, also, events...)
}

// standingKind is a standing session's record as the engine (engine.go)
// sees it: the standing bucket, keyed by name, and the standing machine.
type standingKind struct {
	name string
}

func (k standingKind) What() string { return fmt.Sprintf("standing session '%s'", k.name) }

func (k standingKind) Get(tx *store.Tx) (*loop.StandingRecord, error) { return tx.Standing(k.name) }

// put stamps a new record's creation and bumps the revision.
func (k standingKind) Put(tx *store.Tx, next, cur *loop.StandingRecord, stamp string) error {
	if next.CreatedAt == "" {
		next.CreatedAt = stamp
	}
	next.Rev = 1
	if cur != nil {
		next.Rev = cur.Rev + 1
	}
	return tx.PutStanding(next)
}

func (k standingKind) Del(tx *store.Tx) error {
	_, err := tx.DeleteStanding(k.name)
	return err
}

func (k standingKind) CopyOf(cur *loop.StandingRecord) *loop.StandingRecord {
	if cur == nil {
		return &loop.StandingRecord{Name: k.name}
	}
	c := *cur
	return &c
}

func (k standingKind) State(rec *loop.StandingRecord) string { return engine.StandingStateOf(rec) }

func (k standingKind) Next(state, event string) (string, error) {
	return engine.NextStanding(context.Background(), state, event)
}

// enter: running and stopped are stored statuses (the claim ends), a first
// start claims under the absent status, the other claim states keep the
// status they came from.
func (k standingKind) Enter(rec *loop.StandingRecord, dst string) {
	switch dst {
	case engine.StateRunning, engine.StateStopped, engine.StateFailed:
		rec.Status, rec.Claim = loop.StandingStatus(dst), nil
	case engine.StateFirstStart:
		rec.Status = loop.StatusAbsent
	}
}

func (k standingKind) Claim(rec *loop.StandingRecord) *loop.Claim { return rec.Claim }

func (k standingKind) Target() string { return loop.TmuxTargetFor(k.name) }

func (k standingKind) Socket(rec *loop.StandingRecord) string { return rec.TmuxSocket }

// recoveredIDs sets a record's conversation id (id) and pane tag from the
// claim a recovery found: the claim's conversation, or for codex the id its
// pane's SessionStart named (HeardID), the pane keeping its tag.
func recoveredIDs(c loop.Claim, id, paneTag *string) {
	if c.HarnessSessionID != "" {
		*id = c.HarnessSessionID
	}
	if c.HeardID != "" {
		*id, *paneTag = c.HeardID, c.HarnessSessionID
	}
}

func (k standingKind) Recovered(r *loop.StandingRecord, c loop.Claim) {
	recoveredIDs(c, &r.HarnessSessionID, &r.Hearing.PaneTag)
	r.StartedAt = c.Since
	r.LastDown = nil
}

func (k standingKind) LogEvent(what string) string { return "standing." + what }

func (k standingKind) Subject() loop.Field { return loop.F("standing", k.name) }

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

// lookupHarness is s.Harness; a service built without it (only a
// misconfigured one is) refuses, naming the harness.
func (s *Service) lookupHarness(name, subject string) (loop.Harness, error) {
	if s.Harness == nil {
		return nil, loop.Internal("the service has no harness adapters to look up the %s harness of %s", name, subject)
	}
	return s.Harness(name, subject)
}
