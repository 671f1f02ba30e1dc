package testkit_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// lockedBuffer collects the fake's screen output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// running is a fake agent driven through a stdin pipe.
type running struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	screen *lockedBuffer
	cwd    string
}

// startFake runs the fake in a fresh cwd with argv, its stdin a pipe.
func startFake(t *testing.T, agent *testkit.Agent, argv ...string) *running {
	t.Helper()
	return startFakeIn(t, agent, t.TempDir(), argv...)
}

// startFakeIn runs the fake in cwd.
func startFakeIn(t *testing.T, agent *testkit.Agent, cwd string, argv ...string) *running {
	t.Helper()
	r := &running{screen: &lockedBuffer{}, cwd: cwd}
	r.cmd = exec.Command(agent.Path(), argv...)
	r.cmd.Dir = r.cwd
	r.cmd.Stdout, r.cmd.Stderr = r.screen, r.screen
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-done
	})
	return r
}

// say pastes text and submits it.
func (r *running) say(t *testing.T, text string) {
	t.Helper()
	if _, err := io.WriteString(r.stdin, "\x1b[200~"+text+"\x1b[201~\r"); err != nil {
		t.Fatal(err)
	}
}

// waitScreen waits until the screen shows want. The fake writes its screen
// before its log entry or hook says what it did, but the bytes reach
// r.screen through the pipe os/exec copies from in a goroutine of its own,
// so a log entry seen is no promise that the copy has caught up.
func (r *running) waitScreen(t *testing.T, want string) {
	t.Helper()
	testkit.Eventually(t, func() bool { return strings.Contains(r.screen.String(), want) },
		5*time.Second, "the screen shows no %q:\n%s", want, r.screen)
}

func (r *running) key(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(r.stdin, s); err != nil {
		t.Fatal(err)
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

const sessionID = "11111111-2222-4333-8444-555555555555"

func wantFields(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || !jsonEqual(g, v) {
			t.Errorf("%s: %s = %#v, want %#v (payload %v)", what, k, got[k], v, got)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestFakeAgent_ATurnFiresItsHooksAndWritesAClaudeShapedTranscript(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.TurnTime(10*time.Millisecond),
		testkit.Answer("part one: {prompt}\n\npart two"))
	rec := testkit.RecordHooks(t, t.TempDir())
	r := startFake(t, agent, "--session-id", sessionID, "--model", "opus", "--settings", rec.Settings, "--", "-hello")
	stop := rec.WaitCount(t, "Stop", 1, 10*time.Second)[0]
	tp := agent.ClaudeTranscriptPath(r.cwd, sessionID)
	common := map[string]any{"session_id": sessionID, "transcript_path": tp, "cwd": r.cwd}
	start := rec.Of("SessionStart")[0]
	wantFields(t, "SessionStart", start, common)
	wantFields(t, "SessionStart", start, map[string]any{"hook_event_name": "SessionStart", "source": "startup", "model": "opus"})
	ups := rec.Of("UserPromptSubmit")[0]
	wantFields(t, "UserPromptSubmit", ups, common)
	wantFields(t, "UserPromptSubmit", ups, map[string]any{"prompt": "-hello", "permission_mode": "default"})
	pid, _ := ups["prompt_id"].(string)
	if !uuidRE.MatchString(pid) {
		t.Fatalf("prompt_id %q is not a uuid", pid)
	}
	wantFields(t, "Stop", stop, common)
	wantFields(t, "Stop", stop, map[string]any{"prompt_id": pid, "stop_hook_active": false,
		"last_assistant_message": "part one: -hello\n\npart two", "effort": "medium"})
	if names := eventNames(rec.Payloads()); !jsonEqual(names, []string{"SessionStart", "UserPromptSubmit", "Stop"}) {
		t.Fatalf("events %v", names)
	}

	lines := agent.ClaudeTranscript(r.cwd, sessionID)
	var types []string
	var user map[string]any
	var assistants []map[string]any
	for _, l := range lines {
		types = append(types, l["type"].(string))
		switch l["type"] {
		case "user":
			user = l
		case "assistant":
			assistants = append(assistants, l)
		}
	}
	if !jsonEqual(types, []string{"user", "attachment", "assistant", "assistant", "last-prompt"}) {
		t.Fatalf("line types %v", types)
	}
	wantFields(t, "user line", user, map[string]any{"promptId": pid, "sessionId": sessionID, "cwd": r.cwd,
		"message": map[string]any{"role": "user", "content": "-hello"}, "parentUuid": nil})
	for _, k := range []string{"timestamp", "uuid"} {
		if s, _ := user[k].(string); s == "" {
			t.Errorf("user line has no %s: %v", k, user)
		}
	}
	m0, m1 := assistants[0]["message"].(map[string]any), assistants[1]["message"].(map[string]any)
	if m0["id"] != m1["id"] || !strings.HasPrefix(m0["id"].(string), "msg_") {
		t.Fatalf("assistant lines of one answer have ids %v and %v", m0["id"], m1["id"])
	}
	if !jsonEqual(m0["content"], []any{map[string]any{"type": "text", "text": "part one: -hello"}}) ||
		!jsonEqual(m1["content"], []any{map[string]any{"type": "text", "text": "part two"}}) {
		t.Fatalf("contents %v / %v", m0["content"], m1["content"])
	}
	u := m1["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"} {
		if n, _ := u[k].(float64); n <= 0 {
			t.Errorf("usage %s = %v", k, u[k])
		}
	}
	if assistants[0]["parentUuid"] != lines[1]["uuid"] {
		t.Errorf("parentUuid chain broken: %v", assistants[0])
	}

	r.say(t, testkit.FakeExit)
	end := rec.WaitCount(t, "SessionEnd", 1, 10*time.Second)[0]
	wantFields(t, "SessionEnd", end, map[string]any{"reason": "prompt_input_exit", "session_id": sessionID})
	agent.WaitFor(t, func(e testkit.Entry) bool { return e.Kind == "exit" && e.Code == 0 }, 5*time.Second)
}

func eventNames(ps []map[string]any) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p["hook_event_name"].(string))
	}
	return out
}

