// Package supervision is the service's watch over its standing sessions:
// it owns noticing a dead agent (one batched tmux query per socket, a pane
// seen dead twice before anything is done), the restart policy (always,
// on-failure, never), the backoff before a restart (Delay) and the limit
// on restarts within an interval. Supervisor runs only in the service
// (`the-loop serve`, wired by cmd/the-loop); without it nothing restarts.
//
// It reaches the engine only through the lifecycle verbs made for it
// (lifecycle/exits.go): every exit, restart and give-up it records is one
// transition there, under the name's lock or guarded by the revision it
// saw, so an operator's verb meanwhile has the last word. lifecycle sees
// it only as lifecycle.Supervisor (Active, Poke) and never imports it.
//
// It may import config and lifecycle, besides the root package and the
// standard library.
package supervision
