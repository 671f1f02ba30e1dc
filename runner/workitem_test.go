package runner

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// The work-item entry points issue exactly the transcripts the
// target-addressed operations are pinned to (argv_test.go), on the work
// item's own tmux name.

var (
	octoRepo5 = loop.WorkItemRef{Provider: "github", Host: "github.com", Owner: "octo", Repo: "repo", Number: 5}
	octoSess  = loop.WorkItemTarget{Ref: "github:octo/repo#5", TmuxTarget: "loop-github-octo-repo-5"}
)

func TestSpawn_IsSpawnInOnTheWorkItemsTarget(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-github-octo-repo-5", exit1("can't find session: loop-github-octo-repo-5"))
	r, _ := newTestRunner(t, rec, nil)
	if err := r.Spawn(context.Background(), octoRepo5, pinnedSpec); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, spawnTranscript("loop-github-octo-repo-5"))
}

func TestSpawn_TargetIsTmuxsSpelling(t *testing.T) {
	item := loop.WorkItemRef{Provider: "github", Host: "ghe.corp.example", Owner: "octo", Repo: "foo.js", Number: 9}
	target := "loop-github-ghe_corp_example-octo-foo_js-9"
	rec := newRecorder().on("has-session -t ="+target, exit1("can't find session: "+target))
	r, _ := newTestRunner(t, rec, nil)
	if err := r.Spawn(context.Background(), item, pinnedSpec); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, spawnTranscript(target))
}

func TestDeliver_ProbesThenIsDeliverTo(t *testing.T) {
	rec := newRecorder() // has-session answers, the pane probe says nothing: live
	r, sl := newTestRunner(t, rec, nil)
	if err := r.Deliver(context.Background(), octoSess, "the answer", 0); err != nil {
		t.Fatal(err)
	}
	want := append(stateTranscript("loop-github-octo-repo-5"), deliverTranscript("loop-github-octo-repo-5", "the-loop-1-abc")...)
	assertArgv(t, rec, want)
	if got := rec.stdins(); got[2] != "the answer" || got[3] != "" { // the submit's carriage return rides in argv
		t.Fatalf("stdin = %q", got)
	}
	if !reflect.DeepEqual(sl.d, []time.Duration{50 * time.Millisecond}) {
		t.Fatalf("sleeps = %v, want the submit delay once", sl.d)
	}
}

func TestDeliver_RefusesWithoutRecordedTarget(t *testing.T) {
	rec := newRecorder()
	r, _ := newTestRunner(t, rec, nil)
	err := r.Deliver(context.Background(), loop.WorkItemTarget{Ref: "github:octo/repo#5"}, "x", 0)
	want := "no tmux session recorded for github:octo/repo#5; nothing to deliver into — start its session first"
	if loop.ErrorCode(err) != loop.ENOTFOUND || !errors.Is(err, ErrNoSession) || loop.ErrorMessage(err) != want {
		t.Fatalf("err = %v, want ENOTFOUND %q", err, want)
	}
	assertArgv(t, rec, [][]string{})
}

func TestDeliver_RefusesGoneOrDeadSession(t *testing.T) {
	want := "tmux session loop-github-octo-repo-5 not found or its harness has exited (crashed, killed, or a retained dead pane); nothing was delivered"
	for name, c := range map[string]struct {
		rec   *recorder
		calls int
	}{
		"gone": {newRecorder().on("has-session -t =loop-github-octo-repo-5", exit1("can't find session: loop-github-octo-repo-5")), 1},
		"dead": {newRecorder().on(displayDead("loop-github-octo-repo-5"), reply{out: "loop-github-octo-repo-5\t1\n"}), 2},
	} {
		t.Run(name, func(t *testing.T) {
			r, _ := newTestRunner(t, c.rec, nil)
			err := r.Deliver(context.Background(), octoSess, "x", 0)
			if loop.ErrorCode(err) != loop.ENOTFOUND || !errors.Is(err, ErrNoSession) || loop.ErrorMessage(err) != want {
				t.Fatalf("err = %v, want ENOTFOUND %q", err, want)
			}
			assertArgv(t, c.rec, stateTranscript("loop-github-octo-repo-5")[:c.calls])
		})
	}
}

func TestKill_IsKillTarget(t *testing.T) {
	rec := newRecorder()
	r, _ := newTestRunner(t, rec, nil)
	if err := r.Kill(context.Background(), octoSess); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, killTranscript("loop-github-octo-repo-5"))
}

func TestTerminateHarness_IsTerminateHarnessInLabelledWithTheRef(t *testing.T) {
	rec := newRecorder()
	procs := scriptTerminate(rec, "loop-github-octo-repo-5")
	r, _ := newTestRunner(t, rec, procs)
	if err := r.TerminateHarness(context.Background(), octoSess, 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, terminateTranscript("loop-github-octo-repo-5"))
	if want := []string{"TERM 100", "TERM 101", "TERM 102", "KILL 102"}; !reflect.DeepEqual(procs.signal, want) {
		t.Fatalf("signals = %v, want %v", procs.signal, want)
	}
}

func TestTerminateHarness_EmptyTargetIsANoOp(t *testing.T) {
	rec := newRecorder()
	r, _ := newTestRunner(t, rec, &fakeProcs{})
	if err := r.TerminateHarness(context.Background(), loop.WorkItemTarget{Ref: "github:octo/repo#5"}, time.Second); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, [][]string{})
}
