package harness

import (
	"sort"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// Registry is the set of harness adapters the-loop knows, keyed by name:
// exactly "claude" and "cursor" (original §3 — there is no other adapter).
type Registry struct {
	adapters map[string]loop.Harness
}

// NewRegistry builds the claude adapter with opt and the cursor adapter.
func NewRegistry(opt ClaudeOptions) *Registry {
	return &Registry{adapters: map[string]loop.Harness{
		"claude": NewClaude(opt),
		"cursor": Cursor{},
	}}
}

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
// (one of claude, cursor)".
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
