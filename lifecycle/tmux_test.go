package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// TestList_UnknownLivenessIsNotRunning: when tmux does not
// answer, no row says running — not the standing list, not status (which
// then is not ok), not the work-item list or row.
func TestList_UnknownLivenessIsNotRunning(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("standing start %+v %v", res, err)
	}
	mustStart(t, s, cfg, startReq(t, octo), "started")
	w.Silent = true

	rows, err := s.ListStanding(ctx, cfg)
	if err != nil || len(rows) != 1 || rows[0].Running {
		t.Fatalf("standing rows %+v %v", rows, err)
	}
	if _, ok := s.StandingStatus(ctx, cfg); ok {
		t.Fatal("status is ok while tmux cannot say whether anything runs")
	}
	items, err := s.ListWorkItems(ctx, cfg, "")
	if err != nil || len(items) != 1 || items[0].Running {
		t.Fatalf("work-item rows %+v %v", items, err)
	}
	if row, err := s.GetWorkItem(ctx, cfg, octo); err != nil || row.Running {
		t.Fatalf("work-item row %+v %v", row, err)
	}
}

// TestControl_TmuxMissingRefusesStartsAndRecordsIt: with tmux
// missing, start and restart refuse before trying a session, naming it, and
// a tmux.not_found event records it; stop is not refused.
func TestControl_TmuxMissingRefusesStartsAndRecordsIt(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	missing := errors.New("tmux not found on PATH (looked for 'tmux') — install it: `apt-get install tmux`")
	s.TmuxAvailable = func() error { return missing }
	cfg := testConfig(t, "a")
	ctx := context.Background()
	for _, verb := range []string{"start", "restart"} {
		_, err := s.ControlStanding(ctx, cfg, "a", verb, false)
		if loop.ErrorCode(err) != loop.EINTERNAL || !errors.Is(err, missing) || !strings.Contains(loop.ErrorMessage(err), "nothing was started") {
			t.Fatalf("%s: %v", verb, err)
		}
	}
	rows, ok, _ := s.StartAutoStanding(ctx, cfg)
	if ok || len(rows) != 1 || rows[0].Outcome != loop.OutcomeFailed || !strings.Contains(rows[0].Detail, "tmux not found on PATH") {
		t.Fatalf("StartAuto %+v %v", rows, ok)
	}
	if r.SpawnCount() != 0 {
		t.Fatalf("%d spawns without tmux", r.SpawnCount())
	}
	evs := events(t, s, store.EventQuery{Types: []string{"tmux.not_found"}})
	if len(evs) != 3 || evs[0].Level != loop.LevelError || evs[0].Field("verb") != "start" || evs[1].Field("verb") != "restart" {
		t.Fatalf("events %+v", evs)
	}
	if res, err := s.ControlStanding(ctx, cfg, "a", "stop", false); err != nil || !res.OK {
		t.Fatalf("stop without tmux: %+v %v", res, err)
	}
}
