package engine

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
// three claim states: first-start for a new work item, reopening a closed
// one, respawning an active one whose pane is dead or gone. The table is
// drawn in docs/machines.md (lifecycle/diagram_test.go holds the drawing to
// it); each unusual row carries a comment saying why it exists. A reply
// never spawns: no event but a start leaves absent or closed.

// Work-item machine states.
const (
	WorkItemAbsent     = "absent"
	WorkItemFirstStart = "first-start"
	WorkItemActive     = string(loop.SessionActive)
	WorkItemClosed     = string(loop.SessionClosed)
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
	// A live tmux session with no record is refused: an event, no record.
	// Under a record, a pane that is not the-loop's is refused by an event
	// alone: the machine has no refuse row for active or closed.
	{Name: WorkItemEvRefuse, Src: []string{WorkItemAbsent}, Dst: WorkItemAbsent},
	{Name: WorkItemEvClaimStart, Src: []string{WorkItemAbsent}, Dst: WorkItemFirstStart},
	{Name: WorkItemEvClaimStart, Src: []string{WorkItemClosed}, Dst: WorkItemReopening},
	// An active record whose pane is dead or gone is started again.
	{Name: WorkItemEvClaimStart, Src: []string{WorkItemActive}, Dst: WorkItemRespawning},
	// A dead retained pane was cleared before the spawn: the claim stays.
	{Name: WorkItemEvClearDead, Src: []string{WorkItemFirstStart}, Dst: WorkItemFirstStart},
	{Name: WorkItemEvClearDead, Src: []string{WorkItemReopening}, Dst: WorkItemReopening},
	{Name: WorkItemEvClearDead, Src: []string{WorkItemRespawning}, Dst: WorkItemRespawning},
	// The resume did not survive its probe: the same claim goes on with a
	// fresh conversation id.
	{Name: WorkItemEvResumeFailed, Src: []string{WorkItemReopening}, Dst: WorkItemReopening},
	{Name: WorkItemEvResumeFailed, Src: []string{WorkItemRespawning}, Dst: WorkItemRespawning},
	{Name: WorkItemEvStarted, Src: []string{WorkItemFirstStart, WorkItemReopening, WorkItemRespawning}, Dst: WorkItemActive},
	{Name: WorkItemEvResumed, Src: []string{WorkItemReopening, WorkItemRespawning}, Dst: WorkItemActive},
	// A stale claim whose pane turned out live and tagged: the start is
	// adopted.
	{Name: WorkItemEvRecover, Src: []string{WorkItemFirstStart, WorkItemReopening, WorkItemRespawning}, Dst: WorkItemActive},
	// A start that fails (or a stale claim with nothing live, abandon)
	// falls back where it came from: no record, closed, or active — an
	// active record whose respawn failed stays active, its pane gone.
	{Name: WorkItemEvSpawnFailed, Src: []string{WorkItemFirstStart}, Dst: WorkItemAbsent},
	{Name: WorkItemEvSpawnFailed, Src: []string{WorkItemReopening}, Dst: WorkItemClosed},
	{Name: WorkItemEvSpawnFailed, Src: []string{WorkItemRespawning}, Dst: WorkItemActive},
	{Name: WorkItemEvAbandon, Src: []string{WorkItemFirstStart}, Dst: WorkItemAbsent},
	{Name: WorkItemEvAbandon, Src: []string{WorkItemReopening}, Dst: WorkItemClosed},
	{Name: WorkItemEvAbandon, Src: []string{WorkItemRespawning}, Dst: WorkItemActive},
	// A live pane with the record's tag under a closed record (its tmux
	// session kept on close) is active again.
	{Name: WorkItemEvAlreadyRunning, Src: []string{WorkItemActive, WorkItemClosed}, Dst: WorkItemActive},
	{Name: WorkItemEvReply, Src: []string{WorkItemActive}, Dst: WorkItemActive},
	// Close runs after its tmux effects (harness ended, or the session
	// killed); the conversation id is kept, so a later start resumes it.
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
