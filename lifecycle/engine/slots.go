package engine

import (
	"context"
	"sync"
)

// slots caps how many spawns run at once (standingSessions.startConcurrency).
// The limit is read at every acquire, so a reloaded config applies to the
// next spawn; a limit of 0 or less is no limit.
type slots struct {
	mu   sync.Mutex
	busy int
	// wake is closed (and replaced) whenever a slot is released.
	wake chan struct{}
}

// spawnSlots is the engine's slots, made on first use.
func (e *Engine) spawnSlots() *slots {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.spawns == nil {
		e.spawns = &slots{wake: make(chan struct{})}
	}
	return e.spawns
}

// acquire waits for a slot under limit and returns its release; it fails
// only when ctx ends first.
func (l *slots) acquire(ctx context.Context, limit int) (func(), error) {
	for {
		l.mu.Lock()
		if limit <= 0 || l.busy < limit {
			l.busy++
			l.mu.Unlock()
			var once sync.Once
			return func() { once.Do(l.release) }, nil
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wake:
		}
	}
}

func (l *slots) release() {
	l.mu.Lock()
	l.busy--
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
}

// AcquireSpawn waits for one of limit spawn slots
// (standingSessions.startConcurrency, read at every call) and returns its
// release; it fails only when ctx ends first.
func (e *Engine) AcquireSpawn(ctx context.Context, limit int) (func(), error) {
	return e.spawnSlots().acquire(ctx, limit)
}
