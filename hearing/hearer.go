package hearing

import (
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// Hearer applies the agents' hook payloads to the records of one store:
// through the service's hook route (loop.HookSink), the store directly (the
// hook command when the service is down) or the spool. It is safe for
// concurrent use. cmd/the-loop builds one beside each lifecycle.Service and
// hands it to the service as its lifecycle.Hearing.
type Hearer struct {
	DB *store.DB
	// Events stamps the events hearing writes (clock, source, pid,
	// redaction: lifecycle's Service) and appends those that go alone.
	Events loop.EventWriter
	// Harness returns the adapter for a harness name; subject names the
	// session in the refusal.
	Harness func(name, subject string) (loop.Harness, error)
	// Runner returns the tmux runner of a socket, asked for the pids of a
	// session's panes (nil: a SessionStart of source clear is never
	// trusted).
	Runner func(socket string) loop.Runner
	// Clock stamps the record's times (nil: time.Now).
	Clock loop.Clock
	// NewID returns a new id for a turn heard without one (nil: uuid4).
	NewID func() string
	// Ended is called once an agent's SessionEnd is applied (the
	// supervisor looks now; nil: nobody is told).
	Ended func()
	// ProcStart is the start time of the running process pid (ok false
	// when none runs): with it, a hook from below a pane process seen
	// before is placed without a tmux query (identity.go; nil: always
	// asked).
	ProcStart func(pid int) (start uint64, ok bool)
	// ApprovalWait is how long a PermissionRequest hook is held for a
	// decision (standingSessions.approvals.waitSeconds; nil or 0:
	// loop.DefaultApprovalWait).
	ApprovalWait func() time.Duration

	// spoolMu serialises this process's spool readers.
	spoolMu sync.Mutex
	// panes are the pane processes seen in the tmux servers' answers, by
	// pid: where AgentOfProcess looks first (identity.go).
	panesMu sync.Mutex
	panes   map[int]knownPane
	// heard wakes the says waiting on hooks this process applied.
	heard notifier
	// hookLimits drops a session's Notification and PostToolUse hooks
	// above the rate (hooklimit.go).
	hookLimits hookLimiter
	// desk holds the PermissionRequest hooks waiting for a decision
	// (approvals.go).
	desk approvalDesk
}

// Heard returns a channel closed when this process next applies a hook
// (lifecycle.Hearing): a say takes it before it looks, so no hook applied
// after its look is missed.
func (s *Hearer) Heard() <-chan struct{} { return s.heard.wait() }

func (s *Hearer) now() time.Time {
	if s.Clock != nil {
		return s.Clock().UTC()
	}
	return time.Now().UTC()
}

func (s *Hearer) stamp() string { return s.now().Format(loop.RecordTimeFormat) }

func (s *Hearer) newID() string {
	if s.NewID != nil {
		return s.NewID()
	}
	return uuid.NewString()
}

func (s *Hearer) event(name, level string, fields ...loop.Field) loop.Event {
	return s.Events.NewEvent(name, level, fields...)
}

func (s *Hearer) emit(evs ...loop.Event) error { return s.Events.Emit(evs...) }

func (s *Hearer) ended() {
	if s.Ended != nil {
		s.Ended()
	}
}

// lookupHarness is s.Harness; a Hearer built without it (only a
// misconfigured one is) refuses, naming the harness.
func (s *Hearer) lookupHarness(name, subject string) (loop.Harness, error) {
	if s.Harness == nil {
		return nil, loop.Internal("the service has no harness adapters to look up the %s harness of %s", name, subject)
	}
	return s.Harness(name, subject)
}

// joinsTurn reports whether the harness named name takes a message
// submitted during a turn into that turn (codex: JoinsRunningTurn) rather
// than queuing it for a turn of its own.
func (s *Hearer) joinsTurn(name, subject string) bool {
	adapter, err := s.lookupHarness(name, subject)
	return err == nil && adapter.JoinsRunningTurn()
}

// capturesID reports whether the harness named name chooses its own
// conversation id (loop.Harness.CapturesSessionID).
func (s *Hearer) capturesID(name, subject string) bool {
	adapter, err := s.lookupHarness(name, subject)
	return err == nil && adapter.CapturesSessionID()
}

// hookedAdapter is the adapter of h's record's harness, which reads its
// transcript (nil when it cannot be looked up).
func (s *Hearer) hookedAdapter(h *hooked) loop.Harness {
	adapter, err := s.lookupHarness(h.harness, fmt.Sprint(h.subject.Value))
	if err != nil {
		return nil
	}
	return adapter
}

// notifier wakes every waiter at each broadcast: a waiter takes wait()'s
// channel before it looks, so no broadcast after its look is missed.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notifier) broadcast() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}
