package hearing

import (
	"context"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// A process below a standing session's pane is that session's agent —
// found by its pane on a tmux server seen before, one record read — and
// only while the record says the session runs: a pane left after its stop
// is nobody's, and a process in no pane is no agent.
func TestAgentOfProcess_APaneIsItsRunningSessionsAgent(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "alpha", "beta")
	cfg.StateRoot = t.TempDir()
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "", false); err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	r.Mu.Lock()
	r.Pids = map[string][]int{"loop-standing-alpha": {4001}, "loop-standing-beta": {4002}}
	r.Mu.Unlock()
	h := hearer(s)
	for _, c := range []struct {
		chain []int
		want  string
	}{
		{[]int{9000, 4001, 1}, "alpha"}, // the first look learns the tmux server
		{[]int{9001, 4002, 1}, "beta"},
		{[]int{9002, 1}, ""},
	} {
		id, ok := h.AgentOfProcess(ctx, c.chain)
		if ok != (c.want != "") || id.Standing != c.want {
			t.Fatalf("AgentOfProcess(%v) = %+v, %v; want %q", c.chain, id, ok, c.want)
		}
	}
	if res, err := s.StopStanding(ctx, cfg, "beta"); err != nil || !res.OK {
		t.Fatalf("stop: %+v %v", res, err)
	}
	r.Mu.Lock()
	r.Panes["loop-standing-beta"] = loop.PaneLive // a pane under the name outlived the stop
	r.Mu.Unlock()
	if id, ok := h.AgentOfProcess(ctx, []int{9001, 4002, 1}); ok {
		t.Fatalf("a stopped session's leftover pane is %+v's agent", id)
	}
}
