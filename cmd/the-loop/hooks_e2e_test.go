package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/hearing"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/store"
)

// hookEnv is an end-to-end world whose agents write their transcripts
// where the-loop looks for them (CLAUDE_CONFIG_DIR).
func hookEnv(t *testing.T, yaml string, opts ...testkit.AgentOption) *env {
	t.Helper()
	e := newEnv(t, opts...)
	e.extraEnv = append(e.extraEnv, "CLAUDE_CONFIG_DIR="+filepath.Join(e.dir, "claude-config"))
	if strings.Contains(yaml, "%PORT%") {
		yaml = strings.ReplaceAll(yaml, "%PORT%", fmt.Sprint(freePort(t)))
		t.Cleanup(func() {
			e.run("stop")
			if pid := e.servicePID(); pid != 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
	e.config(yaml)
	return e
}

// settle waits until every running agent has answered its boot turn and
// is idle: the rows its hooks change stand still from then on.
func (e *env) settle() {
	e.t.Helper()
	waitFor(e.t, "the boot turns to end", func() bool {
		for _, r := range e.rows() {
			if r.Running && (r.Activity != loop.ActivityIdle || r.LastAnswerAt == "") {
				return false
			}
		}
		return true
	})
}

// supervisor is the supervisor's row.
func (e *env) supervisor() loop.StandingRow { return e.rows()["supervisor"] }

// waitActivity polls `standing list` until cond holds of the row.
func waitActivity(t *testing.T, e *env, what string, cond func(r loop.StandingRow) bool) loop.StandingRow {
	t.Helper()
	var last loop.StandingRow
	waitFor(t, what, func() bool {
		last = e.supervisor()
		return cond(last)
	})
	return last
}

// typeIn types text into the agent's pane and presses return.
func typeIn(t *testing.T, e *env, text string) {
	t.Helper()
	if _, err := e.tmux("send-keys", "-t", "=loop-standing-supervisor:", "-l", text); err != nil {
		t.Fatal(err)
	}
	if _, err := e.tmux("send-keys", "-t", "=loop-standing-supervisor:", "Enter"); err != nil {
		t.Fatal(err)
	}
}

func TestHooks_ActivityFollowsASayThroughTheFakeAgent(t *testing.T) {
	hold := filepath.Join(t.TempDir(), "hold")
	e := hookEnv(t, oneSession, testkit.Delay(1500*time.Millisecond), testkit.HoldTurns(hold))
	e.must(0, "standing", "start", "supervisor")
	if a := e.supervisor().Activity; a != loop.ActivityStarting {
		t.Fatalf("right after the spawn: %s", a)
	}
	// The argv: our --settings, `--` before the prompt.
	start := e.agent.WaitForKind(t, "start", 10*time.Second)
	i := slices.Index(start.Argv, "--settings")
	if i < 0 || start.Argv[i+1] != filepath.Join(e.dir, ".the-loop", "local", "hooks", "loop-standing-supervisor.json") ||
		start.Argv[len(start.Argv)-2] != "--" {
		t.Fatalf("argv %q", start.Argv)
	}
	settings, err := os.ReadFile(start.Argv[i+1])
	if err != nil || !strings.Contains(string(settings), "'"+filepath.Join(filepath.Dir(binary), "the-loop-hook")+"' --state-root '"+filepath.Join(e.dir, ".the-loop")+"' --session 'standing:supervisor'") {
		t.Fatalf("settings %s (%v)", settings, err)
	}
	// The boot prompt is a turn of its own: idle once it is answered.
	booted := waitActivity(t, e, "the boot turn's answer", func(r loop.StandingRow) bool {
		return r.Activity == loop.ActivityIdle && r.LastAnswerAt != ""
	})
	if booted.Tokens.CacheRead == 0 {
		t.Fatalf("no token totals after the boot turn: %+v", booted.Tokens)
	}
	holdTurns(t, hold)
	e.must(0, "standing", "say", "supervisor", "--text", "status report, please", "--actor", "ops")
	waitActivity(t, e, "working on the say", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWorking })
	releaseTurns(t, hold, 1)
	done := waitActivity(t, e, "idle after the say's turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle })
	if done.Tokens.CacheRead <= booted.Tokens.CacheRead || done.Tokens.Input <= booted.Tokens.Input {
		t.Fatalf("token totals did not grow: %+v then %+v", booted.Tokens, done.Tokens)
	}
	ended := e.events("--type", "standing.turn_ended")
	started := e.events("--type", "standing.turn_started")
	if len(ended) != 2 || len(started) != 2 || ended[1].Field("prompt_id") != started[1].Field("prompt_id") || ended[1].Field("prompt_id") == "" {
		t.Fatalf("turn events %+v %+v", started, ended)
	}
	if n, _ := strconv.Atoi(fmt.Sprint(ended[1].Field("reply_chars"))); n < 10 || ended[1].Source != "hook" {
		t.Fatalf("turn_ended %+v", ended[1])
	}
	var report loop.Report
	if err := json.Unmarshal([]byte(e.run("status", "--format", "json").stdout), &report); err != nil ||
		len(report.StandingSessions) != 1 || report.StandingSessions[0].Activity != loop.ActivityIdle || report.StandingSessions[0].Tokens != done.Tokens {
		t.Fatalf("status: %+v %v", report, err)
	}
	text := e.must(0, "standing", "list").stdout
	if !strings.Contains(text, "Activity") || !strings.Contains(text, " idle ") {
		t.Fatalf("table:\n%s", text)
	}
	e.must(0, "standing", "stop", "supervisor")
	if a := e.supervisor().Activity; a != loop.ActivityExited {
		t.Fatalf("after stop: %s", a)
	}
}

func TestHooks_WaitingOnAPermissionDialog(t *testing.T) {
	e := hookEnv(t, oneSession)
	e.must(0, "standing", "start", "supervisor")
	waitActivity(t, e, "the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	typeIn(t, e, testkit.FakeTool("Bash", "ls"))
	waitActivity(t, e, "waiting on the dialog", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWaiting })
	att := e.events("--type", "standing.attention")
	if len(att) != 1 || att[0].Field("notification_type") != "permission_prompt" || att[0].Field("message") == "" {
		t.Fatalf("attention %+v", att)
	}
	if _, err := e.tmux("send-keys", "-t", "=loop-standing-supervisor:", "Enter"); err != nil {
		t.Fatal(err)
	}
	waitActivity(t, e, "idle after the tool's turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle })
	if n := len(e.events("--type", "standing.turn_ended")); n != 2 {
		t.Fatalf("%d turns ended", n)
	}
}

func TestHooks_ClearFollowsTheNewConversation(t *testing.T) {
	e := hookEnv(t, oneSession)
	e.must(0, "standing", "start", "supervisor")
	old := waitActivity(t, e, "the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	typeIn(t, e, "/clear")
	clear := e.agent.WaitForKind(t, "clear", 10*time.Second)
	row := waitActivity(t, e, "the new conversation recorded", func(r loop.StandingRow) bool { return r.HarnessSessionID != old.HarnessSessionID })
	if row.HarnessSessionID != clear.SessionID || row.Activity != loop.ActivityIdle {
		t.Fatalf("row %+v, the agent's new id %s", row, clear.SessionID)
	}
	changed := e.events("--type", "standing.conversation_changed")
	if len(changed) != 1 || changed[0].Field("from") != old.HarnessSessionID || changed[0].Field("harness_session_id") != clear.SessionID {
		t.Fatalf("conversation_changed %+v", changed)
	}
	if n := len(e.events("--type", "standing.exited")); n != 0 {
		t.Fatalf("a clear was taken for an exit (%d)", n)
	}
	e.must(0, "standing", "say", "supervisor", "--text", "after the clear", "--actor", "ops")
	waitFor(t, "the say's turn heard", func() bool { return len(e.events("--type", "standing.turn_ended")) == 2 })
	// Stop and start: the resume continues the new conversation.
	e.must(0, "standing", "stop", "supervisor")
	e.must(0, "standing", "start", "supervisor")
	starts := e.starts()
	if last := starts[len(starts)-1]; !last.Resume || last.SessionID != clear.SessionID {
		t.Fatalf("the restart %+v, want a resume of %s", last, clear.SessionID)
	}
}

const hookServiceConfig = `
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%, resumeProbeSeconds: 0.5, harnessKillGraceSeconds: 3}}
standingSessions:
  enabled: true
  sessions:
    - {name: supervisor, cwd: %DIR%, prompt: Watch.}
`

func TestHooks_ThroughTheServiceRoute(t *testing.T) {
	e := hookEnv(t, hookServiceConfig)
	e.must(0, "start")
	record, err := os.ReadFile(filepath.Join(e.dir, ".the-loop", "local", "service.socket"))
	if sock := filepath.Join(e.dir, ".the-loop", "service.sock"); err != nil || strings.TrimSpace(string(record)) != sock {
		t.Fatalf("the service recorded its socket as %q (%v), want %s", record, err, sock)
	}
	if fi, err := os.Stat(filepath.Join(e.dir, ".the-loop", "service.sock")); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("the service socket: %v %v, want a socket of mode 0600", fi, err)
	}
	waitActivity(t, e, "the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	ended := e.events("--type", "standing.turn_ended")
	if len(ended) != 1 || ended[0].Source != "service" {
		t.Fatalf("turn_ended %+v: want it applied by the service", ended)
	}
	for _, ev := range e.events("--type", "api.request") {
		if ev.Field("path") == "/api/v1/hooks" {
			t.Fatalf("an api.request per hook: %+v", ev)
		}
	}
	e.must(0, "stop")
	if _, err := os.Stat(filepath.Join(e.dir, ".the-loop", "local", "service.socket")); err == nil {
		t.Fatal("the socket record outlives the service")
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".the-loop", "service.sock")); err == nil {
		t.Fatal("the socket outlives the service")
	}
}

// hookRun runs `the-loop hook` as Claude Code would, with the agent's
// credential, and checks it exits 0: it returns at all, the hook giving up
// at 1.8 s by itself (hookDeadline) on a hung service or a locked store.
// How long it takes is the benchmarks' figure, not a test's: a loaded
// machine stretches it.
func hookRun(t *testing.T, e *env, ref, payload string) {
	t.Helper()
	// the hook program, as the agents run it (what it cannot settle it
	// hands to `the-loop hook`)
	cmd := exec.Command(filepath.Join(filepath.Dir(binary), "the-loop-hook"), "--state-root", filepath.Join(e.dir, ".the-loop"), "--session", ref)
	cmd.Dir = t.TempDir()
	cmd.Env = append(filterEnv(os.Environ(), "HOME"), "HOME="+e.home, "THE_LOOP_CLI_CONFIG=/nonexistent/config.yaml")
	cmd.Stdin = strings.NewReader(payload)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	err := cmd.Run()
	if err != nil {
		t.Fatalf("the-loop-hook (%.40q…): %v after %v\n%s", payload, err, time.Since(began), out.String())
	}
}

func notification(id, msg string) string {
	b, _ := json.Marshal(map[string]any{"session_id": id, "hook_event_name": "Notification", "notification_type": "idle_prompt", "message": msg})
	return string(b)
}

func attentionMessages(e *env) []string {
	var out []string
	for _, ev := range e.events("--type", "standing.attention") {
		out = append(out, fmt.Sprint(ev.Field("message")))
	}
	return out
}

func TestHookCommand_AlwaysExitsZero(t *testing.T) {
	e := hookEnv(t, oneSession)
	e.must(0, "standing", "start", "supervisor")
	id := waitActivity(t, e, "the boot turn", func(r loop.StandingRow) bool { return r.LastAnswerAt != "" }).HarnessSessionID
	root := filepath.Join(e.dir, ".the-loop")

	hookRun(t, e, "standing:supervisor", "")
	hookRun(t, e, "standing:supervisor", "\x00\x01 not json {{{")
	hookRun(t, e, "standing:nobody", notification(id, "to nobody"))
	hookRun(t, e, "standing:supervisor", notification("00000000-0000-4000-8000-000000000000", "unknown id"))
	hookRun(t, e, "standing:supervisor", notification("../../../../tmp/secret", "not an id"))
	huge := `{"session_id":"` + id + `","hook_event_name":"Stop","prompt_id":"big","last_assistant_message":"` + strings.Repeat("x", 2<<20) + `"}`
	hookRun(t, e, "standing:supervisor", huge)
	// A stopped service: its recorded socket answers no more.
	if err := os.MkdirAll(filepath.Join(root, "local"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "local", "service.socket"), []byte(filepath.Join(root, "gone.sock")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hookRun(t, e, "standing:supervisor", notification(id, "service stopped"))
	if got := attentionMessages(e); !slices.Equal(got, []string{"service stopped"}) {
		t.Fatalf("attention %q: want only the known session's own conversation", got)
	}
	var rec loop.StandingRecord
	db, err := store.Open(filepath.Join(root, "the-loop.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *store.Tx) error {
		r, err := tx.Standing("supervisor")
		if r != nil {
			rec = *r
		}
		return err
	})
	// A locked store: the payload waits in the spool.
	hookRun(t, e, "standing:supervisor", notification(id, "spooled one"))
	hookRun(t, e, "standing:supervisor", notification(id, "spooled two"))
	ents, _ := os.ReadDir(hearing.SpoolDir(root))
	if len(ents) != 2 {
		t.Fatalf("%d spool files while the store was locked", len(ents))
	}
	for _, ent := range ents {
		if fi, _ := ent.Info(); fi.Mode().Perm() != 0o600 {
			t.Fatalf("spool file %s is %v", ent.Name(), fi.Mode())
		}
	}
	db.Close()
	last := rec.Answers[len(rec.Answers)-1]
	if last.PromptID != "big" || !last.Truncated || len(last.Text) != hearing.MaxKeptAnswer || strings.Trim(last.Text, "x") != "" {
		t.Fatalf("the 2 MiB Stop: %s, %d bytes, truncated %v (want its first part, marked truncated)", last.PromptID, len(last.Text), last.Truncated)
	}
	e.must(0, "standing", "list") // the next reader applies the spool
	if got := attentionMessages(e); !slices.Equal(got, []string{"service stopped", "spooled one", "spooled two"}) {
		t.Fatalf("attention %q", got)
	}
	if left, _ := os.ReadDir(hearing.SpoolDir(root)); len(left) != 0 {
		t.Fatalf("%d spool files left after they were applied", len(left))
	}
	e.must(0, "standing", "list")
	if n := len(attentionMessages(e)); n != 3 {
		t.Fatalf("the spool was applied twice (%d)", n)
	}
	ignored := e.events("--type", "hook.ignored")
	if len(ignored) < 2 {
		t.Fatalf("ignored payloads not logged: %+v", ignored)
	}
	// A session_id not of the harness's shape is refused, evented once, never spooled.
	if refused := e.events("--type", "standing.id_refused"); len(refused) != 1 || refused[0].Field("harness") != "claude" {
		t.Fatalf("id_refused %+v", refused)
	}
}

func TestHooks_AWorkItemIsHeardUnderItsOwnPrefix(t *testing.T) {
	e := hookEnv(t, workItemConfig)
	e.must(0, "sessions", "start", "--work-item", octoRef, "--cwd", e.dir)
	var row loop.WorkItemRow
	waitFor(t, "the work item's boot turn", func() bool {
		rows := e.sessionRows()
		if len(rows) == 1 {
			row = rows[0]
		}
		return row.Activity == loop.ActivityIdle && row.LastAnswerAt != ""
	})
	if row.ActivityAt == "" || row.Tokens.CacheRead == 0 {
		t.Fatalf("row %+v", row)
	}
	ended := e.events("--type", "session.turn_ended")
	if len(ended) != 1 || ended[0].Field("work_item") != octoRef || len(e.events("--type", "standing.*")) != 0 {
		t.Fatalf("events %+v", ended)
	}
	e.must(0, "sessions", "close", "--work-item", octoRef)
	if rows := e.sessionRows(); rows[0].Activity != loop.ActivityExited {
		t.Fatalf("after close: %+v", rows[0])
	}
}

func TestHookCommand_AStateRootThatIsGoneIsLeftAlone(t *testing.T) {
	e := newEnv(t)
	gone := filepath.Join(e.dir, "gone")
	cmd := exec.Command(binary, "hook", "--state-root", gone, "--session", "standing:supervisor")
	cmd.Stdin = strings.NewReader(notification("x", "y"))
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); err == nil {
		t.Fatal("the hook created a state root")
	}
	// Bad flags are a usage error, but garbage on stdin is not.
	cmd = exec.Command(binary, "hook", "--state-root", e.dir, "--session", "standing:supervisor")
	cmd.Stdin = strings.NewReader("garbage")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "the-loop.db")); err == nil {
		t.Fatal("the hook created a store")
	}
}

func TestHooks_AQueuedMessageKeepsTheAgentWorkingUntilItsOwnTurnEnds(t *testing.T) {
	hold := filepath.Join(t.TempDir(), "hold")
	e := hookEnv(t, oneSession, testkit.HoldTurns(hold))
	e.must(0, "standing", "start", "supervisor")
	waitActivity(t, e, "the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	holdTurns(t, hold)
	e.must(0, "standing", "say", "supervisor", "--text", "first", "--actor", "ops")
	waitActivity(t, e, "working on the first", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWorking })
	e.must(0, "standing", "say", "supervisor", "--text", "second", "--actor", "ops")
	e.agent.WaitForKind(t, "queued", 10*time.Second)
	releaseTurns(t, hold, 1) // the first turn ends; the queued one is held
	waitFor(t, "the first turn's end", func() bool { return len(e.events("--type", "standing.turn_ended")) == 2 })
	if a := e.supervisor().Activity; a != loop.ActivityWorking {
		t.Fatalf("between the first turn and the queued one: %s", a)
	}
	releaseTurns(t, hold, 2)
	waitFor(t, "the queued turn's end", func() bool { return len(e.events("--type", "standing.turn_ended")) == 3 })
	if a := e.supervisor().Activity; a != loop.ActivityIdle {
		t.Fatalf("after the queued turn: %s", a)
	}
	if n := len(e.events("--type", "standing.turn_started")); n != 2 {
		t.Fatalf("%d turns started: the queued message is no turn_started of its own", n)
	}
}
