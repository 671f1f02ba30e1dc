package runner

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
)

// gate is a tmux whose every call blocks until the gate opens, counting
// the calls that reached it.
type gate struct {
	entered atomic.Int64
	in      chan struct{} // one send a call that reached it
	open    chan struct{}
}

func (g *gate) Run(ctx context.Context, args []string, _ io.Reader) ([]byte, error) {
	g.entered.Add(1)
	g.in <- struct{}{}
	select {
	case <-g.open:
		return nil, nil
	case <-ctx.Done():
		return nil, &NoAnswerError{Args: args, Err: ctx.Err()}
	}
}

// A process runs at most cap(clients) tmux clients at once: a call beyond
// them waits for a slot within its context — never starting a client, and
// failing with no answer when the context ends first — and runs once a
// slot frees.
func TestTmux_ClientsBeyondTheLimitWaitForASlot(t *testing.T) {
	g := &gate{in: make(chan struct{}, 1024), open: make(chan struct{})}
	tm := New(Options{Cmd: g})
	limit := cap(clients)
	var wg sync.WaitGroup
	for range limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = tm.run(context.Background(), 0, nil, "has-session")
		}()
	}
	for range limit {
		<-g.in
	}

	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() {
		_, err := tm.run(ctx, 0, nil, "has-session")
		queued <- err
	}()
	cancel()
	err := <-queued
	var na *NoAnswerError
	if !errors.As(err, &na) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a call whose context ended while it waited for a slot: %v, want a NoAnswerError for the cancelled context", err)
	}
	if n := g.entered.Load(); n != int64(limit) {
		t.Fatalf("%d clients started, want the limit %d: the call beyond it started one", n, limit)
	}

	later := make(chan error, 1)
	go func() {
		_, err := tm.run(context.Background(), 0, nil, "has-session")
		later <- err
	}()
	close(g.open)
	wg.Wait()
	if err := <-later; err != nil {
		t.Fatalf("a call queued behind the limit, once slots freed: %v", err)
	}
	if n := g.entered.Load(); n != int64(limit)+1 {
		t.Fatalf("%d clients started in all, want %d", n, limit+1)
	}
}