func TestFakeAgent_AMessageSubmittedDuringATurnIsQueuedAsMeasured(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.TurnTime(700*time.Millisecond))
	rec := testkit.RecordHooks(t, t.TempDir())
	r := startFake(t, agent, "--session-id", sessionID, "--settings", rec.Settings, "--", "first")
	first := rec.WaitCount(t, "UserPromptSubmit", 1, 10*time.Second)[0]
	r.say(t, "second")
	stops := rec.WaitCount(t, "Stop", 2, 10*time.Second)
	ups := rec.Of("UserPromptSubmit")
	if len(ups) != 2 {
		t.Fatalf("UserPromptSubmit fired %d times, want 2 (once per message, the second at enqueue)", len(ups))
	}
	p1 := first["prompt_id"]
	wantFields(t, "queued UserPromptSubmit", ups[1], map[string]any{"prompt": "second", "prompt_id": p1})
	wantFields(t, "first Stop", stops[0], map[string]any{"prompt_id": p1, "last_assistant_message": "fake answer to: first"})
	p2, _ := stops[1]["prompt_id"].(string)
	if p2 == p1 || !uuidRE.MatchString(p2) {
		t.Fatalf("second Stop's prompt_id %q, first %v", p2, p1)
	}
	wantFields(t, "second Stop", stops[1], map[string]any{"last_assistant_message": "fake answer to: second"})
	if names := eventNames(rec.Payloads()); !jsonEqual(names, []string{"SessionStart", "UserPromptSubmit", "UserPromptSubmit", "Stop", "Stop"}) {
		t.Fatalf("events %v", names)
	}
	r.waitScreen(t, "⎿  Queued · ctrl+x ctrl+s to send now")
	var seq []string
	for _, l := range agent.ClaudeTranscript(r.cwd, sessionID) {
		switch l["type"] {
		case "queue-operation":
			seq = append(seq, l["operation"].(string))
		case "user":
			m := l["message"].(map[string]any)
			seq = append(seq, "user:"+m["content"].(string)+":"+l["promptId"].(string))
		case "assistant":
			seq = append(seq, "assistant")
		}
	}
	want := []string{"user:first:" + p1.(string), "enqueue", "assistant", "dequeue", "user:second:" + p2, "assistant"}
	if !jsonEqual(seq, want) {
		t.Fatalf("transcript sequence\n got %v\nwant %v", seq, want)
	}
}

