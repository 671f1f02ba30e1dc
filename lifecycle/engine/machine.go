package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/looplab/fsm"

	loop "github.com/the-loop-dev/the-loop"
)

// Machine states.
const (
	StateAbsent     = "absent"
	StateStopped    = "stopped"
	StateRunning    = "running"
	StateFirstStart = "first-start"
	StateStarting   = "starting"
	StateStopping   = "stopping"
	// StateFailed is a session the supervisor gave up restarting
	// (package supervision, through exits.go): start, stop and delete leave it, say is refused.
	StateFailed = "failed"
)

// Machine events.
const (
	EvCreate         = "create"
	EvCreateFailed   = "create-failed"
	EvDelete         = "delete"
	EvClaimStart     = "claim-start"
	EvRefuse         = "refuse"
	EvAlreadyRunning = "already-running"
	EvClearDead      = "clear-dead"
	EvResumeFailed   = "resume-failed"
	EvStarted        = "started"
	EvResumed        = "resumed"
	EvSpawnFailed    = "spawn-failed"
	EvRecover        = "recover"
	EvAbandon        = "abandon"
	EvClaimStop      = "claim-stop"
	EvStopped        = "stopped"
	EvStopFailed     = "stop-failed"
	EvNotRunning     = "not-running"
	EvSay            = "say"
	EvAnnounced      = "announced"
	// The supervisor's events (package supervision, through exits.go).
	EvExited         = "exited"
	EvRestarting     = "restarting"
	EvRestartLimited = "restart-limited"
)

// transitions is the machine's whole table.
var transitions = fsm.Events{
	{Name: EvCreate, Src: []string{StateAbsent}, Dst: StateStopped},
	// The supervisor records a dead agent's exit and each restart it
	// schedules on the running record; more restarts than the burst allows
	// leave the session failed.
	{Name: EvExited, Src: []string{StateRunning}, Dst: StateRunning},
	{Name: EvRestarting, Src: []string{StateRunning}, Dst: StateRunning},
	{Name: EvRestartLimited, Src: []string{StateRunning}, Dst: StateFailed},
	// A failed session is started, stopped or deleted like a stopped one.
	{Name: EvClaimStart, Src: []string{StateFailed}, Dst: StateStarting},
	{Name: EvAlreadyRunning, Src: []string{StateFailed}, Dst: StateRunning},
	{Name: EvRefuse, Src: []string{StateFailed}, Dst: StateFailed},
	{Name: EvClaimStop, Src: []string{StateFailed}, Dst: StateStopping},
	{Name: EvNotRunning, Src: []string{StateFailed}, Dst: StateStopped},
	{Name: EvDelete, Src: []string{StateFailed}, Dst: StateAbsent},
	// A create that asked to start the session and whose start failed
	// leaves no record: the name is free again.
	{Name: EvCreateFailed, Src: []string{StateStopped}, Dst: StateAbsent},
	{Name: EvDelete, Src: []string{StateStopped}, Dst: StateAbsent},
	// A live tmux session with no record is refused: an event, no record,
	// no state.
	{Name: EvRefuse, Src: []string{StateAbsent}, Dst: StateAbsent},
	// A live tmux session under a record whose tag it does not carry (not
	// the-loop's agent) is refused and never touched; the record stays.
	{Name: EvRefuse, Src: []string{StateStopped}, Dst: StateStopped},
	{Name: EvRefuse, Src: []string{StateRunning}, Dst: StateRunning},
	{Name: EvClaimStart, Src: []string{StateAbsent}, Dst: StateFirstStart},
	// A running record whose pane is dead or gone is started again.
	{Name: EvClaimStart, Src: []string{StateStopped, StateRunning}, Dst: StateStarting},
	// A live pane with the record's tag under a stopped record (started
	// by hand, or a stop that lost its race) is running again.
	{Name: EvAlreadyRunning, Src: []string{StateRunning, StateStopped}, Dst: StateRunning},
	// A dead retained pane was cleared before the spawn: the claim stays.
	{Name: EvClearDead, Src: []string{StateFirstStart}, Dst: StateFirstStart},
	{Name: EvClearDead, Src: []string{StateStarting}, Dst: StateStarting},
	// The resume did not survive its probe: the same claim goes on with a
	// fresh conversation id.
	{Name: EvResumeFailed, Src: []string{StateStarting}, Dst: StateStarting},
	{Name: EvStarted, Src: []string{StateFirstStart, StateStarting}, Dst: StateRunning},
	{Name: EvResumed, Src: []string{StateStarting}, Dst: StateRunning},
	// A stale claim whose pane turned out live and tagged: the start is
	// adopted.
	{Name: EvRecover, Src: []string{StateFirstStart, StateStarting}, Dst: StateRunning},
	// A start that fails falls back where it came from: to no record from
	// a first start, to stopped otherwise.
	{Name: EvSpawnFailed, Src: []string{StateFirstStart}, Dst: StateAbsent},
	{Name: EvSpawnFailed, Src: []string{StateStarting}, Dst: StateStopped},
	// A stale claim with nothing live falls back like a failed start; a
	// stale stop leaves the record stopped.
	{Name: EvAbandon, Src: []string{StateFirstStart}, Dst: StateAbsent},
	{Name: EvAbandon, Src: []string{StateStarting, StateStopping}, Dst: StateStopped},
	{Name: EvClaimStop, Src: []string{StateRunning, StateStopped}, Dst: StateStopping},
	{Name: EvStopped, Src: []string{StateStopping}, Dst: StateStopped},
	// A stop that could not end the agent still records it stopped: the
	// record says what the-loop last did, not liveness.
	{Name: EvStopFailed, Src: []string{StateStopping}, Dst: StateStopped},
	// No tmux session left to stop (or one that is not the-loop's):
	// running becomes stopped, stopped stays stopped.
	{Name: EvNotRunning, Src: []string{StateRunning, StateStopped}, Dst: StateStopped},
	{Name: EvSay, Src: []string{StateRunning}, Dst: StateRunning},
	// The Slack thread the start posted is recorded and bound.
	{Name: EvAnnounced, Src: []string{StateRunning}, Dst: StateRunning},
}

