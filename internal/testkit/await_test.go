package testkit_test

import (
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// nearDeadline is a test whose deadline is now.
type nearDeadline struct{ testing.TB }

func (nearDeadline) Deadline() (time.Time, bool) { return time.Now(), true }

// TestAwait_DeliveredClosedAndLate: Await returns what the channel
// delivered, a closed channel delivers at once, and AwaitOK reports false,
// without failing, when the deadline is reached first.
func TestAwait_DeliveredClosedAndLate(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 3
	if got := testkit.Await(t, ch, "the value"); got != 3 {
		t.Fatalf("Await = %d", got)
	}
	closed := make(chan struct{})
	close(closed)
	if _, ok := testkit.AwaitOK(t, closed); !ok {
		t.Fatal("a closed channel did not deliver")
	}
	if v, ok := testkit.AwaitOK(nearDeadline{t}, make(chan int)); ok || v != 0 {
		t.Fatalf("AwaitOK at the deadline = %d, %v", v, ok)
	}
	if t.Failed() {
		t.Fatal("AwaitOK failed the test")
	}
}