func TestFakeAgent_ClearStartsANewConversationInTheSameProcess(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.TurnTime(10*time.Millisecond))
	rec := testkit.RecordHooks(t, t.TempDir())
	r := startFake(t, agent, "--session-id", sessionID, "--settings", rec.Settings)
	rec.WaitCount(t, "SessionStart", 1, 10*time.Second)
	r.say(t, testkit.FakeClear)
	r.say(t, "after")
	rec.WaitCount(t, "Stop", 1, 10*time.Second)
	end := rec.Of("SessionEnd")
	if len(end) != 1 {
		t.Fatalf("SessionEnd payloads %v", end)
	}
	wantFields(t, "SessionEnd", end[0], map[string]any{"reason": "clear", "session_id": sessionID})
	starts := rec.Of("SessionStart")
	newID, _ := starts[1]["session_id"].(string)
	if len(starts) != 2 || newID == sessionID || !uuidRE.MatchString(newID) {
		t.Fatalf("SessionStart payloads %v", starts)
	}
	wantFields(t, "SessionStart after /clear", starts[1], map[string]any{"source": "clear",
		"transcript_path": agent.ClaudeTranscriptPath(r.cwd, newID)})
	if names := eventNames(rec.Payloads()); !jsonEqual(names, []string{"SessionStart", "SessionEnd", "SessionStart", "UserPromptSubmit", "Stop"}) {
		t.Fatalf("events %v", names)
	}
	for _, p := range rec.Payloads()[3:] {
		if p["session_id"] != newID {
			t.Fatalf("a hook after /clear carries %v, want %s", p["session_id"], newID)
		}
	}
	var prompts []string
	for _, l := range agent.ClaudeTranscript(r.cwd, newID) {
		if l["type"] == "user" {
			prompts = append(prompts, l["message"].(map[string]any)["content"].(string))
		}
	}
	if !jsonEqual(prompts, []string{"after"}) {
		t.Fatalf("new transcript's prompts %v", prompts)
	}
	if msgs, ok := agent.Transcript(sessionID); !ok || !jsonEqual(msgs, []string{"/clear"}) {
		t.Fatalf("the old conversation's resume transcript %q, %v", msgs, ok)
	}
}

func TestFakeAgent_NotificationsAndAPermissionDialog(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.TurnTime(10*time.Millisecond))
	dir := t.TempDir()
	rec := testkit.RecordHooks(t, dir)
	idle := filepath.Join(dir, "idle.jsonl")
	other := filepath.Join(dir, "other.json")
	doc, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"Notification": []any{map[string]any{"matcher": "idle_prompt", "hooks": []any{
			map[string]any{"type": "command", "command": "cat >> " + idle + "; echo >> " + idle}}}},
		"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "exit 3"}}}},
	}})
	if err := os.WriteFile(other, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	r := startFake(t, agent, "--session-id", sessionID, "--settings", rec.Settings, "--settings", other)
	rec.WaitCount(t, "SessionStart", 1, 10*time.Second)
	r.say(t, testkit.FakeNotify("idle_prompt", "Claude is waiting for your input"))
	n := rec.WaitCount(t, "Notification", 1, 10*time.Second)[0]
	wantFields(t, "Notification", n, map[string]any{"session_id": sessionID, "notification_type": "idle_prompt",
		"message": "Claude is waiting for your input"})

	r.say(t, testkit.FakeTool("Bash", "ls -la"))
	n = rec.WaitCount(t, "Notification", 2, 10*time.Second)[1]
	wantFields(t, "permission Notification", n, map[string]any{"notification_type": "permission_prompt",
		"message": "Claude needs your permission to use Bash"})
	testkit.Eventually(t, func() bool { return strings.Contains(r.screen.String(), "Do you want to proceed?") },
		5*time.Second, "no dialog on screen:\n%s", r.screen.String())
	if len(rec.Of("Stop")) != 0 || len(rec.Of("PostToolUse")) != 0 {
		t.Fatalf("the turn went on before the dialog was answered: %v", eventNames(rec.Payloads()))
	}
	r.key(t, "\r")
	stop := rec.WaitCount(t, "Stop", 1, 10*time.Second)[0]
	post := rec.Of("PostToolUse")
	if len(post) != 1 {
		t.Fatalf("PostToolUse payloads %v", post)
	}
	wantFields(t, "PostToolUse", post[0], map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls -la"},
		"session_id": sessionID})
	if id, _ := post[0]["tool_use_id"].(string); !strings.HasPrefix(id, "toolu_") {
		t.Errorf("tool_use_id %q", id)
	}
	if _, ok := post[0]["tool_response"].(map[string]any); !ok {
		t.Errorf("tool_response %v", post[0]["tool_response"])
	}
	wantFields(t, "Stop", stop, map[string]any{"prompt_id": rec.Of("UserPromptSubmit")[0]["prompt_id"]})
	if names := eventNames(rec.Payloads()); !jsonEqual(names, []string{"SessionStart", "Notification", "UserPromptSubmit", "Notification", "PostToolUse", "Stop"}) {
		t.Fatalf("events %v", names)
	}
	data, _ := os.ReadFile(idle)
	if got := strings.Count(string(data), "\n"); got != 1 {
		t.Fatalf("the idle_prompt matcher ran %d times, want 1:\n%s", got, data)
	}
	agent.WaitFor(t, func(e testkit.Entry) bool {
		return e.Kind == "hook" && e.Event == "Stop" && e.Command == "exit 3" && e.Code == 3
	}, 5*time.Second)
	var toolResult bool
	for _, l := range agent.ClaudeTranscript(r.cwd, sessionID) {
		if m, ok := l["message"].(map[string]any); ok && l["type"] == "user" {
			_, toolResult = m["content"].([]any)
			if toolResult {
				break
			}
		}
	}
	if !toolResult {
		t.Fatal("the transcript has no tool result (a user line with list content)")
	}
}

