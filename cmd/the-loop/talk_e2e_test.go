package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// Two-way talk through the fake agent: a say's outcome and its
// turn's answer.

// talkEnv is a started supervisor whose boot turn has ended.
func talkEnv(t *testing.T, yaml string, opts ...testkit.AgentOption) *env {
	t.Helper()
	e := hookEnv(t, yaml, opts...)
	e.must(0, "standing", "start", "supervisor")
	waitActivity(t, e, "the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	return e
}

// sayJSON is `standing say --format json`'s result.
func sayJSON(t *testing.T, r result) loop.SayResult {
	t.Helper()
	var res loop.SayResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("say json: %v\n%s", err, r)
	}
	return res
}

func TestTalk_AnIdleAgentTakesTheSayAndAnswersIt(t *testing.T) {
	e := talkEnv(t, oneSession, testkit.TurnTime(50*time.Millisecond))
	r := e.must(0, "standing", "say", "supervisor", "--text", "status?", "--actor", "ops", "--format", "json")
	if !strings.Contains(r.stdout, `"reply": ""`) && !strings.Contains(r.stdout, `"reply":""`) {
		t.Fatalf("reply is not always present: %s", r.stdout)
	}
	res := sayJSON(t, r)
	if res.Outcome != loop.SaySubmitted || !res.Delivered || res.ExitCode != 0 || res.Name != "supervisor" || res.Reply != "" {
		t.Fatalf("say: %+v", res)
	}
	evs := e.events("--type", "standing.said")
	if len(evs) != 1 || evs[0].Field("outcome") != loop.SaySubmitted {
		t.Fatalf("said events %+v", evs)
	}
	waitActivity(t, e, "idle again", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle })

	w := e.must(0, "standing", "say", "supervisor", "--text", "and now?", "--actor", "ops", "--wait", "--timeout", "20s")
	if got, want := strings.TrimSpace(w.stdout), "fake answer to: "+framed("and now?"); got != want {
		t.Fatalf("--wait printed %q, want %q\n%s", got, want, w)
	}
	if !strings.Contains(w.stderr, "submitted to loop-standing-supervisor") {
		t.Fatalf("the delivery line is not on stderr: %s", w)
	}
}

func TestTalk_ABusyAgentQueuesTheSayAndWaitGetsItsOwnAnswer(t *testing.T) {
	hold := filepath.Join(t.TempDir(), "hold")
	e := talkEnv(t, oneSession, testkit.HoldTurns(hold))
	holdTurns(t, hold)
	e.must(0, "standing", "say", "supervisor", "--text", "first", "--actor", "ops")
	waitActivity(t, e, "working on the first", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWorking })
	w := runWhileHeld(t, e, hold, "standing", "say", "supervisor", "--text", "second", "--actor", "ops", "--wait", "--format", "json")
	res := sayJSON(t, w)
	if w.code != 0 || res.Outcome != loop.SayQueued || !res.Delivered {
		t.Fatalf("say into a busy agent: %s", w)
	}
	if want := "fake answer to: " + framed("second"); res.Reply != want {
		t.Fatalf("--wait returned %q, want its own answer %q", res.Reply, want)
	}
}

// holdTurns makes the fake agent that testkit.HoldTurns(hold) started hold
// its turns until runWhileHeld or releaseTurns lets them go.
func holdTurns(t *testing.T, hold string) { releaseTurns(t, hold, 0) }

