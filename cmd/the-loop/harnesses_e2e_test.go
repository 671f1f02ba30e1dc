package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// harnessSession is oneSession run by another harness.
func harnessSession(harness string, extra string) string {
	return `
state: {root: .the-loop}
routing:
  tmux: {socketName: %SOCKET%, harnessKillGraceSeconds: 3, resumeProbeSeconds: 1` + extra + `}
standingSessions:
  enabled: true
  sessions:
    - name: supervisor
      harness: ` + harness + `
      cwd: %DIR%
      prompt: Watch the work items.
`
}

// heardIdle waits until the session's hooks say it is idle after its boot
// turn's answer.
func heardIdle(t *testing.T, e *env) loop.StandingRow {
	t.Helper()
	var row loop.StandingRow
	waitFor(t, "the agent idle after its boot turn", func() bool {
		row = e.rows()["supervisor"]
		return row.Activity == loop.ActivityIdle && row.LastAnswerAt != ""
	})
	return row
}

// sayWaitAndTranscript is what every harness with hooks does: a say is
// submitted (its prompt heard), a --wait say prints the turn's own answer,
// and the transcript from the CLI's session file holds both turns.
func sayWaitAndTranscript(t *testing.T, e *env) {
	t.Helper()
	r := e.must(0, "standing", "say", "supervisor", "--text", "status report, please", "--actor", "ops")
	if strings.TrimSpace(r.stdout) != "submitted to loop-standing-supervisor: the agent took it (standing.said)" {
		t.Fatalf("say: %s", r)
	}
	heardIdle(t, e)
	w := e.must(0, "standing", "say", "supervisor", "--text", "and now?", "--actor", "ops", "--wait", "--timeout", "20s")
	if strings.TrimSpace(w.stdout) != "fake answer to: "+framed("and now?") {
		t.Fatalf("say --wait: %s", w)
	}
	var es []loop.TranscriptEntry
	waitFor(t, "the transcript of three turns", func() bool {
		es = e.transcriptJSON("supervisor")
		return len(es) == 6
	})
	want := []string{"Watch the work items.", "Watch the work items.", framed("status report, please")}
	for i, w := range want {
		if !strings.Contains(es[i].Text, w) || (i == 1) != strings.HasPrefix(es[i].Text, "fake answer to: ") {
			t.Fatalf("transcript entry %d = %q, want it to hold %q (all %+v)", i, es[i].Text, w, es)
		}
	}
	if es[5].Text != "fake answer to: "+framed("and now?") || es[5].Role != loop.RoleAssistant {
		t.Fatalf("last transcript entry %+v", es[5])
	}
}

