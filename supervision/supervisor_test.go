package supervision

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/store"
)

func TestDelay_DoublesCapsAndJitterNeverShortens(t *testing.T) {
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i, w := range want {
		if got := Delay(i+1, 60*time.Second, 0); got != w*time.Second {
			t.Errorf("attempt %d: %v, want %v", i+1, got, w*time.Second)
		}
		hi := Delay(i+1, 60*time.Second, 0.999999)
		if hi < w*time.Second || hi > w*time.Second*12/10 {
			t.Errorf("attempt %d with jitter: %v, want within [%v, +20%%]", i+1, hi, w*time.Second)
		}
	}
	if got := Delay(3, 0, 0); got != 4*time.Second {
		t.Errorf("no cap: %v", got)
	}
	if got := Delay(100, 60*time.Second, -1); got != 60*time.Second {
		t.Errorf("a negative jitter shortened the delay: %v", got)
	}
}

// exitRunner is the fake tmux reporting an exit status for dead panes.
type exitRunner struct {
	*testkit.FakeTmux
	code int
}

func (r exitRunner) PaneStates(ctx context.Context, targets []string) map[string]loop.PaneInfo {
	out := map[string]loop.PaneInfo{}
	for t, st := range r.States(ctx, targets) {
		info := loop.PaneInfo{State: st}
		if st == loop.PaneDead {
			c := r.code
			info.Code = &c
		}
		out[t] = info
	}
	return out
}

// supervised is a service with one started session and its supervisor,
// driven by hand: a fake clock, no jitter, delays that end at once and
// record their length.
type supervisedFixture struct {
	t      *testing.T
	s      *lifecycle.Service
	r      *testkit.FakeTmux
	sv     *Supervisor
	cfg    *config.Config
	mu     sync.Mutex
	now    time.Time
	delays []time.Duration
}