// releaseTurns lets n held turns end in all (counted from the agent's
// start).
func releaseTurns(t *testing.T, hold string, n int) {
	t.Helper()
	if err := os.WriteFile(hold, []byte(strconv.Itoa(n)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runWhileHeld runs the-loop with args while the agent's running turn is
// held, and lets the turn end once the agent has queued the message args
// delivered: the run's outcome is queued however slow the machine.
func runWhileHeld(t *testing.T, e *env, hold string, args ...string) result {
	t.Helper()
	queued := len(e.agent.Entries("queued"))
	done := make(chan result, 1)
	go func() { done <- e.run(args...) }()
	waitFor(t, "the message queued", func() bool { return len(e.agent.Entries("queued")) > queued })
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	return testkit.Await(t, done, "the-loop %v", args)
}

func TestTalk_TwoSaysInARowEachGetTheirOwnAnswer(t *testing.T) {
	e := talkEnv(t, oneSession, testkit.TurnTime(300*time.Millisecond))
	texts := []string{"one", "two"}
	got := make([]loop.SayResult, len(texts))
	var wg sync.WaitGroup
	for i, text := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.run("standing", "say", "supervisor", "--text", text, "--actor", "ops", "--wait", "--timeout", "20s", "--format", "json")
			if r.code == 0 {
				_ = json.Unmarshal([]byte(r.stdout), &got[i])
			} else {
				got[i].Messages = []loop.Message{{Text: r.String()}}
			}
		}()
	}
	wg.Wait()
	for i, text := range texts {
		if want := "fake answer to: " + framed(text); got[i].Reply != want {
			t.Fatalf("say %q got %+v, want its own answer %q", text, got[i], want)
		}
	}
}

func TestTalk_ASwallowedSubmitIsNotSubmittedAfterOneRetry(t *testing.T) {
	e := talkEnv(t, strings.Replace(oneSession, "resumeProbeSeconds: 1}", "resumeProbeSeconds: 1, submitSeconds: 1}", 1), testkit.SwallowSubmits(2))
	r := e.run("standing", "say", "supervisor", "--text", "hello", "--actor", "ops", "--format", "json")
	res := sayJSON(t, r)
	if r.code != 1 || res.Outcome != loop.SayNotSubmitted || res.Delivered || res.ExitCode != 1 {
		t.Fatalf("say: %s", r)
	}
	if len(res.Messages) != 1 || !strings.Contains(res.Messages[0].Text, "input box") {
		t.Fatalf("messages %+v", res.Messages)
	}
	if n := len(e.agent.Entries("swallowed")); n != 2 {
		t.Fatalf("%d submit keys swallowed, want the first and the one retry", n)
	}
	if evs := e.events("--type", "standing.say_failed"); len(evs) != 1 {
		t.Fatalf("say_failed events %+v", evs)
	}
	if evs := e.events("--type", "standing.said"); len(evs) != 0 {
		t.Fatalf("said events %+v", evs)
	}
}

func TestTalk_ARetriedSubmitIsSubmitted(t *testing.T) {
	e := talkEnv(t, strings.Replace(oneSession, "resumeProbeSeconds: 1}", "resumeProbeSeconds: 1, submitSeconds: 2}", 1), testkit.SwallowSubmits(1))
	res := sayJSON(t, e.must(0, "standing", "say", "supervisor", "--text", "hello", "--actor", "ops", "--format", "json"))
	if res.Outcome != loop.SaySubmitted {
		t.Fatalf("say: %+v", res)
	}
}

func TestTalk_AWaitingAgentIsNotReadyAndNothingIsPasted(t *testing.T) {
	e := talkEnv(t, oneSession)
	typeIn(t, e, testkit.FakeTool("Bash", "ls"))
	waitActivity(t, e, "waiting on the dialog", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWaiting })
	before := len(e.agent.Messages())
	r := e.run("standing", "say", "supervisor", "--text", "1", "--actor", "ops", "--format", "json")
	res := sayJSON(t, r)
	if r.code != 1 || res.Outcome != loop.SayNotReady || res.Delivered {
		t.Fatalf("say: %s", r)
	}
	if m := res.Messages[0].Text; !strings.Contains(m, "standing attach supervisor --write") || !strings.Contains(m, "standing peek supervisor") {
		t.Fatalf("message %q names neither attach --write nor peek", m)
	}
	if after := len(e.agent.Messages()); after != before {
		t.Fatalf("something was pasted into the dialog: %q", e.agent.Messages()[before:])
	}
	if e.supervisor().Activity != loop.ActivityWaiting {
		t.Fatal("the dialog was answered")
	}
}

func TestTalk_WaitRefusals(t *testing.T) {
	e := talkEnv(t, oneSession)
	for _, timeout := range []string{"0s", "-5s"} {
		r := e.run("standing", "say", "supervisor", "--text", "x", "--wait", "--timeout", timeout)
		if r.code != 2 || !strings.Contains(r.stderr, "--timeout") {
			t.Fatalf("--timeout %s: %s", timeout, r)
		}
	}
	if n := len(e.agent.Messages()); n != 0 {
		t.Fatalf("pasted %d messages", n)
	}
	r := e.run("standing", "say", "supervisor", "--text", "slow", "--wait", "--timeout", "1ms")
	if r.code != 1 || !strings.Contains(r.stderr, "no answer came within 1ms") {
		t.Fatalf("timeout: %s", r)
	}
}

func TestTalk_AWorkItemReplyHasTheSameOutcomeAndWait(t *testing.T) {
	hold := filepath.Join(t.TempDir(), "hold")
	e := hookEnv(t, workItemConfig, testkit.HoldTurns(hold))
	holdTurns(t, hold)
	e.must(0, "sessions", "start", "--work-item", octoRef, "--cwd", e.dir)
	busy := func() bool {
		rows := e.sessionRows()
		return len(rows) == 1 && rows[0].Activity == loop.ActivityWorking
	}
	waitFor(t, "the boot turn to run", busy)
	// Busy with its boot turn: queued, and --wait gets this reply's answer.
	r := runWhileHeld(t, e, hold, "sessions", "reply", "--work-item", octoRef, "--text", "v2, please", "--actor", "ops", "--wait", "--timeout", "20s", "--format", "json")
	var res loop.ReplyResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 {
		t.Fatalf("reply: %v %s", err, r)
	}
	if res.Outcome != loop.SayQueued || !res.Delivered || res.Reply != "fake answer to: "+framedReply("ops", "v2, please") {
		t.Fatalf("reply %+v", res)
	}
	waitFor(t, "idle", func() bool { rows := e.sessionRows(); return rows[0].Activity == loop.ActivityIdle })
	r = e.must(0, "sessions", "reply", "--work-item", octoRef, "--text", "thanks", "--actor", "ops", "--wait", "--timeout", "20s")
	if strings.TrimSpace(r.stdout) != "fake answer to: "+framedReply("ops", "thanks") || !strings.Contains(r.stderr, "submitted the reply to") {
		t.Fatalf("reply --wait: %s", r)
	}
	e.must(2, "sessions", "reply", "--work-item", octoRef, "--text", "x", "--wait", "--timeout", "0s")
	e.must(0, "sessions", "close", "--work-item", octoRef)
}
