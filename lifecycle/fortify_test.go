package lifecycle

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/store"
)

// liveProc starts a process that outlives the test's verbs and returns its
// pid and start time.
func liveProc(t *testing.T) (int, uint64) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	start, ok := runner.ProcessStart(cmd.Process.Pid)
	if !ok {
		t.Fatalf("no start time for pid %d", cmd.Process.Pid)
	}
	return cmd.Process.Pid, start
}

// putClaims stores a start claim c on standing session "supervisor" and on
// the work item octo.
func putClaims(t *testing.T, s *Service, c loop.Claim) {
	t.Helper()
	ref, _ := loop.ParseWorkItemRef(octo)
	if err := s.DB.Update(func(tx *store.Tx) error {
		sc, wc := c, c
		if err := tx.PutStanding(&loop.StandingRecord{Name: "supervisor", Status: loop.StatusAbsent, Rev: 1, Claim: &sc}); err != nil {
			return err
		}
		return tx.PutWorkItem(ref.Slug(), &loop.WorkItemRecord{WorkItem: loop.WorkItemInfo{Ref: octo}, Claim: &wc})
	}); err != nil {
		t.Fatal(err)
	}
}

// A claim whose pid now belongs to another process (another
// start time: a pid reused after a reboot) is stale, for both kinds.
func TestClaim_ReusedPidIsStale(t *testing.T) {
	s, w := newItemService(t)
	s.ClaimWait = 300 * time.Millisecond
	cfg := testConfig(t, "supervisor")
	pid, start := liveProc(t)
	putClaims(t, s, loop.Claim{Op: "start", PID: pid, PIDStart: start + 1, Since: s.stamp(), HarnessSessionID: "x"})
	res, err := s.StartStanding(context.Background(), cfg, "supervisor", false)
	if err != nil || res.Sessions[0].Outcome != loop.OutcomeStarted {
		t.Fatalf("standing start over a reused pid's claim: %+v %v", res, err)
	}
	mustStart(t, s, cfg, startReq(t, octo), "started")
	if w.SpawnCount() != 2 {
		t.Fatalf("spawns %d", w.SpawnCount())
	}
}

// A claim of a process that still runs stays live however old
// it is — no clock adopts it (a double spawn) — for both kinds.
func TestClaim_OldClaimOfARunningProcessIsLive(t *testing.T) {
	s, w := newItemService(t)
	s.ClaimWait = 300 * time.Millisecond
	cfg := testConfig(t, "supervisor")
	pid, start := liveProc(t)
	old := time.Now().Add(-time.Hour).UTC().Format(loop.RecordTimeFormat)
	putClaims(t, s, loop.Claim{Op: "start", PID: pid, PIDStart: start, Since: old, HarnessSessionID: "x"})
	res, err := s.StartStanding(context.Background(), cfg, "supervisor", false)
	if err != nil || res.Sessions[0].Outcome != loop.OutcomeFailed || !strings.Contains(res.Sessions[0].Detail, "in flight") {
		t.Fatalf("standing start over a live claim: %+v %v", res, err)
	}
	wres, err := s.StartWorkItem(context.Background(), cfg, startReq(t, octo))
	if err != nil || wres.Outcome != loop.OutcomeFailed {
		t.Fatalf("work item start over a live claim: %+v %v", wres, err)
	}
	if w.SpawnCount() != 0 {
		t.Fatalf("spawns %d: a live claim was adopted", w.SpawnCount())
	}
	// The claims this process makes carry its start time.
	s2, _ := newItemService(t)
	if _, err := s2.StartStanding(context.Background(), cfg, "supervisor", false); err != nil {
		t.Fatal(err)
	}
	c := s2.engine().NewClaim("stop")
	if self, ok := runner.ProcessStart(c.PID); !ok || c.PIDStart != self {
		t.Fatalf("claim %+v, own start %d", c, self)
	}
}

// notReady is a harness whose prompt never comes up; looked, when set, is
// closed on the first look.
type notReady struct {
	fakeHarness
	looked chan struct{}
	once   *sync.Once
}

func (h notReady) Ready(loop.PaneSnapshot) bool {
	if h.looked != nil {
		h.once.Do(func() { close(h.looked) })
	}
	return false
}

