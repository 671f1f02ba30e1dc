package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestStandingStart_FreshThenAlreadyRunning(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)

	r := e.must(0, "standing", "start")
	if !strings.HasPrefix(r.stdout, "supervisor  started") || r.stderr != "" {
		t.Fatalf("start output: %s", r)
	}
	start := e.agent.WaitForKind(t, "start", 10*time.Second)
	if len(start.Argv) < 3 || start.Argv[0] != "--session-id" || !uuidRE.MatchString(start.Argv[1]) {
		t.Fatalf("agent argv %q", start.Argv)
	}
	prompt := start.Argv[len(start.Argv)-1]
	if !strings.HasPrefix(prompt, "You are **supervisor**, a the-loop *standing session*.") ||
		!strings.HasSuffix(prompt, "\n\n---\n\nWatch the work items.") {
		t.Fatalf("boot prompt:\n%s", prompt)
	}
	row := e.rows()["supervisor"]
	if row.Status != "running" || !row.Running || row.HarnessSessionID != start.Argv[1] || !row.Declared || !row.AutoStart {
		t.Fatalf("row %+v", row)
	}
	// The agent's boot turn may already have reported through its hooks
	// (standing.turn_started): only the lifecycle's transitions are start's.
	if got := eventNames(transitions(e.events("--standing", "supervisor"))); !slices.Equal(got, []string{"standing.started"}) {
		t.Fatalf("events %v", got)
	}

	r = e.must(0, "standing", "start", "supervisor")
	if !strings.HasPrefix(r.stdout, "supervisor  already-running") {
		t.Fatalf("second start: %s", r)
	}
	if n := len(e.starts()); n != 1 {
		t.Fatalf("the agent was spawned %d times", n)
	}
}

func TestStandingStop_TerminatesGracefullyThenResumes(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	e.must(0, "standing", "start")
	id := e.agent.WaitForKind(t, "start", 10*time.Second).SessionID

	r := e.must(0, "standing", "stop")
	if !strings.Contains(r.stdout, "supervisor  stopped          loop-standing-supervisor") {
		t.Fatalf("stop output: %s", r)
	}
	// SIGTERM reached the agent (it flushed its transcript) before the
	// tmux session was killed (a SIGHUP would have lost it).
	if len(e.agent.Entries("sigterm")) != 1 {
		t.Fatalf("agent log: %+v", e.agent.Log())
	}
	if _, ok := e.agent.Transcript(id); !ok {
		t.Fatal("the transcript was not flushed: the conversation is not resumable")
	}
	if e.alive("loop-standing-supervisor") {
		t.Fatal("tmux session still alive after stop")
	}
	row := e.rows()["supervisor"]
	if row.Status != "stopped" || row.HarnessSessionID != id || row.Running {
		t.Fatalf("row after stop %+v", row)
	}

	r = e.must(0, "standing", "start", "supervisor")
	if !strings.HasPrefix(r.stdout, "supervisor  resumed") {
		t.Fatalf("restart: %s", r)
	}
	starts := e.starts()
	if len(starts) != 2 || !starts[1].Resume || starts[1].SessionID != id || starts[1].Argv[0] != "--resume" {
		t.Fatalf("second start %+v", starts)
	}
	got := eventNames(transitions(e.events("--standing", "supervisor")))
	if !slices.Equal(got, []string{"standing.started", "standing.stopped", "standing.resumed"}) {
		t.Fatalf("events %v", got)
	}
}

func TestStandingStart_ResumeThatDiesFallsBackToFresh(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	e.must(0, "standing", "start")
	id := e.agent.WaitForKind(t, "start", 10*time.Second).SessionID
	e.must(0, "standing", "stop")
	// The conversation is gone: claude --resume on an unknown id exits at once.
	if err := os.Remove(e.agent.TranscriptPath(id)); err != nil {
		t.Fatal(err)
	}
	r := e.must(0, "standing", "start")
	if !strings.HasPrefix(r.stdout, "supervisor  started") {
		t.Fatalf("start: %s", r)
	}
	row := e.rows()["supervisor"]
	if row.HarnessSessionID == id || !uuidRE.MatchString(row.HarnessSessionID) || !row.Running {
		t.Fatalf("row %+v (old id %s)", row, id)
	}
	evs := transitions(e.events("--standing", "supervisor"))
	got := eventNames(evs)
	if !slices.Equal(got, []string{"standing.started", "standing.stopped", "standing.resume_failed", "standing.started"}) {
		t.Fatalf("events %v", got)
	}
	if evs[2].Level != "warning" || evs[2].Field("harness_session_id") != id {
		t.Fatalf("resume_failed %+v", evs[2])
	}
}

