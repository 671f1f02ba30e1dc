package engine

import (
	"context"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// TestWorkItemMachine_EveryStateEventPair checks all 6×12 (state, event)
// pairs against a table written out by hand: "-" marks an invalid pair. It
// is not read back from the machine's definition.
func TestWorkItemMachine_EveryStateEventPair(t *testing.T) {
	events := []string{
		"claim-start", "refuse", "already-running", "clear-dead", "resume-failed", "started",
		"resumed", "recover", "spawn-failed", "abandon", "reply", "close",
	}
	expected := map[string][]string{
		"absent": {
			"first-start", "absent", "-", "-", "-", "-",
			"-", "-", "-", "-", "-", "-",
		},
		"first-start": {
			"-", "-", "-", "first-start", "-", "active",
			"-", "active", "absent", "absent", "-", "-",
		},
		"active": {
			"respawning", "-", "active", "-", "-", "-",
			"-", "-", "-", "-", "active", "closed",
		},
		"closed": {
			"reopening", "-", "active", "-", "-", "-",
			"-", "-", "-", "-", "-", "-",
		},
		"reopening": {
			"-", "-", "-", "reopening", "reopening", "active",
			"active", "active", "closed", "closed", "-", "-",
		},
		"respawning": {
			"-", "-", "-", "respawning", "respawning", "active",
			"active", "active", "active", "active", "-", "-",
		},
	}
	checkMachine(t, NextWorkItem, events, expected, 72)
}

// A reply never spawns: from absent and closed, the only way to active is a
// start (claim-start, then started/resumed/recover) or a live pane found by
// a start (already-running).
func TestWorkItemMachine_ReplyNeverLeavesAbsentOrClosed(t *testing.T) {
	ctx := context.Background()
	for _, st := range []string{"absent", "closed", "first-start", "reopening", "respawning"} {
		if got, err := NextWorkItem(ctx, st, "reply"); err == nil {
			t.Errorf("reply in %s moved to %s", st, got)
		}
	}
}

func TestWorkItemStateOf_DerivesClaimStates(t *testing.T) {
	claim := &loop.Claim{Op: "start", PID: 1}
	cases := []struct {
		name string
		rec  *loop.WorkItemRecord
		want string
	}{
		{"no record", nil, "absent"},
		{"active", &loop.WorkItemRecord{Status: "active"}, "active"},
		{"closed", &loop.WorkItemRecord{Status: "closed"}, "closed"},
		{"paused (the original's) reads closed", &loop.WorkItemRecord{Status: "paused"}, "closed"},
		{"start claim on a placeholder", &loop.WorkItemRecord{Claim: claim}, "first-start"},
		{"start claim on a closed record", &loop.WorkItemRecord{Status: "closed", Claim: claim}, "reopening"},
		{"start claim on an active record", &loop.WorkItemRecord{Status: "active", Claim: claim}, "respawning"},
	}
	for _, c := range cases {
		if got := WorkItemStateOf(c.rec); got != c.want {
			t.Errorf("%s: WorkItemStateOf = %q, want %q", c.name, got, c.want)
		}
	}
}
