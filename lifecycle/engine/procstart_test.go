package engine

import (
	"os"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// An engine whose host reads no start times (a lifecycle.Service built with
// no ProcStart; cmd/the-loop wires one) never panics: its claims carry no
// start time, and another process's claim is judged by its pid alone, for
// at most 15 minutes.
func TestClaims_WithoutProcStartAreJudgedByTheirPid(t *testing.T) {
	e := New(testHost{})
	if c := e.NewClaim("start"); c.PID != os.Getpid() || c.PIDStart != 0 {
		t.Fatalf("claim %+v, want this pid and no start time", c)
	}
	pid := livePID(t)
	now := e.stamp()
	if !e.claimLive(&loop.Claim{Op: "start", PID: pid, PIDStart: 12345, Since: now}) {
		t.Fatal("a running pid's claim is not live")
	}
	old := time.Now().Add(-time.Hour).UTC().Format(loop.RecordTimeFormat)
	if e.claimLive(&loop.Claim{Op: "start", PID: pid, Since: old}) {
		t.Fatal("an hour-old claim judged by its pid alone is live")
	}
	if e.claimLive(&loop.Claim{Op: "start", PID: 1 << 22, Since: now}) {
		t.Fatal("the claim of a pid that runs nothing is live")
	}
}
