package testkit_test

import (
	"runtime"
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

// recorder is a test whose deadline is now and whose Logf and Fatalf are
// recorded (Fatalf ends the goroutine, as the testing package's does).
type recorder struct {
	nearDeadline
	logs, fatals []string
}

func (r *recorder) Helper() {}

func (r *recorder) Logf(format string, args ...any) { r.logs = append(r.logs, format) }

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, format)
	runtime.Goexit()
}

// TestEventually_WaitsPastItsTimeoutUntilTheDeadline: a condition that
// holds later than the idle figure is still waited for (logged once, not
// failed); one that never holds fails only as the deadline nears.
func TestEventually_WaitsPastItsTimeoutUntilTheDeadline(t *testing.T) {
	start := time.Now()
	n := 0
	testkit.Eventually(t, func() bool { n++; return time.Since(start) > 50*time.Millisecond }, time.Millisecond, "the condition")
	if n < 2 {
		t.Fatalf("the condition was looked at %d times", n)
	}
	r := &recorder{nearDeadline: nearDeadline{t}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		testkit.Eventually(r, func() bool { return false }, time.Hour, "never")
	}()
	testkit.Await(t, done, "Eventually to give up at the deadline")
	if len(r.fatals) != 1 || len(r.logs) != 0 {
		t.Fatalf("fatals %q, logs %q", r.fatals, r.logs)
	}
}
