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
	h.ProcStart = func(pid int) (uint64, bool) { return uint64(pid), pid == 4001 || pid == 4002 } // the panes' processes live on
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

// A pane process seen in tmux's answer is placed again without asking tmux
// while it is the same process (its pid and start time); a pid with
// another start time is another process, asked about afresh — and tmux no
// longer listing it, nobody's agent.
func TestAgentOfProcess_APaneSeenBeforeNeedsNoTmuxQuery(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "alpha")
	cfg.StateRoot = t.TempDir()
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "", false); err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	r.Mu.Lock()
	r.Pids = map[string][]int{"loop-standing-alpha": {4001}}
	r.Mu.Unlock()
	h := hearer(s)
	starts := map[int]uint64{4001: 77}
	h.ProcStart = func(pid int) (uint64, bool) { st, ok := starts[pid]; return st, ok }
	if id, ok := h.AgentOfProcess(ctx, []int{9000, 4001, 1}); !ok || id.Standing != "alpha" {
		t.Fatalf("first look: %+v %v", id, ok)
	}
	r.Mu.Lock()
	r.Pids = map[string][]int{} // tmux would now list no pane
	r.Mu.Unlock()
	if id, ok := h.AgentOfProcess(ctx, []int{9001, 4001, 1}); !ok || id.Standing != "alpha" {
		t.Fatalf("the same pane process again: %+v %v, want alpha without tmux", id, ok)
	}
	starts[4001] = 78 // the pid now names another process
	if id, ok := h.AgentOfProcess(ctx, []int{9002, 4001, 1}); ok {
		t.Fatalf("a reused pid is %+v's agent", id)
	}
}
