package engine

import (
	"context"
	"errors"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// TestMachine_EveryStateEventPair checks all 7×22 (state, event) pairs
// against a table written out by hand: "-" marks an invalid pair. It is not
// read back from the machine's definition.
func TestMachine_EveryStateEventPair(t *testing.T) {
	events := []string{
		"create", "create-failed", "delete", "claim-start", "refuse", "already-running",
		"clear-dead", "resume-failed", "started", "resumed", "spawn-failed", "recover",
		"abandon", "claim-stop", "stopped", "stop-failed", "not-running", "say",
		"announced", "exited", "restarting", "restart-limited",
	}
	expected := map[string][]string{
		"absent": {
			"stopped", "-", "-", "first-start", "absent", "-",
			"-", "-", "-", "-", "-", "-",
			"-", "-", "-", "-", "-", "-",
			"-", "-", "-", "-",
		},
		"stopped": {
			"-", "absent", "absent", "starting", "stopped", "running",
			"-", "-", "-", "-", "-", "-",
			"-", "stopping", "-", "-", "stopped", "-",
			"-", "-", "-", "-",
		},
		"running": {
			"-", "-", "-", "starting", "running", "running",
			"-", "-", "-", "-", "-", "-",
			"-", "stopping", "-", "-", "stopped", "running",
			"running", "running", "running", "failed",
		},
		"first-start": {
			"-", "-", "-", "-", "-", "-",
			"first-start", "-", "running", "-", "absent", "running",
			"absent", "-", "-", "-", "-", "-",
			"-", "-", "-", "-",
		},
		"starting": {
			"-", "-", "-", "-", "-", "-",
			"starting", "starting", "running", "running", "stopped", "running",
			"stopped", "-", "-", "-", "-", "-",
			"-", "-", "-", "-",
		},
		"stopping": {
			"-", "-", "-", "-", "-", "-",
			"-", "-", "-", "-", "-", "-",
			"stopped", "-", "stopped", "stopped", "-", "-",
			"-", "-", "-", "-",
		},
		"failed": {
			"-", "-", "absent", "starting", "failed", "running",
			"-", "-", "-", "-", "-", "-",
			"-", "stopping", "-", "-", "stopped", "-",
			"-", "-", "-", "-",
		},
	}
	checkMachine(t, NextStanding, events, expected, 154)
}

// checkMachine fires every event of events in every state of expected (a
// table written out by hand: "-" marks a refused pair) and checks the
// destination, or the *TransitionError naming the pair — with a cancelled
// context, which must not change what a machine allows.
func checkMachine(t *testing.T, next func(context.Context, string, string) (string, error), events []string, expected map[string][]string, wantPairs int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pairs := 0
	for state, row := range expected {
		if len(row) != len(events) {
			t.Fatalf("table row %s has %d cells, want %d", state, len(row), len(events))
		}
		for i, ev := range events {
			pairs++
			got, err := next(ctx, state, ev)
			want := row[i]
			if want == "-" {
				var te *TransitionError
				if !errors.As(err, &te) || !errors.Is(err, ErrTransition) {
					t.Errorf("%s --%s--> want refused, got %q (err %v)", state, ev, got, err)
				} else if te.State != state || te.Event != ev {
					t.Errorf("%s --%s--> error names %q/%q", state, ev, te.State, te.Event)
				}
				if got != state {
					t.Errorf("%s --%s--> refused but moved to %q", state, ev, got)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s --%s--> want %s, got error %v", state, ev, want, err)
				continue
			}
			if got != want {
				t.Errorf("%s --%s--> want %s, got %s", state, ev, want, got)
			}
		}
	}
	if pairs != wantPairs {
		t.Fatalf("checked %d pairs, want %d", pairs, wantPairs)
	}
}

func TestStateOf_DerivesClaimStates(t *testing.T) {
	cases := []struct {
		name string
		rec  *loop.StandingRecord
		want string
	}{
		{"no record", nil, "absent"},
		{"stopped", &loop.StandingRecord{Status: "stopped"}, "stopped"},
		{"running", &loop.StandingRecord{Status: "running"}, "running"},
		{"start claim on a placeholder", &loop.StandingRecord{Status: "absent", Claim: &loop.Claim{Op: "start"}}, "first-start"},
		{"start claim on a stopped record", &loop.StandingRecord{Status: "stopped", Claim: &loop.Claim{Op: "start"}}, "starting"},
		{"stop claim", &loop.StandingRecord{Status: "running", Claim: &loop.Claim{Op: "stop"}}, "stopping"},
		{"failed", &loop.StandingRecord{Status: "failed"}, "failed"},
		{"start claim on a failed record", &loop.StandingRecord{Status: "failed", Claim: &loop.Claim{Op: "start"}}, "starting"},
	}
	for _, c := range cases {
		if got := StandingStateOf(c.rec); got != c.want {
			t.Errorf("%s: StateOf = %q, want %q", c.name, got, c.want)
		}
	}
}
