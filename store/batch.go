package store

import (
	"errors"
	"fmt"
	"sync"
)

// batcher coalesces the concurrent Batch calls of one handle into shared
// write transactions (group commit): each commit costs two fsyncs and, in
// transient mode, one open of the file under its lock, so fifty sessions
// started at once, or fifty hooks heard at once, commit in a few
// transactions instead of fifty. In transient mode a second batcher does
// the same for View: concurrent reads share one open of the file.
type batcher struct {
	mu      sync.Mutex
	pending []*batchCall
	running bool // a goroutine is committing batches
}

// batchCall is one Batch call waiting for its batch.
type batchCall struct {
	fn  func(*Tx) error
	err chan error
}

// panicked carries a panic of a batched fn to the goroutine that called
// Batch, which panics with it again.
type panicked struct{ v any }

func (p *panicked) Error() string {
	return fmt.Sprintf("store: a batched transaction panicked: %v", p.v)
}

// Batch is Update for concurrent callers: fn runs in a write transaction
// that the handle may share with the fns of other goroutines calling Batch
// at the same time, committed once for all of them (each fn sees the
// writes of the fns before it, as if they had run one after another). When
// an fn returns an error (or panics), the shared transaction is rolled
// back, that fn runs again alone and its own result is returned, and the
// others run again in a new batch: fn may therefore run more than once and
// must have no effect but its writes to the transaction and what it sets
// for its caller each time it runs. A lone caller pays nothing more than
// Update's cost.
func (db *DB) Batch(fn func(*Tx) error) error {
	c := &batchCall{fn: fn, err: make(chan error, 1)}
	return db.enqueue(&db.batch, c, db.commitBatch)
}

// view is View in transient mode: the fns of concurrent callers run one
// after another in one read transaction, each getting its own result, so
// fifty goroutines reading at once open the file once, not fifty times.
func (db *DB) view(fn func(*Tx) error) error {
	return db.enqueue(&db.views, &batchCall{fn: fn, err: make(chan error, 1)}, db.readBatch)
}

// enqueue adds c to b, starting b's goroutine when none runs, and waits
// for c's result (a panic of c's fn panics here again).
func (db *DB) enqueue(b *batcher, c *batchCall, commit func([]*batchCall)) error {
	b.mu.Lock()
	b.pending = append(b.pending, c)
	start := !b.running
	b.running = true
	b.mu.Unlock()
	if start {
		go b.drain(commit)
	}
	err := <-c.err
	var p *panicked
	if errors.As(err, &p) {
		panic(p.v)
	}
	return err
}

// drain commits what is pending, batch after batch, until nothing is
// left.
func (b *batcher) drain(commit func([]*batchCall)) {
	for {
		b.mu.Lock()
		calls := b.pending
		b.pending = nil
		if len(calls) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		commit(calls)
	}
}

// readBatch runs calls in one read transaction, each with its own result.
func (db *DB) readBatch(calls []*batchCall) {
	errs := make([]error, len(calls))
	ran := false
	err := db.run(false, func(tx *Tx) error {
		ran = true
		for i, c := range calls {
			errs[i] = callSafe(c.fn, tx)
		}
		return nil
	})
	for i, c := range calls {
		if !ran {
			errs[i] = err
		}
		c.err <- errs[i]
	}
}

// commitBatch runs calls in one transaction; a call that fails is run alone
// and the rest again.
func (db *DB) commitBatch(calls []*batchCall) {
	for len(calls) > 0 {
		failed := -1
		err := db.run(true, func(tx *Tx) error {
			for i, c := range calls {
				if err := callSafe(c.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed < 0 { // committed, or the transaction itself failed: one answer for all
			for _, c := range calls {
				c.err <- err
			}
			return
		}
		c := calls[failed]
		if len(calls) == 1 {
			c.err <- err
			return
		}
		c.err <- db.run(true, func(tx *Tx) error { return callSafe(c.fn, tx) })
		calls = append(calls[:failed:failed], calls[failed+1:]...)
	}
}

// callSafe runs fn, turning a panic into a *panicked error.
func callSafe(fn func(*Tx) error, tx *Tx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicked{v: v}
		}
	}()
	return fn(tx)
}
