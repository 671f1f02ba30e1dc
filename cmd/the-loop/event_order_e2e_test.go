package main

import (
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// sessionEvents is the supervisor session's events at info and above,
// oldest first.
func (e *env) sessionEvents() []loop.Event {
	e.t.Helper()
	return e.events("--standing", "supervisor", "--level", "info")
}

func TestEvents_AnOperatorsStopRecordsNoExit(t *testing.T) {
	e := hookEnv(t, oneSession)
	e.must(0, "standing", "start", "supervisor")
	e.settle()
	e.must(0, "standing", "stop", "supervisor")
	evs := e.sessionEvents()
	names := eventNames(evs)
	if !slices.Contains(names, "standing.stopped") {
		t.Fatalf("no standing.stopped: %q", names)
	}
	// The fake agent fires SessionEnd (reason other) on the stop's SIGTERM,
	// as Claude Code does: that is the stop, not an exit of its own.
	if slices.Contains(names, "standing.exited") {
		t.Fatalf("an operator's stop logged standing.exited: %q", names)
	}
	if a := e.supervisor().Activity; a != loop.ActivityExited {
		t.Fatalf("after the stop the activity is %q, want exited", a)
	}
}

func TestEvents_ResumedPrecedesTheResumedTurn(t *testing.T) {
	e := hookEnv(t, oneSession)
	e.must(0, "standing", "start", "supervisor")
	e.settle()
	e.must(0, "standing", "stop", "supervisor")
	if r := e.must(0, "standing", "start", "supervisor"); !strings.Contains(r.stdout, loop.OutcomeResumed) {
		t.Fatalf("the second start did not resume:\n%s", r)
	}
	e.settle()
	evs := e.sessionEvents()
	stopped := slices.IndexFunc(evs, func(ev loop.Event) bool { return ev.Event == "standing.stopped" })
	if stopped < 0 {
		t.Fatalf("no standing.stopped: %q", eventNames(evs))
	}
	after := evs[stopped+1:]
	resumed := slices.IndexFunc(after, func(ev loop.Event) bool { return ev.Event == "standing.resumed" })
	turn := slices.IndexFunc(after, func(ev loop.Event) bool { return ev.Event == "standing.turn_started" })
	if resumed < 0 || turn < 0 {
		t.Fatalf("after the stop: %q", eventNames(after))
	}
	if turn < resumed {
		t.Fatalf("the resumed turn's events precede standing.resumed: %q", eventNames(after))
	}
}
