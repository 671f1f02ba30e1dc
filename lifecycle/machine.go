// Package lifecycle holds the standing-session state machine and the verbs
// built on it (start, stop, restart, create, delete, say, list, status).
//
// Every transition goes through a looplab/fsm machine rebuilt from the
// stored record, and one transition is one store transaction that writes
// the record's new state and its event-log entries together (decisions D2).
// Side effects (tmux, Slack) run between transitions, never inside one, and
// their outcome is recorded as a transition of its own.
//
// The machine (stored status, or the in-flight claim stored beside it),
// drawn as mermaid stateDiagram-v2:
//
//	[*] --> absent
//	absent --> absent: refuse (live tmux session, no record: an event only)
//	stopped --> stopped: refuse (live tmux session the-loop did not start)
//	running --> running: refuse (live tmux session the-loop did not start)
//	absent --> stopped: create
//	absent --> first-start: claim-start
//	stopped --> starting: claim-start
//	running --> starting: claim-start (pane dead or gone)
//	first-start --> first-start: clear-dead
//	starting --> starting: clear-dead, resume-failed
//	first-start --> running: started, recover
//	starting --> running: started, resumed, recover
//	first-start --> absent: spawn-failed, abandon
//	starting --> stopped: spawn-failed, abandon
//	running --> running: already-running, say, announced
//	stopped --> running: already-running (live pane under a stopped record)
//	running --> stopping: claim-stop
//	stopped --> stopping: claim-stop
//	stopping --> stopped: stopped, stop-failed, abandon
//	running --> stopped: not-running (no tmux session left to stop)
//	stopped --> stopped: not-running
//	stopped --> absent: delete, create-failed
//
// In words:
//   - absent (no record) → first-start on claim-start; a live tmux session
//     that has no record is refused (refuse: an event, no record, no state);
//     so is one under a record whose tag it does not carry (not ours).
//   - stopped or running → starting on claim-start (a running record whose
//     pane is dead or gone is started again).
//   - first-start and starting → running on started (fresh) or resumed, or
//     on recover when a stale claim's pane turned out live; they stay put on
//     clear-dead (a dead retained pane was cleared) and resume-failed (the
//     resume did not survive its probe: fall back to fresh); they fall back
//     on spawn-failed or abandon (a stale claim with nothing live): to absent
//     from first-start, to stopped from starting.
//   - running or stopped → stopping on claim-stop; stopping → stopped on
//     stopped, stop-failed (the record is stopped regardless) or abandon.
//   - running → stopped on not-running (no tmux session to stop); stopped
//     stays stopped on it.
//   - stopped → running on already-running (a live pane under a stopped
//     record); running stays running on already-running, say and
//     announced (the Slack thread the start posted is recorded and bound).
//   - stopped → absent on delete and create-failed.
//
// The claim states (first-start, starting, stopping) hold a pid and a time:
// concurrent starts of one session spawn once, and a process killed
// mid-transition leaves a claim the next verb recognises as stale.
package lifecycle

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
)

// transitions is the machine's whole table.
var transitions = fsm.Events{
	{Name: EvCreate, Src: []string{StateAbsent}, Dst: StateStopped},
	{Name: EvCreateFailed, Src: []string{StateStopped}, Dst: StateAbsent},
	{Name: EvDelete, Src: []string{StateStopped}, Dst: StateAbsent},
	{Name: EvRefuse, Src: []string{StateAbsent}, Dst: StateAbsent},
	{Name: EvRefuse, Src: []string{StateStopped}, Dst: StateStopped},
	{Name: EvRefuse, Src: []string{StateRunning}, Dst: StateRunning},
	{Name: EvClaimStart, Src: []string{StateAbsent}, Dst: StateFirstStart},
	{Name: EvClaimStart, Src: []string{StateStopped, StateRunning}, Dst: StateStarting},
	{Name: EvAlreadyRunning, Src: []string{StateRunning, StateStopped}, Dst: StateRunning},
	{Name: EvClearDead, Src: []string{StateFirstStart}, Dst: StateFirstStart},
	{Name: EvClearDead, Src: []string{StateStarting}, Dst: StateStarting},
	{Name: EvResumeFailed, Src: []string{StateStarting}, Dst: StateStarting},
	{Name: EvStarted, Src: []string{StateFirstStart, StateStarting}, Dst: StateRunning},
	{Name: EvResumed, Src: []string{StateStarting}, Dst: StateRunning},
	{Name: EvRecover, Src: []string{StateFirstStart, StateStarting}, Dst: StateRunning},
	{Name: EvSpawnFailed, Src: []string{StateFirstStart}, Dst: StateAbsent},
	{Name: EvSpawnFailed, Src: []string{StateStarting}, Dst: StateStopped},
	{Name: EvAbandon, Src: []string{StateFirstStart}, Dst: StateAbsent},
	{Name: EvAbandon, Src: []string{StateStarting, StateStopping}, Dst: StateStopped},
	{Name: EvClaimStop, Src: []string{StateRunning, StateStopped}, Dst: StateStopping},
	{Name: EvStopped, Src: []string{StateStopping}, Dst: StateStopped},
	{Name: EvStopFailed, Src: []string{StateStopping}, Dst: StateStopped},
	{Name: EvNotRunning, Src: []string{StateRunning, StateStopped}, Dst: StateStopped},
	{Name: EvSay, Src: []string{StateRunning}, Dst: StateRunning},
	{Name: EvAnnounced, Src: []string{StateRunning}, Dst: StateRunning},
}

// StateOf derives the machine state from a stored record (nil: absent).
func StateOf(rec *loop.StandingRecord) string {
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

// Next rebuilds the machine in state and fires event, returning the
// destination state. An event the state does not allow is a *TransitionError.
//
// The machine has no callbacks, so ctx is not handed to it: a caller
// cancelled after its side effect (Ctrl-C right after a spawn) must still
// be able to record what happened.
func Next(_ context.Context, state, event string) (string, error) {
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
