package engine

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestSlots_CapConcurrentHolders(t *testing.T) {
	var l slots
	l.wake = make(chan struct{})
	var mu sync.Mutex
	busy, most := 0, 0
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			release, err := l.acquire(context.Background(), 3)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			busy++
			most = max(most, busy)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond) // hold the slot a while, so the holders overlap
			mu.Lock()
			busy--
			mu.Unlock()
			release()
			release() // twice is once
		})
	}
	wg.Wait()
	if most > 3 || most < 1 {
		t.Fatalf("%d holders at once, limit 3", most)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hold, _ := l.acquire(context.Background(), 1)
	if _, err := l.acquire(ctx, 1); err == nil {
		t.Fatal("acquire past the limit with a cancelled context succeeded")
	}
	hold()
}
