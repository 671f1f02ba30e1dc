// Package lifecycle holds the verbs on standing sessions (start, stop,
// restart, create, delete, say, list, status, transcript, peek) and on
// work-item sessions (start, reply, close), the Slack announcement after a
// start, and the exits and restarts the supervisor records (exits.go).
//
// The verbs run on package engine: each kind is an engine.Kind
// (standingKind, workItemKind), each start an engine.Launch, and the
// Service is the engine's host (host.go). What lifecycle asks of the rooms
// beside it is declared here as small interfaces: Hearing and Supervisor.
package lifecycle
