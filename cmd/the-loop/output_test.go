package main

import (
	"bytes"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// TestRenderStop_PrintsInTheOrderItActs: stop stops the sessions, then the
// service, and prints them in that order.
func TestRenderStop_PrintsInTheOrderItActs(t *testing.T) {
	rep := loop.Report{
		Services:         []loop.ServiceRow{{Service: "service", Enabled: true, Outcome: "stopped", Detail: "pid 7"}},
		StandingSessions: []loop.StandingRow{{Name: "one", Outcome: loop.OutcomeStopped}},
	}
	var out, errb bytes.Buffer
	renderStop(&out, &errb, rep)
	sessions, service := strings.Index(out.String(), "standing sessions:\none"), strings.Index(out.String(), "service  stopped")
	if sessions < 0 || service < 0 || sessions > service {
		t.Fatalf("stop's report:\n%s", out.String())
	}
}
