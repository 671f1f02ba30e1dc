package talk

import (
	"sync"

	loop "github.com/the-loop-dev/the-loop"
)

// Waits is who waits on whom: the agents (by AgentIdentity.String) with a
// waiting say in flight into a standing session (by name). Its zero value
// is ready; it is safe for concurrent use.
type Waits struct {
	mu sync.Mutex
	on map[string]map[string]int // standing name → waiting callers
}

// Enter records that caller waits on name, refusing a wait that could
// never end: into its own session, or into one that waits on the caller.
// leave ends the wait.
func (g *Waits) Enter(caller loop.AgentIdentity, name string) (leave func(), err error) {
	if caller.Standing == name {
		return nil, loop.Invalid("standing session '%s' cannot wait for its own answer: it would wait on itself — say without wait", name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if caller.Standing != "" && g.on[caller.Standing]["standing:"+name] > 0 {
		return nil, loop.Invalid("standing session '%s' is itself waiting for an answer from %s: waiting on it would never end — say without wait", name, caller)
	}
	if g.on == nil {
		g.on = map[string]map[string]int{}
	}
	if g.on[name] == nil {
		g.on[name] = map[string]int{}
	}
	key := caller.String()
	g.on[name][key]++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.on[name][key]--; g.on[name][key] <= 0 {
			delete(g.on[name], key)
		}
	}, nil
}
