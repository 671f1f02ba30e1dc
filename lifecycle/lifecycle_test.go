package lifecycle

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/store"
)

func TestStart_FreshThenAlreadyRunning(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()

	res, err := s.StartStanding(ctx, cfg, "", false)
	if err != nil || !res.OK || len(res.Sessions) != 1 {
		t.Fatalf("start: %+v %v", res, err)
	}
	row := res.Sessions[0]
	if row.Outcome != "started" || row.Status != "running" || !row.Running || !row.Declared {
		t.Fatalf("row %+v", row)
	}
	argv := r.Spawns[0].Argv
	if argv[0] != "/usr/bin/claude" || argv[1] != "--session-id" || argv[2] != row.HarnessSessionID {
		t.Fatalf("argv %q", argv[:3])
	}
	if !strings.HasPrefix(argv[len(argv)-1], "You are **supervisor**, a the-loop *standing session*.") {
		t.Fatalf("boot prompt not last: %q", argv[len(argv)-1])
	}

	res, err = s.StartStanding(ctx, cfg, "supervisor", false)
	if err != nil || res.Sessions[0].Outcome != "already-running" || r.SpawnCount() != 1 {
		t.Fatalf("second start: %+v %v (spawns %d)", res, err, r.SpawnCount())
	}
	if got := eventNames(events(t, s, store.EventQuery{})); !slices.Equal(got, []string{"standing.started"}) {
		t.Fatalf("events %v", got)
	}
}

func TestStop_KeepsRecordAndResumes(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	first, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	id := first.Sessions[0].HarnessSessionID

	res, err := s.StopStanding(ctx, cfg, "")
	if err != nil || !res.OK || res.Sessions[0].Outcome != "stopped" || res.Sessions[0].Status != "stopped" {
		t.Fatalf("stop: %+v %v", res, err)
	}
	if res.Sessions[0].HarnessSessionID != id {
		t.Fatalf("stop lost the conversation id")
	}
	again, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	row := again.Sessions[0]
	if row.Outcome != "resumed" || row.HarnessSessionID != id {
		t.Fatalf("restart row %+v", row)
	}
	if a := r.Spawns[1].Argv; a[1] != "--resume" || a[2] != id {
		t.Fatalf("resume argv %q", a[:3])
	}
}