func TestStandingStart_RefusesLiveSessionWithoutRecord(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	if _, err := e.tmux("new-session", "-d", "-s", "loop-standing-supervisor", "sleep 600"); err != nil {
		t.Fatal(err)
	}
	r := e.must(1, "standing", "start")
	if !strings.Contains(r.stderr, "supervisor  failed") || r.stdout != "" ||
		!strings.Contains(r.stderr, "tmux -L "+e.socket+" attach -r -t loop-standing-supervisor") {
		t.Fatalf("start: %s", r)
	}
	if row := e.rows()["supervisor"]; row.Status != "absent" {
		t.Fatalf("a record was written: %+v", row)
	}
	r = e.must(0, "standing", "stop", "supervisor")
	if !strings.Contains(r.stdout, "not-running") {
		t.Fatalf("stop: %s", r)
	}
	e.must(0, "standing", "stop")
	if !e.alive("loop-standing-supervisor") {
		t.Fatal("the-loop signalled a session it has no record of")
	}
	if len(e.starts()) != 0 {
		t.Fatal("an agent was spawned over the occupant")
	}
	evs := e.events("--type", "standing.spawn_failed")
	if len(evs) != 1 || evs[0].Field("tmux_target") != "loop-standing-supervisor" {
		t.Fatalf("events %+v", evs)
	}
}

func TestStandingStart_ClearsDeadRetainedPane(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	if _, err := e.tmux("new-session", "-d", "-s", "loop-standing-supervisor", "sleep 600"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.tmux("set-option", "-t", "=loop-standing-supervisor:", "-w", "remain-on-exit", "on"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.tmux("respawn-pane", "-k", "-t", "=loop-standing-supervisor:", "true"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pane to die", func() bool {
		out, _ := e.tmux("list-panes", "-t", "=loop-standing-supervisor:", "-F", "#{pane_dead}")
		return out == "1"
	})
	e.must(0, "standing", "start")
	waitFor(t, "the agent to replace the dead pane", func() bool {
		return len(e.starts()) == 1 && e.alive("loop-standing-supervisor")
	})
}

// TestStandingStart_TmuxMissingIsNamedAndNothingRuns: with
// tmux missing from PATH, start names it with the install command and logs
// an event, and neither status (exit 1) nor list calls the session running.
func TestStandingStart_TmuxMissingIsNamedAndNothingRuns(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession + "service: {enabled: false}\n") // `start` runs in this process
	e.must(0, "standing", "start")                       // a record that says running
	waitFor(t, "the agent", func() bool { return len(e.starts()) == 1 })
	e.path = e.agent.BinDir() // then no tmux on PATH: tmux cannot answer
	for _, args := range [][]string{{"standing", "start"}, {"standing", "start", "supervisor"}, {"start"}} {
		r := e.must(1, args...)
		if !strings.Contains(r.stderr, "tmux not found on PATH") || !strings.Contains(r.stderr, "apt-get install tmux") ||
			!strings.Contains(r.stderr, "brew install tmux") {
			t.Fatalf("%v: %s", args, r)
		}
	}
	if n := len(e.starts()); n != 1 {
		t.Fatalf("spawned without tmux: %d starts", n)
	}
	evs := e.events("--type", "tmux.not_found")
	if len(evs) != 3 || evs[0].Level != "error" || !strings.Contains(fmt.Sprint(evs[0].Field("error")), "tmux not found on PATH") {
		t.Fatalf("tmux.not_found events %+v", evs)
	}
	r := e.must(1, "status")
	if !strings.Contains(r.stdout, "supervisor  not running [declared]") {
		t.Fatalf("status: %s", r)
	}
	if row := e.rows()["supervisor"]; row.Running {
		t.Fatalf("list calls it running without tmux: %+v", row)
	}
}

