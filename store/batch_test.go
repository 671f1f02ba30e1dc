package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// holdFirst makes the first fn given to it wait until want more calls are
// pending on b, so that they all land in the batch after it; leading is
// closed once that first fn runs.
func holdFirst(b *batcher, want int) (hold func(), leading <-chan struct{}) {
	var once sync.Once
	lead := make(chan struct{})
	return func() {
		once.Do(func() {
			close(lead)
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				b.mu.Lock()
				n := len(b.pending)
				b.mu.Unlock()
				if n >= want {
					return
				}
				time.Sleep(time.Millisecond)
			}
		})
	}, lead
}

func TestBatch_ConcurrentWritesShareACommitAndAFailureStaysItsOwn(t *testing.T) {
	for _, transient := range []bool{false, true} {
		t.Run(fmt.Sprintf("transient=%v", transient), func(t *testing.T) {
			db := openTest(t, Options{Transient: transient})
			const n = 20
			hold, leading := holdFirst(&db.batch, n-1)
			var mu sync.Mutex
			txs := map[int]bool{} // the bbolt transaction ids the committed fns ran in
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				if i == 1 {
					<-leading // the first one leads, alone in its batch
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = db.Batch(func(tx *Tx) error {
						hold()
						if err := tx.PutStanding(&loop.StandingRecord{Name: fmt.Sprintf("s%02d", i), Status: loop.StatusRunning}); err != nil {
							return err
						}
						if i == 7 {
							return errors.New("seven refuses")
						}
						mu.Lock()
						txs[tx.tx.ID()] = true
						mu.Unlock()
						return nil
					})
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if (i == 7) != (err != nil) {
					t.Errorf("call %d: err %v", i, err)
				}
			}
			err := db.View(func(tx *Tx) error {
				for i := range n {
					rec, err := tx.Standing(fmt.Sprintf("s%02d", i))
					if err != nil {
						return err
					}
					if (rec == nil) != (i == 7) {
						t.Errorf("s%02d: record %v; only the failing call's write is dropped", i, rec)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// The first alone, then the other 19 together (rolled back once
			// for the failing one, run again without it).
			if len(txs) > 3 {
				t.Fatalf("%d calls committed in %d transactions (%v), want them shared", n-1, len(txs), txs)
			}
		})
	}
}

func TestBatch_APanicReachesItsCallerAndNothingIsWritten(t *testing.T) {
	db := openTest(t, Options{})
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Fatalf("recovered %v, want the fn's panic", v)
			}
		}()
		_ = db.Batch(func(tx *Tx) error {
			_ = tx.PutStanding(&loop.StandingRecord{Name: "x"})
			panic("boom")
		})
	}()
	if err := db.Batch(func(tx *Tx) error { return tx.PutStanding(&loop.StandingRecord{Name: "y"}) }); err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *Tx) error {
		x, _ := tx.Standing("x")
		y, _ := tx.Standing("y")
		if x != nil || y == nil {
			t.Fatalf("x %v y %v: want the panicking write dropped, the next kept", x, y)
		}
		return nil
	})
}

func TestView_ConcurrentReadsShareOneOpenInTransientMode(t *testing.T) {
	db := openTest(t, Options{Transient: true})
	if err := db.Update(func(tx *Tx) error { return tx.PutStanding(&loop.StandingRecord{Name: "a"}) }); err != nil {
		t.Fatal(err)
	}
	const n = 10
	hold, leading := holdFirst(&db.views, n-1)
	var mu sync.Mutex
	txs := map[*Tx]bool{}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		if i == 1 {
			<-leading // the first one leads, alone in its read
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.View(func(tx *Tx) error {
				hold()
				mu.Lock()
				txs[tx] = true
				mu.Unlock()
				if rec, err := tx.Standing("a"); err != nil || rec == nil {
					return fmt.Errorf("read %v %v", rec, err)
				}
				if i == 3 {
					return errors.New("three's own error")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 3) != (err != nil) {
			t.Errorf("view %d: err %v; each read gets its own result", i, err)
		}
	}
	// The first alone, then the other nine in one transaction (one open).
	if len(txs) > 2 {
		t.Fatalf("%d views read in %d transactions, want them shared", n, len(txs))
	}
}
