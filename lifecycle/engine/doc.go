// Package engine is what lifecycle's verbs run on: the two state machines
// (standing sessions, work-item sessions), the transitions, the claims and
// the one starter that spawns both kinds.
//
// Every transition goes through a looplab/fsm machine rebuilt from the
// stored record, and one transition is one store transaction that writes
// the record's new state and its event-log entries together (decisions D2).
// Side effects (tmux, Slack) run between transitions, never inside one, and
// their outcome is recorded as a transition of its own.
//
// The machines are tables (machine.go, workitem_machine.go), drawn in
// docs/machines.md from the tables themselves (diagram_test.go holds the
// drawing to them); each unusual row carries a comment saying why it
// exists.
//
// The claim states (first-start, starting, stopping) hold a pid and a time:
// concurrent starts of one session spawn once, and a process killed
// mid-transition leaves a claim the next verb recognises as stale.
//
// The engine knows a kind only as a Kind (its records) and a Launch (what a
// start of it spawns and reports), and the service it runs in only as its
// Host. It imports config, store, internal/fileperm and
// internal/credential, never harness, runner or sdk.
package engine