func TestStandingStart_FailuresStayWithTheirSession(t *testing.T) {
	e := newEnv(t)
	unreadable := filepath.Join(e.dir, "missing-brief.md")
	e.config(`
state: {root: .the-loop}
routing: {tmux: {socketName: %SOCKET%}}
standingSessions:
  enabled: true
  sessions:
    - {name: good, cwd: %DIR%}
    - {name: nodir, cwd: %DIR%/does-not-exist}
    - {name: nobrief, cwd: %DIR%, promptFile: ` + unreadable + `}
    - {name: cursed, cwd: %DIR%, harness: cursor}
`)
	r := e.must(1, "standing", "start")
	want := map[string]string{
		"nodir":   "does-not-exist' is not a directory",
		"nobrief": unreadable,
		"cursed":  "the cursor harness does not support the tmux runner",
	}
	for name, detail := range want {
		line := regexp.MustCompile(`(?m)^` + name + ` +failed +.*$`).FindString(r.stderr)
		if !strings.Contains(line, detail) {
			t.Errorf("%s: want failed naming %q in\n%s", name, detail, r)
		}
	}
	if !strings.Contains(r.stdout, "good     started") {
		t.Fatalf("good did not start: %s", r)
	}
	failed := map[string]bool{}
	for _, ev := range e.events("--type", "standing.spawn_failed") {
		failed[ev.Field("standing").(string)] = true
	}
	if len(failed) != 3 || !failed["nodir"] || !failed["nobrief"] || !failed["cursed"] {
		t.Fatalf("spawn_failed for %v", failed)
	}
	e.agent.WaitForKind(t, "start", 10*time.Second)
	if n := len(e.starts()); n != 1 {
		t.Fatalf("%d agents spawned", n)
	}
}

func TestStandingStart_MissingHarnessBinary(t *testing.T) {
	e := newEnv(t)
	if err := os.Remove(filepath.Join(e.agent.BinDir(), "cursor-agent")); err != nil {
		t.Fatal(err)
	}
	e.config(`
routing: {tmux: {socketName: %SOCKET%}}
standingSessions:
  sessions:
    - {name: good, cwd: %DIR%}
    - {name: nobin, cwd: %DIR%, harness: cursor}
`)
	r := e.must(1, "standing", "start")
	if !strings.Contains(r.stderr, "nobin  failed") || !strings.Contains(r.stderr, "harness CLI 'cursor-agent' not found on PATH") {
		t.Fatalf("%s", r)
	}
	if !strings.Contains(r.stdout, "good   started") {
		t.Fatalf("%s", r)
	}
	evs := e.events("--type", "standing.spawn_failed")
	if len(evs) != 1 || evs[0].Field("harness") != "cursor" {
		t.Fatalf("%+v", evs)
	}
}