// A Codex standing session, through the fake's Codex contract: the start
// captures the id Codex chose (from the rollout file the pane holds open)
// before it records the session running, the hooks declared with -c (and
// the hook-trust bypass) report activity from the boot turn on, a say is
// submitted and --wait prints its answer, the transcript is read from the
// rollout file, and after a stop the start resumes the same conversation
// (`codex resume … -- <id>`).
func TestStandingCodex_StartsSaysWaitsAndResumes(t *testing.T) {
	e := newEnv(t, testkit.Delay(0))
	e.extraEnv = append(e.extraEnv, "CODEX_HOME="+e.agent.CodexHome())
	e.config(harnessSession("codex", ""))
	e.must(0, "standing", "start", "supervisor")
	start := e.starts()[0]
	row := heardIdle(t, e)
	if row.Status != loop.StatusRunning || row.Harness != "codex" || row.HarnessSessionID != start.SessionID {
		t.Fatalf("row %+v; the fake Codex chose id %s", row, start.SessionID)
	}
	if !slices.Contains(start.Argv, "--no-daemon") || !slices.Contains(start.Argv, "--dangerously-bypass-hook-trust") ||
		!slices.Contains(start.Argv, "features.codex_hooks=true") || start.Argv[len(start.Argv)-2] != "--" {
		t.Fatalf("codex argv %q", start.Argv)
	}
	if len(e.agent.Entries("hooks_review")) != 0 {
		t.Fatal("Codex stopped on its hook review")
	}
	if evs := e.events("--type", "hook.ignored"); len(evs) != 0 {
		t.Fatalf("hooks ignored: %+v", evs)
	}
	sayWaitAndTranscript(t, e)

	e.must(0, "standing", "stop", "supervisor")
	waitFor(t, "the session to end", func() bool { return !e.alive("loop-standing-supervisor") })
	if got := e.rows()["supervisor"].Activity; got == loop.ActivityWorking {
		t.Fatalf("activity after the stop: %s", got)
	}
	e.must(0, "standing", "start", "supervisor")
	waitFor(t, "the resumed agent", func() bool { return len(e.starts()) == 2 })
	resumed := e.starts()[1]
	if len(resumed.Argv) < 3 || resumed.Argv[0] != "resume" || !slices.Contains(resumed.Argv, start.SessionID) || !resumed.Resume {
		t.Fatalf("resume argv %q", resumed.Argv)
	}
	waitFor(t, "the resumed session running under the same id", func() bool {
		r := e.rows()["supervisor"]
		return r.Status == loop.StatusRunning && r.HarnessSessionID == start.SessionID && r.Activity == loop.ActivityIdle
	})
	r := e.must(0, "standing", "say", "supervisor", "--text", "after the resume", "--actor", "ops")
	if !strings.HasPrefix(strings.TrimSpace(r.stdout), "submitted to") {
		t.Fatalf("say after the resume: %s", r)
	}
}

// A Codex whose id never shows (its rollout file is never held open): the
// start fails within routing.tmux.readySeconds, records spawn_failed and
// kills the pane — it is never recorded running under the id the-loop had
// made up.
func TestStandingCodex_UncapturedIDFails(t *testing.T) {
	e := newEnv(t, testkit.Delay(0), testkit.Env("FAKE_AGENT_CODEX_HIDE_ID", "1"))
	e.extraEnv = append(e.extraEnv, "CODEX_HOME="+e.agent.CodexHome())
	e.config(harnessSession("codex", ", readySeconds: 1.5"))
	r := e.run("standing", "start", "supervisor")
	if r.code == 0 || !mustCompile(`supervisor\s+failed\s+codex in loop-standing-supervisor: .*no conversation id`).MatchString(r.stderr) {
		t.Fatalf("start: %s", r)
	}
	row := e.rows()["supervisor"]
	if row.Status == loop.StatusRunning || row.Running || row.HarnessSessionID != "" {
		t.Fatalf("row %+v, want no running session and no id", row)
	}
	if evs := e.events("--type", "standing.spawn_failed"); len(evs) != 1 || !strings.Contains(fmt.Sprint(evs[0].Field("error")), "no conversation id") {
		t.Fatalf("spawn_failed events %+v", evs)
	}
	waitFor(t, "the pane killed", func() bool { return !e.alive("loop-standing-supervisor") })
}

