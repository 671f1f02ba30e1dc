package lifecycle

import (
	"context"

	"github.com/looplab/fsm"

	loop "github.com/the-loop-dev/the-loop"
)

// The work-item session machine: a work item's session, in its own store
// bucket and its own namespace, with the discipline of the standing machine
// — a looplab/fsm table rebuilt from the stored record for each event, and
// one event is one store transaction holding the record and its events.
//
// Stored statuses are the original's active and closed; a start in flight
// is a claim stored beside the status (never shown as one), which gives
// three claim states:
//
//	[*] --> absent
//	absent --> absent: refuse (live tmux session, no record: an event only)
//	absent --> first-start: claim-start
//	closed --> reopening: claim-start
//	active --> respawning: claim-start (pane dead or gone)
//	first-start --> first-start: clear-dead
//	reopening --> reopening: clear-dead, resume-failed
//	respawning --> respawning: clear-dead, resume-failed
//	first-start --> active: started, recover
//	reopening --> active: started, resumed, recover
//	respawning --> active: started, resumed, recover
//	first-start --> absent: spawn-failed, abandon
//	reopening --> closed: spawn-failed, abandon
//	respawning --> active: spawn-failed, abandon
//	active --> active: already-running, reply
//	closed --> active: already-running (live pane under a closed record)
//	active --> closed: close
//
// In words: a start claims the session (first-start for a new work item,
// reopening a closed one, respawning an active one whose pane is dead or
// gone), clears a dead retained pane, tries a resume when there is a
// conversation to continue (resume-failed falls back to fresh), and lands
// on active (started, resumed, or recover when an interrupted start's pane
// turned out live) — or falls back where it came from (spawn-failed, or
// abandon for a stale claim with nothing live). A live pane with no record
// is refused; a live pane under a record is already-running. A reply keeps
// a session active; close (after its tmux effects) makes it closed. A
// reply never spawns: no event but a start leaves absent or closed.

// Work-item machine states.
const (
	WorkItemAbsent     = "absent"
	WorkItemFirstStart = "first-start"
	WorkItemActive     = loop.SessionActive
	WorkItemClosed     = loop.SessionClosed
	WorkItemReopening  = "reopening"
	WorkItemRespawning = "respawning"
)

// Work-item machine events. The start's events are the standing machine's
// (the engine fires Ev* on both); reply and close are the work item's own.
const (
	WorkItemEvClaimStart     = EvClaimStart
	WorkItemEvRefuse         = EvRefuse
	WorkItemEvAlreadyRunning = EvAlreadyRunning
	WorkItemEvClearDead      = EvClearDead
	WorkItemEvResumeFailed   = EvResumeFailed
	WorkItemEvStarted        = EvStarted
	WorkItemEvResumed        = EvResumed
	WorkItemEvRecover        = EvRecover
	WorkItemEvSpawnFailed    = EvSpawnFailed
	WorkItemEvAbandon        = EvAbandon
	WorkItemEvReply          = "reply"
	WorkItemEvClose          = "close"
)

// workItemTransitions is the work-item machine's whole table.
var workItemTransitions = fsm.Events{
	{Name: WorkItemEvRefuse, Src: []string{WorkItemAbsent}, Dst: WorkItemAbsent},
	{Name: WorkItemEvClaimStart, Src: []string{WorkItemAbsent}, Dst: WorkItemFirstStart},
	{Name: WorkItemEvClaimStart, Src: []string{WorkItemClosed}, Dst: WorkItemReopening},
	{Name: WorkItemEvClaimStart, Src: []string{WorkItemActive}, Dst: WorkItemRespawning},
	{Name: WorkItemEvClearDead, Src: []string{WorkItemFirstStart}, Dst: WorkItemFirstStart},
	{Name: WorkItemEvClearDead, Src: []string{WorkItemReopening}, Dst: WorkItemReopening},
	{Name: WorkItemEvClearDead, Src: []string{WorkItemRespawning}, Dst: WorkItemRespawning},
	{Name: WorkItemEvResumeFailed, Src: []string{WorkItemReopening}, Dst: WorkItemReopening},
	{Name: WorkItemEvResumeFailed, Src: []string{WorkItemRespawning}, Dst: WorkItemRespawning},
	{Name: WorkItemEvStarted, Src: []string{WorkItemFirstStart, WorkItemReopening, WorkItemRespawning}, Dst: WorkItemActive},
	{Name: WorkItemEvResumed, Src: []string{WorkItemReopening, WorkItemRespawning}, Dst: WorkItemActive},
	{Name: WorkItemEvRecover, Src: []string{WorkItemFirstStart, WorkItemReopening, WorkItemRespawning}, Dst: WorkItemActive},
	{Name: WorkItemEvSpawnFailed, Src: []string{WorkItemFirstStart}, Dst: WorkItemAbsent},
	{Name: WorkItemEvSpawnFailed, Src: []string{WorkItemReopening}, Dst: WorkItemClosed},
	{Name: WorkItemEvSpawnFailed, Src: []string{WorkItemRespawning}, Dst: WorkItemActive},
	{Name: WorkItemEvAbandon, Src: []string{WorkItemFirstStart}, Dst: WorkItemAbsent},
	{Name: WorkItemEvAbandon, Src: []string{WorkItemReopening}, Dst: WorkItemClosed},
	{Name: WorkItemEvAbandon, Src: []string{WorkItemRespawning}, Dst: WorkItemActive},
	{Name: WorkItemEvAlreadyRunning, Src: []string{WorkItemActive, WorkItemClosed}, Dst: WorkItemActive},
	{Name: WorkItemEvReply, Src: []string{WorkItemActive}, Dst: WorkItemActive},
	{Name: WorkItemEvClose, Src: []string{WorkItemActive}, Dst: WorkItemClosed},
}

// WorkItemStateOf derives the work-item machine's state from a stored
// record (nil: absent). A record with no status is the placeholder a first
// start claims under.
func WorkItemStateOf(rec *loop.WorkItemRecord) string {
	switch {
	case rec == nil:
		return WorkItemAbsent
	case rec.Claim != nil && rec.Status == loop.SessionClosed:
		return WorkItemReopening
	case rec.Claim != nil && rec.Status == loop.SessionActive:
		return WorkItemRespawning
	case rec.Claim != nil:
		return WorkItemFirstStart
	case rec.Status == loop.SessionClosed:
		return WorkItemClosed
	case rec.Status == loop.SessionActive:
		return WorkItemActive
	default:
		// A record with neither status nor claim (a first start interrupted
		// and settled by hand, or a record the original left paused) is
		// read as closed: it never receives a reply and a start reopens it.
		return WorkItemClosed
	}
}

// NextWorkItem rebuilds the work-item machine in state and fires event,
// returning the destination state. An event the state does not allow is a
// *TransitionError.
func NextWorkItem(_ context.Context, state, event string) (string, error) {
	return fire(fsm.NewFSM(state, workItemTransitions, nil), state, event)
}