func TestStandingList_MergesDeclaredAndRecorded(t *testing.T) {
	e := newEnv(t)
	e.config(`
routing: {tmux: {socketName: %SOCKET%}}
standingSessions:
  enabled: true
  sessions:
    - {name: alpha, cwd: %DIR%}
    - {name: beta, cwd: %DIR%, autoStart: false}
`)
	e.must(0, "standing", "start", "alpha")
	e.must(0, "standing", "create", "gamma", "--cwd", e.dir, "--no-start", "--no-auto-start")
	e.must(0, "standing", "create", "delta", "--cwd", e.dir)
	// alpha is then removed from the config: its record stays.
	e.config(`
routing: {tmux: {socketName: %SOCKET%}}
standingSessions:
  enabled: true
  sessions:
    - {name: beta, cwd: %DIR%, autoStart: false}
`)
	rows := e.rows()
	type want struct {
		declared, autoStart, live bool
		status                    loop.StandingStatus
	}
	expect := map[string]want{
		"alpha": {false, false, true, "running"},
		"beta":  {true, false, false, "absent"},
		"gamma": {false, false, false, "stopped"},
		"delta": {false, true, true, "running"},
	}
	if len(rows) != len(expect) {
		t.Fatalf("rows %+v", rows)
	}
	for name, w := range expect {
		r := rows[name]
		if r.Declared != w.declared || r.AutoStart != w.autoStart || r.Running != w.live || r.Status != w.status {
			t.Errorf("%s: got declared=%v autoStart=%v live=%v status=%s, want %+v", name, r.Declared, r.AutoStart, r.Running, r.Status, w)
		}
	}
	e.settle() // the agents' hooks change their rows until their boot turns end
	same := e.must(0, "standing", "list", "--format", "json")
	if jsonFlag := e.must(0, "standing", "list", "--json"); same.stdout != jsonFlag.stdout {
		t.Fatal("--json and --format json differ")
	}
	text := e.must(0, "standing", "list")
	lines := strings.Split(strings.TrimRight(text.stdout, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "Name   Harness  Tmux                 Declared  Status   Live  Activity  Up ") ||
		!strings.Contains(lines[0], " Restarts  Last exit  Slack") {
		t.Fatalf("table:\n%s", text.stdout)
	}
}

func TestStandingStop_SurvivesBrokenConfigAndSocketChange(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	e.must(0, "standing", "start")
	e.config("routing: [this is: not valid\nstandingSessions: 7\n")
	r := e.must(0, "standing", "stop")
	if !strings.Contains(r.stdout, "supervisor  stopped") || e.alive("loop-standing-supervisor") {
		t.Fatalf("stop with a broken config: %s", r)
	}

	e.config(oneSession)
	e.must(0, "standing", "start")
	other := testkit.Tmux(t)
	e.config(strings.Replace(oneSession, "%SOCKET%", other, 1))
	r = e.must(0, "standing", "stop")
	if !strings.Contains(r.stdout, "supervisor  stopped") || e.alive("loop-standing-supervisor") {
		t.Fatalf("stop after a socket change: %s", r)
	}
}

func TestStanding_ASessionTheRecordDoesNotOwnIsNeverTouched(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	e.must(0, "standing", "start")
	e.agent.WaitForKind(t, "start", 10*time.Second)
	e.must(0, "standing", "stop")
	// Another project's agent now holds the name on the same tmux server.
	if _, err := e.tmux("new-session", "-d", "-s", "loop-standing-supervisor", "sleep 600"); err != nil {
		t.Fatal(err)
	}
	r := e.must(1, "standing", "start")
	if !strings.Contains(r.stderr, "not the agent the-loop started for this record") {
		t.Fatalf("start: %s", r)
	}
	e.must(1, "standing", "say", "supervisor", "--text", "hello")
	r = e.must(0, "standing", "stop")
	if !strings.Contains(r.stdout, "not-running") || !e.alive("loop-standing-supervisor") {
		t.Fatalf("stop signalled the other agent: %s", r)
	}
	if n := len(e.starts()); n != 1 {
		t.Fatalf("%d agents spawned", n)
	}
}

// A boot prompt too long for a tmux command line still spawns (decisions
// D14b): the pane runs `the-loop internal-exec FILE`, which execs the agent.
func TestStandingStart_LongBriefSpawnsThroughTheLauncher(t *testing.T) {
	e := newEnv(t)
	brief := strings.Repeat("Keep an eye on the work items in flight. ", 600) // ~24 KB
	path := filepath.Join(e.dir, "brief.md")
	if err := os.WriteFile(path, []byte(brief), 0o644); err != nil {
		t.Fatal(err)
	}
	e.config(strings.Replace(oneSession, "prompt: Watch the work items.", "promptFile: "+path, 1))
	e.must(0, "standing", "start")
	start := e.agent.WaitForKind(t, "start", 10*time.Second)
	if !strings.HasSuffix(start.Prompt, "---\n\n"+strings.TrimSpace(brief)) || start.Argv[0] != "--session-id" {
		t.Fatalf("the agent got a %d-byte prompt ending %q", len(start.Prompt), start.Prompt[max(0, len(start.Prompt)-60):])
	}
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "the-loop-exec-*.json"))
	for _, m := range matches {
		if data, err := os.ReadFile(m); err == nil && strings.Contains(string(data), start.SessionID) {
			t.Fatalf("the launcher left its argv file %s behind", m)
		}
	}
}