func TestStart_ResumeThatDiesFallsBackFresh(t *testing.T) {
	r, cfg := newFakeRunner(), testConfig(t, "supervisor")
	s, old := startedThenStopped(t, r, cfg)
	ctx := context.Background()
	r.OnSpawn = func(spec loop.SpawnSpec) loop.PaneState {
		if spec.Argv[1] == "--resume" {
			return loop.PaneDead
		}
		return loop.PaneLive
	}
	res, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	row := res.Sessions[0]
	if row.Outcome != "started" || row.HarnessSessionID == old || row.HarnessSessionID == "" {
		t.Fatalf("fallback row %+v", row)
	}
	got := eventNames(events(t, s, store.EventQuery{}))
	want := []string{"standing.started", "standing.stopped", "standing.resume_failed", "standing.started"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestStart_RefusesLiveSessionWithoutRecord(t *testing.T) {
	r := newFakeRunner()
	r.Panes["loop-standing-supervisor"] = loop.PaneLive
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	res, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	row := res.Sessions[0]
	if res.OK || row.Outcome != "failed" || !strings.Contains(row.Detail, "tmux attach -r -t loop-standing-supervisor") {
		t.Fatalf("row %+v", row)
	}
	rec, _ := s.read("supervisor")
	if rec != nil || r.SpawnCount() != 0 {
		t.Fatalf("refusal wrote a record (%v) or spawned (%d)", rec, r.SpawnCount())
	}
	stop, _ := s.StopStanding(ctx, cfg, "supervisor")
	if stop.Sessions[0].Outcome != "not-running" || len(r.Killed) != 0 {
		t.Fatalf("stop touched the occupant: %+v killed=%v", stop.Sessions[0], r.Killed)
	}
	if got := eventNames(events(t, s, store.EventQuery{})); !slices.Equal(got, []string{"standing.spawn_failed"}) {
		t.Fatalf("events %v", got)
	}
}

func TestStart_TmuxSilentSpawnsNothing(t *testing.T) {
	r := newFakeRunner()
	r.Silent = true
	s := newTestService(t, r)
	res, _ := s.StartStanding(context.Background(), testConfig(t, "a"), "a", false)
	if res.OK || !strings.Contains(res.Sessions[0].Detail, "tmux did not answer") || r.SpawnCount() != 0 {
		t.Fatalf("%+v spawns=%d", res, r.SpawnCount())
	}
}

func TestStart_BadCwdFailsOnlyThatSession(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "good", "bad")
	cfg.Standing.Sessions[1].Cwd = "/nonexistent/dir"
	res, _ := s.StartStanding(context.Background(), cfg, "", false)
	byName := map[string]loop.StandingRow{}
	for _, r := range res.Sessions {
		byName[r.Name] = r
	}
	if res.OK || byName["good"].Outcome != "started" || byName["bad"].Outcome != "failed" ||
		!strings.Contains(byName["bad"].Detail, "/nonexistent/dir") {
		t.Fatalf("%+v", res.Sessions)
	}
	if rec, _ := s.read("bad"); rec != nil {
		t.Fatalf("a failed first start left a record: %+v", rec)
	}
	evs := events(t, s, store.EventQuery{Types: []string{"standing.spawn_failed"}})
	if len(evs) != 1 || evs[0].Field("standing") != "bad" {
		t.Fatalf("events %+v", evs)
	}
}

func TestStart_ConcurrentStartsSpawnOnce(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	var wg sync.WaitGroup
	outcomes := make([]string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.StartStanding(context.Background(), cfg, "supervisor", false)
			if err != nil {
				t.Error(err)
				return
			}
			outcomes[i] = res.Sessions[0].Outcome
		}()
	}
	wg.Wait()
	slices.Sort(outcomes)
	want := []string{"already-running", "already-running", "already-running", "already-running", "already-running", "already-running", "already-running", "started"}
	if !slices.Equal(outcomes, want) || r.SpawnCount() != 1 {
		t.Fatalf("outcomes %v spawns %d", outcomes, r.SpawnCount())
	}
}

func TestStart_StaleClaimWithLivePaneIsRecovered(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	// A start that died after spawning: its claim names a pid that is gone.
	staleStartClaim(t, s, "supervisor", "abc")
	r.Panes["loop-standing-supervisor"] = loop.PaneLive
	r.Tags["loop-standing-supervisor"] = "abc" // the spawn that died had tagged it
	res, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	row := res.Sessions[0]
	if row.Outcome != "already-running" || row.HarnessSessionID != "abc" || r.SpawnCount() != 0 {
		t.Fatalf("row %+v spawns %d", row, r.SpawnCount())
	}
	list, _ := s.ListStanding(ctx, cfg)
	if len(list) != 1 || list[0].Status != "running" || !list[0].Running {
		t.Fatalf("list %+v", list)
	}
}

func TestStart_StaleClaimWithoutPaneStartsOnce(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	staleStartClaim(t, s, "supervisor", "abc")
	res, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	if res.Sessions[0].Outcome != "started" || r.SpawnCount() != 1 {
		t.Fatalf("%+v spawns %d", res.Sessions[0], r.SpawnCount())
	}
}

// TestTransition_FaultLeavesNeitherStateNorEvent injects a failure after the
// record is written inside the transaction.
func TestTransition_FaultLeavesNeitherStateNorEvent(t *testing.T) {
	s := newTestService(t, newFakeRunner())
	ctx := context.Background()
	injected := errors.New("injected fault")
	_, err := s.transitionWith(ctx, "x", engine.EvCreate, func(r *loop.StandingRecord) error {
		r.Harness = "claude"
		return nil
	}, func(tx *store.Tx) error {
		if rec, err := tx.Standing("x"); err != nil || rec == nil {
			t.Errorf("the record should be written before the fault: %v %v", rec, err)
		}
		return injected
	}, s.event("standing.created", loop.LevelInfo, loop.F("standing", "x")))
	if !errors.Is(err, injected) {
		t.Fatalf("err %v", err)
	}
	if rec, _ := s.read("x"); rec != nil {
		t.Fatalf("record survived the fault: %+v", rec)
	}
	if evs := events(t, s, store.EventQuery{}); len(evs) != 0 {
		t.Fatalf("events survived the fault: %v", eventNames(evs))
	}
}

