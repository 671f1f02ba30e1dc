package runner

import "sync"

// fresh coalesces concurrent reads of one thing (the process table, a tmux
// server's panes): a caller gets a value whose read began after its call
// did — never an older one, so it is as fresh as a read of its own — and
// the callers that arrive while a read runs share the next one. A value it
// returns is shared: its callers never write it.
type fresh[T any] struct {
	mu      sync.Mutex
	changed *sync.Cond
	reading bool
	started uint64 // generations of the reads begun
	done    uint64 // the generation of value and err
	value   T
	err     error
}

func newFresh[T any]() *fresh[T] {
	f := &fresh[T]{}
	f.changed = sync.NewCond(&f.mu)
	return f
}

// read returns what readAll gave in a read begun after this call began.
func (f *fresh[T]) read(readAll func() (T, error)) (T, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	want := f.started + 1 // the first read that begins from now on
	for f.done < want {
		if f.reading {
			f.changed.Wait()
			continue
		}
		f.reading = true
		f.started++
		gen := f.started
		f.mu.Unlock()
		value, err := readAll()
		f.mu.Lock()
		f.value, f.err, f.done, f.reading = value, err, gen, false
		f.changed.Broadcast()
	}
	return f.value, f.err
}
