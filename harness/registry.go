package harness

import (
	"context"
	"sort"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Registry is the set of harness adapters the-loop knows, keyed by name:
// "claude", "codex", "gemini" and "cursor" (cursor refuses every spawn,
// original §3.2; docs/harnesses.md says what each can do).
type Registry struct {
	adapters map[string]loop.Harness
}

// NewRegistry builds the claude adapter with opt, the codex and gemini
// adapters with opt's trust switch, environment and home, and the cursor
// adapter.
func NewRegistry(opt ClaudeOptions) *Registry {
	return &Registry{adapters: map[string]loop.Harness{
		"claude": NewClaude(opt),
		"codex":  NewCodex(CodexOptions{TrustEnabled: opt.TrustEnabled, Env: opt.Env, Home: opt.Home}),
		"gemini": NewGemini(GeminiOptions{TrustEnabled: opt.TrustEnabled, Env: opt.Env, Home: opt.Home}),
		"cursor": Cursor{},
	}}
}

// SessionIDReporter is implemented by an adapter whose CLI cannot start a
// conversation under an id chosen in advance (codex): its FreshArgv ignores
// the id, and the id the CLI chose is read back from the spawned pane's
// process tree. ok is false while the CLI has not revealed it yet; a caller
// polls, and a session whose id is never captured is failed, never
// recorded running under the id the-loop had chosen.
type SessionIDReporter interface {
	SessionIDOf(panePID int) (id string, ok bool, err error)
}

var _ SessionIDReporter = (*Codex)(nil)

// Names returns the registered harness names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.adapters))
	for n := range r.adapters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the adapter named harness for the standing session named
// session (the name only shapes the error). An unknown harness is an
// EINVALID *loop.Error: "unknown harness '<h>' for standing session '<n>'
// (one of claude, codex, cursor, gemini)".
func (r *Registry) Lookup(harness, session string) (loop.Harness, error) {
	if h, ok := r.adapters[harness]; ok {
		return h, nil
	}
	return nil, loop.Invalid("unknown harness '%s' for standing session '%s' (one of %s)",
		harness, session, strings.Join(r.Names(), ", "))
}

// Lookup is NewRegistry(opt).Lookup(harness, session).
func Lookup(harness, session string, opt ClaudeOptions) (loop.Harness, error) {
	return NewRegistry(opt).Lookup(harness, session)
}

// WaitSessionID polls r.SessionIDOf(panePID) every interval (≤ 0: 100 ms)
// until it reports the id, fails, or ctx ends — the capture a start of a
// SessionIDReporter's CLI runs before it records the session running. A
// ctx that ends first gives an EINTERNAL *loop.Error saying no id was
// captured, so the caller records the start failed, never running under
// the id it had chosen.
func WaitSessionID(ctx context.Context, r SessionIDReporter, panePID int, interval time.Duration) (string, error) {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		id, ok, err := r.SessionIDOf(panePID)
		if err != nil {
			return "", err
		}
		if ok {
			return id, nil
		}
		select {
		case <-ctx.Done():
			return "", loop.Internal("the agent in pane process %d showed no conversation id before the start gave up (%v); "+
				"not recording it running — a fresh Codex reveals its id with its first turn, so start it with a prompt", panePID, ctx.Err())
		case <-t.C:
		}
	}
}