func TestTransition_RefusedEventWritesNothing(t *testing.T) {
	s := newTestService(t, newFakeRunner())
	_, err := s.transition(context.Background(), "x", engine.EvSay, nil, s.event("standing.said", loop.LevelInfo))
	if !errors.Is(err, engine.ErrTransition) {
		t.Fatalf("err %v", err)
	}
	if evs := events(t, s, store.EventQuery{}); len(evs) != 0 {
		t.Fatalf("events %v", eventNames(evs))
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}

func TestStart_StaleClaimOverAnUntaggedPaneIsNotAdopted(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	staleStartClaim(t, s, "supervisor", "abc")
	// The start died before the harness ran: the pane holds a placeholder.
	r.Panes["loop-standing-supervisor"] = loop.PaneLive
	res, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	if row := res.Sessions[0]; row.Outcome != "failed" || !strings.Contains(row.Detail, "no record of it") || r.SpawnCount() != 0 {
		t.Fatalf("row %+v spawns %d", row, r.SpawnCount())
	}
	if rec, _ := s.read("supervisor"); rec != nil {
		t.Fatalf("record %+v", rec)
	}
}

func TestStartAndStop_NeverTouchASessionTheRecordDoesNotOwn(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	if _, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StopStanding(ctx, cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	// Someone else's agent now holds the name on the same server.
	killed := len(r.Killed)
	r.Panes["loop-standing-supervisor"] = loop.PaneLive
	r.Tags["loop-standing-supervisor"] = "someone-else"
	res, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	if row := res.Sessions[0]; row.Outcome != "failed" || !strings.Contains(row.Detail, "not the agent the-loop started") {
		t.Fatalf("start over a foreign session: %+v", row)
	}
	stop, _ := s.StopStanding(ctx, cfg, "")
	if row := stop.Sessions[0]; row.Outcome != "not-running" || len(r.Killed) != killed {
		t.Fatalf("stop signalled a foreign session: %+v killed %v", row, r.Killed)
	}
	if _, err := s.SayStanding(ctx, cfg, "supervisor", "hello", "ops"); loop.ErrorCode(err) != loop.ENOTFOUND || len(r.Delivered) != 0 {
		t.Fatalf("say into a foreign session: %v delivered %q", err, r.Delivered)
	}
}

// staleStartClaim records a start claim on name for conversation id, held
// by a process that has exited: a start that died mid-way.
func staleStartClaim(t *testing.T, s *Service, name, id string) {
	t.Helper()
	if _, err := s.transition(context.Background(), name, engine.EvClaimStart, func(rec *loop.StandingRecord) error {
		rec.Claim = &loop.Claim{Op: "start", PID: deadPID(t), Since: s.stamp(), HarnessSessionID: id}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// usurp makes every resume spawn lose its tmux name: a session the-loop
// did not start takes it first (untagged), and the spawn fails.
func usurp(r *fakeRunner, target string) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	r.BeforeSpawn = func(t string, spec loop.SpawnSpec) error {
		if t != target || spec.Argv[1] != "--resume" {
			return nil
		}
		r.Panes[t], r.Tags[t] = loop.PaneLive, ""
		return errors.New("duplicate session: " + t)
	}
}

func TestStart_ResumeSpawnFailureKeepsTheConversationAndTheForeignSession(t *testing.T) {
	r, cfg := newFakeRunner(), testConfig(t, "supervisor")
	s, id := startedThenStopped(t, r, cfg)
	ctx := context.Background()
	target := loop.TmuxTargetFor("supervisor")
	usurp(r, target)
	killed := len(r.Killed)
	res, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	row := res.Sessions[0]
	if row.Outcome != loop.OutcomeFailed {
		t.Fatalf("row %+v, want failed", row)
	}
	if len(r.Killed) != killed || r.State(ctx, target) != loop.PaneLive {
		t.Fatalf("the foreign session was killed: %v", r.Killed[killed:])
	}
	if r.SpawnCount() != 1 {
		t.Fatalf("spawned %d times, want only the first start", r.SpawnCount())
	}
	rec, err := s.read("supervisor")
	if err != nil || rec == nil || rec.HarnessSessionID != id || rec.Status != loop.StatusStopped || rec.Claim != nil {
		t.Fatalf("record %+v (%v), want stopped with conversation %s", rec, err, id)
	}
	if evs := events(t, s, store.EventQuery{Types: []string{"standing.resume_failed"}}); len(evs) != 0 {
		t.Fatalf("a resume that never ran was recorded as failed: %+v", evs)
	}
}

// startedThenStopped is a service whose session supervisor was started and
// stopped, and the conversation id its record keeps.
func startedThenStopped(t *testing.T, r *fakeRunner, cfg *config.Config) (*Service, string) {
	t.Helper()
	s := newTestService(t, r)
	ctx := context.Background()
	first, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	if _, err := s.StopStanding(ctx, cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	return s, first.Sessions[0].HarnessSessionID
}

// usurpedAfterSpawn is the fake tmux where, once armed, the next state
// query finds the resumed pane dead and a session the-loop did not start
// (untagged, live) in its place.
type usurpedAfterSpawn struct {
	*fakeRunner
	armed atomic.Bool
}

func (u *usurpedAfterSpawn) State(ctx context.Context, target string) loop.PaneState {
	if u.armed.CompareAndSwap(true, false) {
		u.Mu.Lock()
		u.Panes[target], u.Tags[target] = loop.PaneLive, ""
		u.Mu.Unlock()
		return loop.PaneDead
	}
	return u.fakeRunner.State(ctx, target)
}

// States is the batched query the resume probe polls with (probes.go):
// armed, it finds the same.
func (u *usurpedAfterSpawn) States(ctx context.Context, targets []string) map[string]loop.PaneState {
	out := map[string]loop.PaneState{}
	for _, t := range targets {
		out[t] = u.State(ctx, t)
	}
	return out
}

func TestStart_ResumeThatDiesNeverKillsWhatTookItsName(t *testing.T) {
	r, cfg := newFakeRunner(), testConfig(t, "supervisor")
	s, id := startedThenStopped(t, r, cfg)
	ctx := context.Background()
	u := &usurpedAfterSpawn{fakeRunner: r}
	s.Runner = func(string) loop.Runner { return u }
	r.BeforeSpawn = func(_ string, spec loop.SpawnSpec) error {
		u.armed.Store(spec.Argv[1] == "--resume")
		return nil
	}
	killed := len(r.Killed)
	res, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	if row := res.Sessions[0]; row.Outcome != loop.OutcomeFailed || !strings.Contains(row.Detail, "not touching it") {
		t.Fatalf("row %+v, want failed, leaving the session alone", row)
	}
	target := loop.TmuxTargetFor("supervisor")
	if len(r.Killed) != killed || r.State(ctx, target) != loop.PaneLive || r.SpawnCount() != 2 {
		t.Fatalf("killed %v, %d spawns: the session under the name was touched", r.Killed[killed:], r.SpawnCount())
	}
	if rec, err := s.read("supervisor"); err != nil || rec.HarnessSessionID != id || rec.Status != loop.StatusStopped {
		t.Fatalf("record %+v (%v), want stopped with conversation %s", rec, err, id)
	}
}

// TestStart_AMissingHarnessBinaryIsNamed: a harness binary LookPath cannot
// find fails the start before any spawn, with the one message that names
// the binary, the adapter and the remedy.
func TestStart_AMissingHarnessBinaryIsNamed(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	s.LookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	res, err := s.StartStanding(context.Background(), testConfig(t, "supervisor"), "supervisor", false)
	if err != nil {
		t.Fatal(err)
	}
	// The remedies: install it on the PATH searched, or
	// name the binary in routing.harnessBinaries.
	for _, want := range []string{"harness CLI 'claude' not found on PATH", "install it there", "set routing.harnessBinaries.claude to its absolute path"} {
		if row := res.Sessions[0]; res.OK || row.Outcome != loop.OutcomeFailed || !strings.Contains(row.Detail, want) || r.SpawnCount() != 0 {
			t.Fatalf("row %+v (spawns %d), want a failure naming %q", row, r.SpawnCount(), want)
		}
	}
}