func newSupervised(t *testing.T, code int, tweak func(cfg *config.Config)) *supervisedFixture {
	f := &supervisedFixture{t: t, r: testkit.NewFakeTmux(), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f.s = newTestService(t, f.r)
	f.s.Clock = f.clock
	f.cfg = testConfig(t, "sup")
	if tweak != nil {
		tweak(f.cfg)
	}
	f.sv = &Supervisor{
		Service: f.s,
		Config:  func() *config.Config { return f.cfg },
		Runner:  func(string) loop.Runner { return exitRunner{f.r, code} },
		Clock:   f.clock,
		Jitter:  func() float64 { return 0 },
		After: func(d time.Duration) <-chan time.Time {
			f.mu.Lock()
			f.delays = append(f.delays, d)
			f.mu.Unlock()
			ch := make(chan time.Time, 1)
			ch <- time.Time{}
			return ch
		},
	}
	f.sv.init()
	if res, err := f.s.StartStanding(context.Background(), f.cfg, "sup", false); err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	return f
}

func (f *supervisedFixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *supervisedFixture) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// die kills the agent's pane (dead, kept) and lets the supervisor look
// twice and finish what it does about it.
func (f *supervisedFixture) die() {
	f.t.Helper()
	f.r.Mu.Lock()
	f.r.Panes["loop-standing-sup"] = loop.PaneDead
	f.r.Mu.Unlock()
	ctx := context.Background()
	if !f.sv.look(ctx) {
		f.t.Fatal("the first look at a dead pane did not ask for a second")
	}
	f.sv.look(ctx)
	f.sv.work.Wait()
}

func (f *supervisedFixture) rec() *loop.StandingRecord {
	f.t.Helper()
	var rec *loop.StandingRecord
	err := f.s.DB.View(func(tx *store.Tx) error {
		var err error
		rec, err = tx.Standing("sup")
		return err
	})
	if err != nil || rec == nil {
		f.t.Fatalf("record %v %v", rec, err)
	}
	return rec
}

func (f *supervisedFixture) names(types ...string) []string {
	f.t.Helper()
	var evs []loop.Event
	if err := f.s.DB.View(func(tx *store.Tx) error {
		var err error
		evs, err = tx.Events(store.EventQuery{Types: types})
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Event)
	}
	return out
}

// newTestService wires a Service on a real bbolt file in a temp dir, its
// panes in r and a harness that builds claude-like argv and is always
// ready.
func newTestService(t *testing.T, r *testkit.FakeTmux) *lifecycle.Service {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "the-loop.db"), store.Options{Transient: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &lifecycle.Service{
		DB:       db,
		Runner:   func(string) loop.Runner { return r },
		Harness:  func(string, string) (loop.Harness, error) { return testkit.FakeHarness{}, nil },
		LookPath: func(b string) (string, error) { return "/usr/bin/" + b, nil },
		Source:   "test",
	}
}

// testConfig declares the given sessions (cwd: a temp dir) with a short probe.
func testConfig(t *testing.T, names ...string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Routing.Tmux.ResumeProbeSeconds = 0.05
	cfg.Routing.Tmux.HarnessKillGraceSeconds = 0
	cfg.Routing.Tmux.ReadySeconds = 1
	dir := t.TempDir()
	cfg.Standing = &config.StandingConfig{Enabled: true}
	for _, n := range names {
		cfg.Standing.Sessions = append(cfg.Standing.Sessions, loop.StandingDefinition{
			Name: n, Harness: "claude", Cwd: dir, AutoStart: true, Declared: true,
		})
	}
	return cfg
}

func TestSupervisor_OneDeadSightingIsNotADeath(t *testing.T) {
	f := newSupervised(t, 1, nil)
	f.r.Mu.Lock()
	f.r.Panes["loop-standing-sup"] = loop.PaneDead
	f.r.Mu.Unlock()
	f.sv.look(context.Background())
	f.r.Mu.Lock()
	f.r.Panes["loop-standing-sup"] = loop.PaneLive
	f.r.Mu.Unlock()
	f.sv.look(context.Background())
	f.sv.work.Wait()
	if got := f.names("standing.exited"); len(got) != 0 {
		t.Fatalf("one dead sighting was acted on: %v", got)
	}
	// Silence from tmux neither counts as dead nor clears a sighting.
	f.r.Mu.Lock()
	f.r.Panes["loop-standing-sup"] = loop.PaneDead
	f.r.Mu.Unlock()
	f.sv.look(context.Background())
	f.r.Mu.Lock()
	f.r.Silent = true
	f.r.Mu.Unlock()
	f.sv.look(context.Background())
	f.sv.work.Wait()
	if got := f.names("standing.exited"); len(got) != 0 {
		t.Fatalf("silence was taken for death: %v", got)
	}
}

func TestSupervisor_RestartsWithBackoffThenLimitsTheBurst(t *testing.T) {
	f := newSupervised(t, 1, func(cfg *config.Config) { cfg.Supervision.Restart.Burst = 3 })
	for i := 1; i <= 3; i++ {
		f.die()
		f.advance(time.Second) // runs briefly: under resetSeconds
		rec := f.rec()
		if rec.Status != loop.StatusRunning || rec.Restarts != i || rec.LastExit == nil || *rec.LastExit.Code != 1 {
			t.Fatalf("after death %d: %+v", i, rec)
		}
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}; fmt.Sprint(f.delays) != fmt.Sprint(want) {
		t.Fatalf("delays %v, want %v", f.delays, want)
	}
	if n := f.r.SpawnCount(); n != 4 {
		t.Fatalf("%d spawns, want the start and 3 restarts", n)
	}
	resume := f.r.Spawns[1]
	if !strings.Contains(strings.Join(resume.Argv, " "), "--resume") || !strings.Contains(strings.Join(resume.Argv, " "), "exit status 1") {
		t.Fatalf("the restart's argv %q: want a resume with the notice naming the exit", resume.Argv)
	}
	f.die()
	rec := f.rec()
	if rec.Status != loop.StatusFailed || f.r.SpawnCount() != 4 {
		t.Fatalf("after the burst: %+v, %d spawns", rec, f.r.SpawnCount())
	}
	if got := f.names("standing.restart_limited"); len(got) != 1 {
		t.Fatalf("restart_limited events %v", got)
	}
	if _, ok := f.s.StandingStatus(context.Background(), f.cfg); ok {
		t.Fatal("status is ok with a failed session")
	}
	// An operator's start clears it, and the counts start afresh.
	res, err := f.s.StartStanding(context.Background(), f.cfg, "sup", false)
	if err != nil || !res.OK || f.rec().Status != loop.StatusRunning {
		t.Fatalf("start of a failed session: %+v %v", res, err)
	}
	f.die()
	if got := f.delays[len(f.delays)-1]; got != time.Second || f.rec().Status != loop.StatusRunning {
		t.Fatalf("after the operator's start: delay %v, status %s", got, f.rec().Status)
	}
}

func TestSupervisor_AttemptsResetAfterRunningLongEnough(t *testing.T) {
	f := newSupervised(t, 1, nil)
	f.die()
	f.die()
	f.advance(61 * time.Second)
	f.die()
	if want := []time.Duration{time.Second, 2 * time.Second, time.Second}; fmt.Sprint(f.delays) != fmt.Sprint(want) {
		t.Fatalf("delays %v, want %v", f.delays, want)
	}
}

func TestSupervisor_WhatIsNeverRestarted(t *testing.T) {
	t.Run("exit 0 under on-failure", func(t *testing.T) {
		f := newSupervised(t, 0, nil)
		f.die()
		if f.r.SpawnCount() != 1 || len(f.names("standing.not_restarted")) != 1 {
			t.Fatalf("%d spawns, events %v", f.r.SpawnCount(), f.names("standing.*"))
		}
	})
	t.Run("exit 0 under always", func(t *testing.T) {
		f := newSupervised(t, 0, func(cfg *config.Config) { cfg.Supervision.Restart.Policy = loop.RestartAlways })
		f.die()
		if f.r.SpawnCount() != 2 {
			t.Fatalf("always did not restart: %d spawns", f.r.SpawnCount())
		}
	})
	t.Run("the entry's never", func(t *testing.T) {
		f := newSupervised(t, 1, func(cfg *config.Config) { cfg.Standing.Sessions[0].Restart = loop.RestartNever })
		f.die()
		if f.r.SpawnCount() != 1 {
			t.Fatalf("never restarted: %d spawns", f.r.SpawnCount())
		}
	})
	t.Run("an entry removed from the config", func(t *testing.T) {
		f := newSupervised(t, 1, nil)
		f.cfg.Standing.Sessions = nil
		f.die()
		if f.r.SpawnCount() != 1 || len(f.names("standing.not_restarted")) != 1 {
			t.Fatalf("a removed entry restarted: %d spawns", f.r.SpawnCount())
		}
	})
	t.Run("a stopped record", func(t *testing.T) {
		f := newSupervised(t, 1, nil)
		if res, err := f.s.StopStanding(context.Background(), f.cfg, "sup"); err != nil || !res.OK {
			t.Fatalf("stop %+v %v", res, err)
		}
		f.r.Mu.Lock()
		f.r.Panes["loop-standing-sup"] = loop.PaneDead
		f.r.Mu.Unlock()
		f.sv.look(context.Background())
		f.sv.look(context.Background())
		f.sv.work.Wait()
		if f.r.SpawnCount() != 1 || len(f.names("standing.exited")) != 0 {
			t.Fatalf("a stopped session was handled: %d spawns", f.r.SpawnCount())
		}
	})
}

func TestSupervisor_RowsSaySupervisedOnlyWhileItRuns(t *testing.T) {
	f := newSupervised(t, 1, nil)
	f.s.Supervisor = f.sv
	rows, err := f.s.ListStanding(context.Background(), f.cfg)
	if err != nil || rows[0].Supervised {
		t.Fatalf("supervised before Run: %+v %v", rows, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.sv.Run(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for !f.sv.Active() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	rows, _ = f.s.ListStanding(context.Background(), f.cfg)
	if !rows[0].Supervised {
		t.Fatalf("not supervised while Run runs: %+v", rows[0])
	}
	f.cfg.Standing.Sessions[0].Restart = loop.RestartNever
	rows, _ = f.s.ListStanding(context.Background(), f.cfg)
	if rows[0].Supervised {
		t.Fatalf("a never session reads supervised: %+v", rows[0])
	}
	cancel()
	<-done
}

func TestSupervisor_SessionEndedLooksAtOnce(t *testing.T) {
	f := newSupervised(t, 1, nil)
	f.s.Supervisor = f.sv
	f.sv.Tick, f.sv.Confirm = time.Hour, time.Hour // only a poke makes it look again
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { f.sv.Run(ctx); close(done) }()
	f.r.Mu.Lock()
	f.r.Panes["loop-standing-sup"] = loop.PaneDead
	f.r.Mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for len(f.names("standing.exited")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("SessionEnded did not make the supervisor look")
		}
		f.s.SessionEnded()
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}

// TestSupervisor_AnOperatorRestartDuringTheDelayHasTheLastWord: the
// supervisor's restart, due after its delay, is dropped when an operator
// restarted (or stopped) the session meanwhile.
func TestSupervisor_AnOperatorRestartDuringTheDelayHasTheLastWord(t *testing.T) {
	for _, verb := range []string{"restart", "stop"} {
		t.Run(verb, func(t *testing.T) {
			f := newSupervised(t, 1, nil)
			release := make(chan time.Time)
			waiting := make(chan struct{})
			f.sv.After = func(time.Duration) <-chan time.Time { close(waiting); return release }
			f.r.Mu.Lock()
			f.r.Panes["loop-standing-sup"] = loop.PaneDead
			f.r.Mu.Unlock()
			ctx := context.Background()
			f.sv.look(ctx)
			f.sv.look(ctx)
			<-waiting // standing.restarting is recorded; the delay runs
			var err error
			if verb == "restart" {
				_, err = f.s.RestartStanding(ctx, f.cfg, "sup")
			} else {
				_, err = f.s.StopStanding(ctx, f.cfg, "sup")
			}
			if err != nil {
				t.Fatal(err)
			}
			// Even when the operator's new agent is dead already, the old
			// restart does not act on it (a look of its own will).
			f.r.Mu.Lock()
			f.r.Panes["loop-standing-sup"] = loop.PaneDead
			f.r.Mu.Unlock()
			spawns := f.r.SpawnCount()
			close(release)
			f.sv.work.Wait()
			if n := f.r.SpawnCount(); n != spawns {
				t.Fatalf("the supervisor spawned after the operator's %s (%d spawns, %d before)", verb, n, spawns)
			}
			if got := f.names("standing.restarting"); len(got) != 1 {
				t.Fatalf("restarting events %v", got)
			}
		})
	}
}