func TestFakeAgent_SwallowSubmitsKeepsTheTextUntilTheNextReturn(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.SwallowSubmits(1))
	rec := testkit.RecordHooks(t, t.TempDir())
	r := startFake(t, agent, "--session-id", sessionID, "--settings", rec.Settings)
	rec.WaitCount(t, "SessionStart", 1, 10*time.Second)
	r.say(t, "hi there")
	sw := agent.WaitForKind(t, "swallowed", 5*time.Second)
	if sw.Text != "hi there" || len(rec.Of("UserPromptSubmit")) != 0 || len(agent.Messages()) != 0 {
		t.Fatalf("swallowed %+v; submits %v", sw, rec.Of("UserPromptSubmit"))
	}
	r.waitScreen(t, "❯ hi there") // the pending text
	r.key(t, "\r")
	ups := rec.WaitCount(t, "UserPromptSubmit", 1, 10*time.Second)
	wantFields(t, "UserPromptSubmit", ups[0], map[string]any{"prompt": "hi there"})
}

func TestFakeAgent_SigtermEndsTheSessionAndAResumeStartsWithSourceResume(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.TurnTime(10*time.Millisecond))
	rec := testkit.RecordHooks(t, t.TempDir())
	r := startFake(t, agent, "--session-id", sessionID, "--settings", rec.Settings, "--", "hello")
	rec.WaitCount(t, "Stop", 1, 10*time.Second)
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	end := rec.WaitCount(t, "SessionEnd", 1, 10*time.Second)[0]
	wantFields(t, "SessionEnd", end, map[string]any{"reason": "other", "session_id": sessionID})
	agent.WaitForKind(t, "sigterm", 5*time.Second)
	before := agent.ClaudeTranscript(r.cwd, sessionID)

	startFakeIn(t, agent, r.cwd, "--resume", sessionID, "--settings", rec.Settings, "--", "go on")
	starts := rec.WaitCount(t, "SessionStart", 2, 10*time.Second)
	wantFields(t, "resumed SessionStart", starts[1], map[string]any{"source": "resume", "session_id": sessionID})
	rec.WaitCount(t, "Stop", 2, 10*time.Second)
	after := agent.ClaudeTranscript(r.cwd, sessionID)
	var lastUUID any
	for _, l := range before {
		if l["uuid"] != nil {
			lastUUID = l["uuid"]
		}
	}
	if lastUUID == nil || len(after) <= len(before) || after[len(before)]["type"] != "user" ||
		after[len(before)]["parentUuid"] != lastUUID {
		t.Fatalf("the resumed conversation does not go on in the same transcript:\nbefore %v\nafter %v", before, after)
	}
}
