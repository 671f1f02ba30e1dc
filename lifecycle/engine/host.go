package engine

import (
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// Engine is what one service runs its verbs on: the transitions (one store
// transaction each), the claims, the per-name locks, the spawn slots, the
// resume probes' shared tmux queries and the starter. What it asks of the
// service holding it is its Host. It is safe for concurrent use.
type Engine struct {
	h Host

	mu     sync.Mutex
	names  map[string]chan struct{} // per-name locks: a token in a buffer of one
	spawns *slots                   // standingSessions.startConcurrency (slots.go)
	probes probeRounds              // the resume probes' shared tmux queries (probes.go)
}

// New is an engine over h.
func New(h Host) *Engine { return &Engine{h: h} }

// Host is what the engine asks of the service it runs in (lifecycle's
// Service): each method reads the service's settings as they are at the
// call, so a setting changed after the engine was made applies.
type Host interface {
	// Store is the store every transition writes.
	Store() *store.DB
	// Runner is the tmux runner of socket ("" = the default server); nil
	// when the service has none.
	Runner(socket string) loop.Runner
	// Harness is the adapter of a harness name; session names the session
	// in the refusal.
	Harness(name, session string) (loop.Harness, error)
	// LookPath resolves a harness binary on this process's PATH.
	LookPath(file string) (string, error)
	// Now is the time (UTC); NewID a new conversation id (uuid4).
	Now() time.Time
	NewID() string
	// ProcStart is the start time of the running process pid, ok false
	// when none runs; known is false when the host cannot read start
	// times (claims are then judged by pid alone).
	ProcStart(pid int) (start uint64, ok, known bool)
	// ClaimWait bounds how long a verb waits for another process's claim
	// (0: two minutes).
	ClaimWait() time.Duration
	// HookBinary is the absolute path of the-loop's binary, which every
	// spawn of a CLI with hooks runs for them ("": no hooks are declared).
	HookBinary() string
	// Source is the events' source: "cli", "service" or "restart"; a
	// refusal to find a harness binary names whose PATH it searched by it.
	Source() string
	// Event builds an event envelope stamped with the source and pid, its
	// fields redacted; Emit appends events outside any transition.
	Event(name, level string, fields ...loop.Field) loop.Event
	Emit(evs ...loop.Event) error
	// AddCredential tells the redactor the hash of an agent credential
	// the engine issued.
	AddCredential(hash string)
}

// stamp is the time as a record keeps it.
func (e *Engine) stamp() string { return e.h.Now().Format(loop.RecordTimeFormat) }