// A Gemini CLI standing session, through the fake's Gemini contract: it
// starts under the id the-loop chose (--session-id); its hooks are one entry
// per event that the-loop adds to the CLI's user settings beside the
// operator's (their keys and their hook stay, theirs runs too; a restart
// adds nothing twice), whose command finds the session in the spawn's
// environment; BeforeAgent and AfterAgent are heard as a turn's start and
// end, a say waits the CLI's submit delay (the fake drops a submit key
// 150 ms after a paste; the runner's default is 50 ms) and is submitted,
// --wait prints the answer, the transcript comes from its session file, and
// after a stop --resume continues the same conversation.
func TestStandingGemini_StartsSaysWaitsAndResumes(t *testing.T) {
	e := newEnv(t, testkit.Delay(0), testkit.Env("FAKE_AGENT_GEMINI_DROP_MS", "150"))
	userSettings := filepath.Join(e.agent.GeminiHome(), ".gemini", "settings.json")
	mark := filepath.Join(t.TempDir(), "operator-hook-ran")
	doc, _ := json.Marshal(map[string]any{"general": map[string]any{"vimMode": false}, "hooks": map[string]any{
		"SessionStart": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "touch " + mark + " && echo '{}'"}}}}}})
	if err := os.MkdirAll(filepath.Dir(userSettings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(userSettings, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	e.extraEnv = append(e.extraEnv, "GEMINI_CLI_HOME="+e.agent.GeminiHome())
	e.config(harnessSession("gemini", ""))
	e.must(0, "standing", "start", "supervisor")
	waitFor(t, "the agent", func() bool { return len(e.starts()) == 1 })
	start := e.starts()[0]
	row := heardIdle(t, e)
	if row.Status != loop.StatusRunning || row.HarnessSessionID != start.SessionID || start.Argv[0] != "--session-id" {
		t.Fatalf("row %+v; argv %q", row, start.Argv)
	}
	if a := start.Argv[len(start.Argv)-1]; !strings.HasPrefix(a, "--prompt-interactive=You are **supervisor**") || !strings.HasSuffix(a, "Watch the work items.") {
		t.Fatalf("gemini argv %q", start.Argv)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the operator's own hook did not run: %v", err)
	}
	ours := func() (theirs, loopHooks int) {
		data, err := os.ReadFile(userSettings)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			General map[string]any              `json:"general"`
			Hooks   map[string][]map[string]any `json:"hooks"`
		}
		if err := json.Unmarshal(data, &got); err != nil || got.General["vimMode"] != false {
			t.Fatalf("the user settings lost the operator's keys: %v %s", err, data)
		}
		for ev, groups := range got.Hooks {
			for _, g := range groups {
				if strings.Contains(fmt.Sprint(g), "/the-loop-hook' --from-env --json") { // the hook program beside the-loop (decisions D37)
					loopHooks++
				} else if ev == "SessionStart" {
					theirs++
				}
			}
		}
		return theirs, loopHooks
	}
	if theirs, n := ours(); theirs != 1 || n != 5 {
		t.Fatalf("user settings hold %d hooks of the operator's and %d of the-loop's, want 1 and 5 (one per event)", theirs, n)
	}
	for _, h := range e.agent.Entries("hook") {
		if h.Error != "" {
			t.Fatalf("a hook failed in the Gemini CLI's eyes: %+v", h)
		}
	}
	sayWaitAndTranscript(t, e)
	if n := len(e.agent.Entries("swallowed")); n != 0 {
		t.Fatalf("%d submit keys came too soon after the paste", n)
	}

	e.must(0, "standing", "stop", "supervisor")
	waitFor(t, "the session to end", func() bool { return !e.alive("loop-standing-supervisor") })
	waitFor(t, "SessionEnd heard", func() bool { return e.rows()["supervisor"].Activity == loop.ActivityExited })
	e.must(0, "standing", "start", "supervisor")
	waitFor(t, "the resumed agent", func() bool { return len(e.starts()) == 2 })
	if a := e.starts()[1].Argv; a[0] != "--resume" || a[1] != start.SessionID {
		t.Fatalf("resume argv %q", a)
	}
	waitFor(t, "the resumed session running under the same id", func() bool {
		r := e.rows()["supervisor"]
		return r.Status == loop.StatusRunning && r.HarnessSessionID == start.SessionID && r.Activity == loop.ActivityIdle
	})
	if theirs, n := ours(); theirs != 1 || n != 5 {
		t.Fatalf("after the restart the user settings hold %d hooks of the operator's and %d of the-loop's", theirs, n)
	}
}

// A submit key the Gemini CLI still turns into a newline after the
// adapter's delay (the fake drops every return within 600 ms of a paste) is
// covered by the say's one more submit key, halfway through
// routing.tmux.submitSeconds: the say is submitted, once.
func TestStandingGemini_LostSubmitIsPressedAgain(t *testing.T) {
	e := newEnv(t, testkit.Delay(0), testkit.Env("FAKE_AGENT_GEMINI_DROP_MS", "600"))
	e.extraEnv = append(e.extraEnv, "GEMINI_CLI_HOME="+e.agent.GeminiHome())
	e.config(harnessSession("gemini", ", submitSeconds: 3"))
	e.must(0, "standing", "start", "supervisor")
	heardIdle(t, e)
	r := e.must(0, "standing", "say", "supervisor", "--text", "are you there?", "--actor", "ops")
	if strings.TrimSpace(r.stdout) != "submitted to loop-standing-supervisor: the agent took it (standing.said)" {
		t.Fatalf("say: %s", r)
	}
	if n := len(e.agent.Entries("swallowed")); n != 1 {
		t.Fatalf("%d submit keys were lost, want the first one", n)
	}
	if got := e.agent.Messages(); len(got) != 1 || got[0] != framed("are you there?") {
		t.Fatalf("the agent got %q", got)
	}
}

// A say neither Codex nor the Gemini CLI takes, even after the one more
// submit key, is not-submitted (exit 1, the text left in the input box),
// as for Claude Code: the outcome comes from their prompt hooks.
func TestStandingCodexAndGemini_UntakenSayIsNotSubmitted(t *testing.T) {
	for _, h := range []string{"codex", "gemini"} {
		t.Run(h, func(t *testing.T) {
			e := newEnv(t, testkit.Delay(0), testkit.SwallowSubmits(2))
			e.extraEnv = append(e.extraEnv, "CODEX_HOME="+e.agent.CodexHome(), "GEMINI_CLI_HOME="+e.agent.GeminiHome())
			e.config(harnessSession(h, ", submitSeconds: 1"))
			e.must(0, "standing", "start", "supervisor")
			heardIdle(t, e)
			r := e.run("standing", "say", "supervisor", "--text", "hello", "--actor", "ops", "--format", "json")
			res := sayJSON(t, r)
			if r.code != 1 || res.Outcome != loop.SayNotSubmitted || res.Delivered {
				t.Fatalf("say: %s", r)
			}
			if n := len(e.agent.Entries("swallowed")); n != 2 {
				t.Fatalf("%d submit keys swallowed, want the first and the one retry", n)
			}
		})
	}
}

// A say --wait into a busy Codex joins the running turn (Codex takes a
// message submitted during a turn into it): the say is queued and its
// answer is that turn's, the one to the last message — and the activity
// is idle after the turn's one Stop, no turn of its own awaited.
func TestStandingCodex_SayIntoARunningTurnJoinsIt(t *testing.T) {
	hold := filepath.Join(t.TempDir(), "hold")
	e := newEnv(t, testkit.Delay(0), testkit.HoldTurns(hold))
	e.extraEnv = append(e.extraEnv, "CODEX_HOME="+e.agent.CodexHome())
	e.config(harnessSession("codex", ""))
	e.must(0, "standing", "start", "supervisor")
	heardIdle(t, e)
	holdTurns(t, hold)
	e.must(0, "standing", "say", "supervisor", "--text", "first", "--actor", "ops")
	w := runWhileHeld(t, e, hold, "standing", "say", "supervisor", "--text", "second", "--actor", "ops", "--wait", "--timeout", "20s")
	if w.code != 0 || strings.TrimSpace(w.stdout) != "fake answer to: "+framed("second") || !strings.Contains(w.stderr, "queued in loop-standing-supervisor") {
		t.Fatalf("say --wait into a running turn: %s", w)
	}
	waitFor(t, "idle after the turn", func() bool { return e.rows()["supervisor"].Activity == loop.ActivityIdle })
}