// StandingStateOf derives the machine state from a stored record (nil: absent).
func StandingStateOf(rec *loop.StandingRecord) string {
	switch {
	case rec == nil:
		return StateAbsent
	case rec.Claim != nil && rec.Claim.Op == "stop":
		return StateStopping
	case rec.Claim != nil && rec.Status == loop.StatusAbsent:
		return StateFirstStart
	case rec.Claim != nil:
		return StateStarting
	case rec.Status == loop.StatusStopped:
		return StateStopped
	case rec.Status == loop.StatusFailed:
		return StateFailed
	default:
		return StateRunning
	}
}

// ErrTransition is returned (wrapped) when an event is not valid in the
// record's current state.
var ErrTransition = errors.New("invalid transition")

// TransitionError names the state and the refused event.
type TransitionError struct {
	State, Event string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("%s: event %q in state %q", ErrTransition, e.Event, e.State)
}

// Unwrap lets errors.Is(err, ErrTransition) hold.
func (e *TransitionError) Unwrap() error { return ErrTransition }

// NextStanding rebuilds the machine in state and fires event, returning the
// destination state. An event the state does not allow is a *TransitionError.
//
// The machine has no callbacks, so ctx is not handed to it: a caller
// cancelled after its side effect (Ctrl-C right after a spawn) must still
// be able to record what happened.
func NextStanding(_ context.Context, state, event string) (string, error) {
	return fire(fsm.NewFSM(state, transitions, nil), state, event)
}

// fire fires event on a machine rebuilt in state (both machines).
func fire(m *fsm.FSM, state, event string) (string, error) {
	err := m.Event(context.Background(), event)
	var invalid fsm.InvalidEventError
	var unknown fsm.UnknownEventError
	switch {
	case err == nil:
	case errors.As(err, &invalid), errors.As(err, &unknown):
		return state, &TransitionError{State: state, Event: event}
	case errors.As(err, new(fsm.NoTransitionError)):
	default:
		return state, fmt.Errorf("machine: %s in %s: %w", event, state, err)
	}
	return m.Current(), nil
}