// once a stop has claimed the session (its SIGTERM grace, the
// agent flushing), a say is refused as not running and nothing is pasted.
func TestSay_RefusedOnceAStopHasClaimed(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	pid, start := liveProc(t) // the stopping process, in its grace
	if _, err := s.transition(ctx, "supervisor", engine.EvClaimStop, func(r *loop.StandingRecord) error {
		r.Claim = &loop.Claim{Op: "stop", PID: pid, PIDStart: start, Since: s.stamp()}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err := s.SayStanding(ctx, cfg, "supervisor", "hello", "ops")
	if loop.ErrorCode(err) != loop.ENOTFOUND || !strings.Contains(loop.ErrorMessage(err), "not running") || len(r.Delivered) != 0 {
		t.Fatalf("say during a stop: %+v %v delivered %q", res, err, r.Delivered)
	}
}

// A say waiting for a starting agent's prompt ends, refused, at a stop's
// claim, not after the whole readySeconds.
func TestSay_WaitEndsWhenAStopClaims(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	s.Harness = func(string, string) (loop.Harness, error) { return notReady{}, nil }
	cfg := testConfig(t, "supervisor")
	cfg.Routing.Tmux.ReadySeconds = 30
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	looked := make(chan struct{}) // closed once the say has looked for the prompt
	s.Harness = func(string, string) (loop.Harness, error) { return notReady{looked: looked, once: new(sync.Once)}, nil }
	type said struct {
		res loop.SayResult
		err error
	}
	done := make(chan said, 1)
	go func() {
		res, err := s.SayStanding(ctx, cfg, "supervisor", "hello", "ops")
		done <- said{res, err}
	}()
	// The say is waiting for the prompt; a stop claims and removes the session.
	<-looked
	if res, err := s.StopStanding(ctx, cfg, "supervisor"); err != nil || !res.OK {
		t.Fatalf("stop %+v %v", res, err)
	}
	// Ended by the claim, not by its 30 s wait for the prompt: a wait that
	// runs out is a result that was not delivered, with no error; the
	// claim's end is the error ENOTFOUND.
	got := testkit.Await(t, done, "the say still waits after the stop")
	if loop.ErrorCode(got.err) != loop.ENOTFOUND || len(r.Delivered) != 0 {
		t.Fatalf("say after a stop: %+v %v delivered %q", got.res, got.err, r.Delivered)
	}
}

// A start over a dead agent pane never kills the tmux session
// (the runner respawns into the dead pane): not for a standing session, not
// for a work item.
func TestStart_DeadPaneIsNotClearedByKillingTheSession(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	mustStart(t, s, cfg, startReq(t, octo), "started")
	w.Mu.Lock()
	w.Panes["loop-standing-supervisor"], w.Panes[octoTarget] = loop.PaneDead, loop.PaneDead
	w.Mu.Unlock()
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("restart over a dead pane %+v %v", res, err)
	}
	mustStart(t, s, cfg, startReq(t, octo), "resumed")
	if len(w.Killed) != 0 || w.SpawnCount() != 4 {
		t.Fatalf("killed %v, spawns %d", w.Killed, w.SpawnCount())
	}
	if got := events(t, s, store.EventQuery{Types: []string{"standing.dead_pane_cleared", "session.dead_pane_cleared"}}); len(got) != 2 {
		t.Fatalf("dead_pane_cleared events %v", eventNames(got))
	}
}

// screenRunner is the fake tmux whose panes show screen.
type screenRunner struct {
	*fakeRunner
	screen string
}

func (r *screenRunner) Snapshot(context.Context, string) (loop.PaneSnapshot, error) {
	return loop.PaneSnapshot{Screen: r.screen, Dead: true}, nil
}

// A resume that fails its probe and falls back to a fresh
// conversation says so in the row, with the pane's last line.
func TestStart_ResumeFallbackSaysWhy(t *testing.T) {
	r, cfg := newFakeRunner(), testConfig(t, "supervisor")
	s, old := startedThenStopped(t, r, cfg)
	sr := &screenRunner{fakeRunner: r, screen: "booting\nNo conversation found with session ID: " + old + "\n\nPane is dead (status 1, Tue Dec  1 10:00:00 2026)\n\n"}
	s.Runner = func(string) loop.Runner { return sr }
	r.OnSpawn = func(spec loop.SpawnSpec) loop.PaneState {
		if spec.Argv[1] == "--resume" {
			return loop.PaneDead
		}
		return loop.PaneLive
	}
	res, _ := s.StartStanding(context.Background(), cfg, "supervisor", false)
	row := res.Sessions[0]
	want := "resume of " + old + " failed (No conversation found with session ID: " + old + "); started fresh as " + row.HarnessSessionID
	if row.Outcome != "started" || row.Detail != want {
		t.Fatalf("fallback row %+v\nwant detail %q", row, want)
	}
}

// A start interrupted (Ctrl-C) once its agent is spawned and
// tagged records what exists — a running agent — not a failure; a resume
// interrupted during its probe is not taken for one that died.
func TestStart_InterruptedAfterTheSpawnRecordsTheRunningAgent(t *testing.T) {
	r, cfg := newFakeRunner(), testConfig(t, "supervisor")
	s := newTestService(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The tmux server ran the spawn (tagged), but the client was killed by
	// the interrupt: the spawn reports an error.
	r.BeforeSpawn = func(target string, spec loop.SpawnSpec) error {
		cancel()
		r.Panes[target], r.Tags[target] = loop.PaneLive, spec.Tag
		return ctx.Err()
	}
	res, err := s.StartStanding(ctx, cfg, "supervisor", false)
	if err != nil || res.Sessions[0].Outcome != loop.OutcomeStarted || res.Sessions[0].Status != "running" {
		t.Fatalf("interrupted start %+v %v", res, err)
	}
	id := res.Sessions[0].HarnessSessionID

	// Interrupted during the resume probe of a later start.
	bg := context.Background()
	if _, err := s.StopStanding(bg, cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	killed := len(r.Killed)
	cfg.Routing.Tmux.ResumeProbeSeconds = 5
	ctx2, cancel2 := context.WithCancel(bg)
	defer cancel2()
	r.BeforeSpawn = nil
	r.OnSpawn = func(loop.SpawnSpec) loop.PaneState { cancel2(); return loop.PaneLive }
	res, err = s.StartStanding(ctx2, cfg, "supervisor", false)
	if err != nil || res.Sessions[0].Outcome != loop.OutcomeResumed || r.SpawnCount() != 1 || res.Sessions[0].HarnessSessionID != id || len(r.Killed) != killed {
		t.Fatalf("interrupted resume %+v %v, killed %v", res, err, r.Killed)
	}
	rec, _ := s.read("supervisor")
	if rec.Status != loop.StatusRunning || rec.Claim != nil {
		t.Fatalf("record %+v", rec)
	}
}

// An undecodable record is a broken row naming its key; list,
// status and stop-all go on with the others.
func TestBrokenRecord_ListAndStopAllGoOn(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	mustStart(t, s, cfg, startReq(t, octo), "started")
	if err := s.DB.Update(func(tx *store.Tx) error {
		if err := tx.PutRaw("standing", "mangled", []byte(`{"name":`)); err != nil {
			return err
		}
		return tx.PutRaw("sessions", "github-x-y-1", []byte(`[]`))
	}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.ListStanding(ctx, cfg)
	if err != nil || len(rows) != 2 || rows[0].Name != "mangled" || rows[0].Status != loop.StatusBroken ||
		!strings.Contains(rows[0].Detail, "'mangled'") || rows[1].Status != loop.StatusRunning {
		t.Fatalf("list %+v %v", rows, err)
	}
	items, err := s.ListWorkItems(ctx, cfg, "")
	if err != nil || len(items) != 2 || items[1].Status != loop.SessionBroken || !strings.Contains(items[1].Detail, "'github-x-y-1'") {
		t.Fatalf("work items %+v %v", items, err)
	}
	if _, ok := s.StandingStatus(ctx, cfg); ok {
		t.Fatal("status is ok with a broken record")
	}
	res, err := s.StopStanding(ctx, cfg, "")
	if err != nil || len(res.Sessions) != 2 || res.OK {
		t.Fatalf("stop-all %+v %v", res, err)
	}
	if res.Sessions[0].Outcome != loop.OutcomeFailed || !strings.Contains(res.Sessions[0].Detail, "'mangled'") ||
		res.Sessions[1].Outcome != loop.OutcomeStopped {
		t.Fatalf("stop-all rows %+v", res.Sessions)
	}
	_ = w
}

// on a store opened read-only (a newer the-loop wrote it),
// stop ends the agents it can decode and writes nothing.
func TestStop_ReadOnlyStoreStopsAndWritesNothing(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	if err := s.DB.Update(func(tx *store.Tx) error { return tx.SetSchemaVersion(store.SchemaVersion() + 1) }); err != nil {
		t.Fatal(err)
	}
	ro, err := store.OpenReadOnly(s.DB.Path(), store.Options{})
	if err != nil || ro.Newer() == nil {
		t.Fatalf("read-only open: %v (newer %v)", err, ro.Newer())
	}
	before := len(events(t, s, store.EventQuery{}))
	s.DB = ro
	res, err := s.StopStanding(ctx, cfg, "")
	if err != nil || !res.OK || res.Sessions[0].Outcome != loop.OutcomeStopped || r.State(ctx, "loop-standing-supervisor") != loop.PaneAbsent {
		t.Fatalf("stop %+v %v", res, err)
	}
	rec, _ := s.read("supervisor")
	if rec.Status != loop.StatusRunning || rec.Claim != nil || len(events(t, s, store.EventQuery{})) != before {
		t.Fatalf("the read-only store was written: %+v", rec)
	}
}

// The agent's environment is the spawning process's (minus
// secrets) with routing.harnessEnv and then the entry's env over it;
// routing.harnessBinaries names the binary; the not-found refusal says
// whose PATH was searched.
func TestSpawn_ExplicitEnvironmentAndBinary(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	t.Setenv("F2_FROM_PROCESS", "process")
	t.Setenv("F2_OVERRIDDEN", "process")
	cfg.Routing.HarnessEnv = map[string]string{"F2_OVERRIDDEN": "routing", "F2_ROUTING": "routing", credential.AgentTokenEnv: "forged"}
	cfg.Standing.Sessions[0].Env = map[string]string{"F2_OVERRIDDEN": "entry"}
	bin := filepath.Join(t.TempDir(), "my-claude")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Routing.HarnessBinaries = map[string]string{"claude": bin}
	s.LookPath = func(string) (string, error) { return "", errors.New("not on PATH") }
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	spec := r.Spawns[0]
	env := map[string]string{}
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := env[k]; dup {
			t.Fatalf("%s twice in %q", k, spec.Env)
		}
		env[k] = v
	}
	if env["F2_FROM_PROCESS"] != "process" || env["F2_ROUTING"] != "routing" || env["F2_OVERRIDDEN"] != "entry" ||
		env[credential.AgentTokenEnv] == "forged" || env[credential.AgentTokenEnv] == "" || spec.Argv[0] != bin {
		t.Fatalf("argv %q env %v", spec.Argv, env)
	}

	cfg.Routing.HarnessBinaries = nil
	s.Source = "service"
	if _, err := s.StopStanding(ctx, cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	res, _ := s.StartStanding(ctx, cfg, "supervisor", false)
	if d := res.Sessions[0].Detail; res.OK || !strings.Contains(d, "not found on PATH") || !strings.Contains(d, "the-loop service's") ||
		!strings.Contains(d, "routing.harnessBinaries.claude") {
		t.Fatalf("not found: %+v", res.Sessions[0])
	}
}

// A promptFile that is a FIFO fails that start at once; it
// never blocks holding the session's claim.
func TestStart_PromptFileFIFOFailsWithoutBlocking(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	fifo := filepath.Join(t.TempDir(), "brief")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Standing.Sessions[0].PromptFile = fifo
	done := make(chan loop.StandingControlResult, 1)
	go func() {
		res, _ := s.StartStanding(context.Background(), cfg, "supervisor", false)
		done <- res
	}()
	res := testkit.Await(t, done, "the start blocks reading a FIFO promptFile")
	if res.OK || !strings.Contains(res.Sessions[0].Detail, "not a regular file") || r.SpawnCount() != 0 {
		t.Fatalf("start with a FIFO brief: %+v", res)
	}
}

// A stop ends within its bound (kill grace + 5 s) even while
// another verb of this process holds the session, reporting a failed row.
func TestStop_EndsWithinItsBoundBehindAStuckVerb(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor", "other")
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "", false); err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	unlock := s.engine().Lock("supervisor") // a verb that never finishes
	defer unlock()
	done := make(chan loop.StandingControlResult, 1)
	go func() {
		res, _ := s.StopStanding(ctx, cfg, "")
		done <- res
	}()
	// The verb holds the session for ever: a stop that returns at all gave
	// up on it by itself, and its row says so.
	res := testkit.Await(t, done, "the stop hangs behind a stuck verb (its bound is %s)", StopBound(cfg, 1))
	if res.OK || res.Sessions[0].Name != "other" || res.Sessions[0].Outcome != loop.OutcomeStopped ||
		res.Sessions[1].Outcome != loop.OutcomeFailed || !strings.Contains(res.Sessions[1].Detail, "gave up waiting") {
		t.Fatalf("stop %+v", res.Sessions)
	}
}
