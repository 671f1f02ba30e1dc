package testkit_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// recordings is harness/testdata/<cli>, what the real CLIs wrote
// (e2e/codex_test.go, e2e/gemini_test.go).
func recordings(t *testing.T, cli string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "harness", "testdata", cli)
}

// jsonKind is a JSON value's type name.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// kinds maps an object's keys to their JSON types.
func kinds(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = jsonKind(v)
	}
	return out
}

// sameHookShape fails unless the fake's payload has exactly the recorded
// payload's keys, each of the same JSON type.
func sameHookShape(t *testing.T, cli, event string, fake map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordings(t, cli), "hooks", event+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	want, got := kinds(rec), kinds(fake)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Errorf("%s %s payload: the fake sends %v, the real CLI sent %v", cli, event, got, want)
	}
}

// lineShape is a session-file line's kind: its type, and its payload's
// type for Codex.
func lineShape(l map[string]any) string {
	s, _ := l["type"].(string)
	if p, ok := l["payload"].(map[string]any); ok {
		if pt, ok := p["type"].(string); ok {
			s += "/" + pt
		}
		if role, ok := p["role"].(string); ok {
			s += "/" + role
		}
	}
	if _, ok := l["$set"]; ok {
		s = "$set"
	}
	if _, ok := l["sessionId"]; ok && s == "" {
		s = "metadata"
	}
	return s
}

// readLines decodes a JSONL file.
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: a line that is not JSON: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

// sameLineShapes fails unless every line shape of the fake's session file
// was recorded, with the top-level keys of the recording, and every key of
// the fake's payload (Codex) is a recorded key of the same JSON type; and
// the shapes in need are in both.
func sameLineShapes(t *testing.T, cli, fakePath string, need []string) {
	t.Helper()
	recorded := map[string]map[string]any{}
	for _, l := range readLines(t, filepath.Join(recordings(t, cli), "session.jsonl")) {
		if _, seen := recorded[lineShape(l)]; !seen {
			recorded[lineShape(l)] = l
		}
	}
	fake := map[string]bool{}
	for _, l := range readLines(t, fakePath) {
		shape := lineShape(l)
		fake[shape] = true
		rec, ok := recorded[shape]
		if !ok {
			t.Errorf("%s: the fake writes a %q line the real CLI did not (%v)", cli, shape, l)
			continue
		}
		if shape == "$set" {
			continue // its keys vary in the real file too
		}
		rk, fk := kinds(rec), kinds(l)
		if cli == "gemini" { // an answer's keys are the recording's; a user line has no model
			for k, v := range fk {
				if rk[k] != v {
					t.Errorf("%s %q line: key %s is %s, recorded %q", cli, shape, k, v, rk[k])
				}
			}
			continue
		}
		keys := func(m map[string]string) string {
			var s []string
			for k := range m {
				s = append(s, k)
			}
			sort.Strings(s)
			return strings.Join(s, ",")
		}
		if keys(rk) != keys(fk) {
			t.Errorf("%s %q line: the fake's keys %s, recorded %s", cli, shape, keys(fk), keys(rk))
		}
		rp, _ := rec["payload"].(map[string]any)
		fp, _ := l["payload"].(map[string]any)
		for k, v := range kinds(fp) {
			if kinds(rp)[k] != v {
				t.Errorf("%s %q payload key %s is %s, recorded %q", cli, shape, k, v, kinds(rp)[k])
			}
		}
	}
	for _, s := range need {
		if !fake[s] || recorded[s] == nil {
			t.Errorf("%s line shape %q: written by the fake %v, recorded %v", cli, s, fake[s], recorded[s] != nil)
		}
	}
}

// serverGone waits until the tmux server on socket has exited, as it does
// with its last session: a new-session sent while it is still going fails
// ("server exited unexpectedly").
func serverGone(t *testing.T, socket string) {
	t.Helper()
	testkit.Eventually(t, func() bool {
		_, err := testkit.TmuxRun(socket, "list-sessions")
		return err != nil && (strings.Contains(err.Error(), "no server running") || strings.Contains(err.Error(), "error connecting"))
	}, 10*time.Second, "the tmux server on %s did not exit with its last session", socket)
}

// pasteSubmit pastes text into target and presses Enter after delay.
func pasteSubmit(t *testing.T, socket, target, text string, delay time.Duration) {
	t.Helper()
	if _, err := testkit.TmuxRun(socket, "set-buffer", "-b", "c", text); err != nil {
		t.Fatal(err)
	}
	if _, err := testkit.TmuxRun(socket, "paste-buffer", "-p", "-d", "-b", "c", "-t", target); err != nil {
		t.Fatal(err)
	}
	time.Sleep(delay) // the gap between paste and key is the stimulus: the CLIs treat a quick one differently
	if _, err := testkit.TmuxRun(socket, "send-keys", "-t", target, "Enter"); err != nil {
		t.Fatal(err)
	}
}

// The fake's Codex contract against the real Codex's recordings: its hooks
// (declared with -c, run only with the hook-trust bypass) have the
// recorded payload keys and types, its id shows only once the first turn
// holds the rollout file open (SessionIDOf), its session file has the
// recorded line shapes and reads back with ReadCodexTranscript, and a
// resume continues the same file.
func TestFakeAgent_CodexContractMatchesTheRecordings(t *testing.T) {
	socket := testkit.Tmux(t)
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	dir := t.TempDir()
	log := filepath.Join(dir, "hooks.jsonl")
	cmd := "cat >> " + log + " && echo >> " + log
	var argv []string
	argv = append(argv, "-c", "features.codex_hooks=true")
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop"} {
		argv = append(argv, "-c", fmt.Sprintf(`hooks.%s=[{hooks=[{type="command",command=%q,timeout=5}]}]`, ev, cmd))
	}
	cwd := t.TempDir()
	const target = "loop-codex"
	codex := harness.NewCodex(harness.CodexOptions{Env: func(k string) string {
		if k == "CODEX_HOME" {
			return agent.CodexHome()
		}
		return ""
	}})
	screen := func() string {
		out, _ := testkit.TmuxRun(socket, "capture-pane", "-p", "-t", target)
		return out
	}
	pid := func() int {
		out, err := testkit.TmuxRun(socket, "display-message", "-p", "-t", target, "#{pane_pid}")
		if err != nil {
			t.Fatal(err)
		}
		var n int
		fmt.Sscan(strings.TrimSpace(out), &n)
		return n
	}
	payloads := func(event string) []map[string]any {
		data, _ := os.ReadFile(log)
		var out []map[string]any
		for _, line := range strings.Split(string(data), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["hook_event_name"] == event {
				out = append(out, m)
			}
		}
		return out
	}

	// Without the bypass Codex stops on its hook review.
	fresh, _ := codex.FreshArgv("", argv, "")
	if _, err := testkit.TmuxRun(socket, append([]string{"new-session", "-d", "-s", target, "-x", "120", "-y", "40", "-c", cwd,
		agent.CodexPath()}, fresh...)...); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() bool { return strings.Contains(screen(), "Hooks need review") }, 10*time.Second, "no hook review:\n%s", screen())
	if codex.Ready(loop.PaneSnapshot{Screen: screen()}) {
		t.Fatalf("Codex's readiness check takes the hook review for the composer:\n%s", screen())
	}
	if _, err := testkit.TmuxRun(socket, "kill-session", "-t", target); err != nil {
		t.Fatal(err)
	}
	serverGone(t, socket)

	argv = append(argv, "--dangerously-bypass-hook-trust")
	fresh, _ = codex.FreshArgv("", argv, "-- first")
	if _, err := testkit.TmuxRun(socket, append([]string{"new-session", "-d", "-s", target, "-x", "120", "-y", "40", "-c", cwd,
		agent.CodexPath()}, fresh...)...); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() bool { return len(payloads("Stop")) == 1 }, 10*time.Second, "no Stop; log %+v", agent.Log())
	testkit.Eventually(t, func() bool { return codex.Ready(loop.PaneSnapshot{Screen: screen()}) }, 5*time.Second, "not ready:\n%s", screen())
	id, ok, err := codex.SessionIDOf(pid())
	if err != nil || !ok {
		t.Fatalf("SessionIDOf: %q %v %v", id, ok, err)
	}
	start := payloads("SessionStart")[0]
	if start["session_id"] != id || start["source"] != "startup" || payloads("Stop")[0]["last_assistant_message"] != "fake answer to: -- first" {
		t.Fatalf("id %s; SessionStart %v; Stop %v", id, start, payloads("Stop")[0])
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop"} {
		sameHookShape(t, "codex", ev, payloads(ev)[0])
	}
	path, err := harness.CodexSessionPath(agent.CodexHome(), id)
	if err != nil || path == "" {
		t.Fatalf("CodexSessionPath: %q %v", path, err)
	}
	sameLineShapes(t, "codex", path, []string{"session_meta", "response_item/message/user", "response_item/message/assistant", "event_msg/token_count", "event_msg/task_complete"})
	entries, err := harness.ReadCodexTranscript(path, 10)
	if err != nil || len(entries) != 2 || entries[0].Text != "-- first" || entries[1].Usage == nil {
		t.Fatalf("transcript %+v %v", entries, err)
	}

	// A stop gives no SessionEnd; a resume continues the same file.
	if _, err := testkit.TmuxRun(socket, "kill-session", "-t", target); err != nil {
		t.Fatal(err)
	}
	serverGone(t, socket)
	resume, _ := codex.ResumeArgv(id, argv, "again")
	if _, err := testkit.TmuxRun(socket, append([]string{"new-session", "-d", "-s", target, "-x", "120", "-y", "40", "-c", cwd,
		agent.CodexPath()}, resume...)...); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() bool { return len(payloads("Stop")) == 2 }, 10*time.Second, "no resumed Stop; log %+v", agent.Log())
	if s := payloads("SessionStart"); len(s) != 2 || s[1]["source"] != "resume" || s[1]["session_id"] != id {
		t.Fatalf("SessionStarts %v", s)
	}
	if entries, _ := harness.ReadCodexTranscript(path, 10); len(entries) != 4 || entries[2].Text != "again" {
		t.Fatalf("resumed transcript %+v", entries)
	}
	bad, _ := codex.ResumeArgv(uuid.NewString(), argv, "")
	if _, err := testkit.TmuxRun(socket, append([]string{"new-session", "-d", "-s", "loop-codex-bad", "-c", cwd,
		agent.CodexPath()}, bad...)...); err != nil {
		t.Fatal(err)
	}
	agent.WaitForKind(t, "resume_failed", 10*time.Second)
}

// The fake's Gemini CLI contract against the real CLI's recordings: the
// hooks of its system settings file have the recorded payload keys and
// types (BeforeAgent, AfterAgent with prompt_response), the session file
// is where GeminiSessionPath looks with the recorded line shapes, a submit
// key right after a paste is taken as a newline, and --resume continues
// the same file.
func TestFakeAgent_GeminiContractMatchesTheRecordings(t *testing.T) {
	socket := testkit.Tmux(t)
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.Env("FAKE_AGENT_GEMINI_DROP_MS", "150"))
	dir := t.TempDir()
	log := filepath.Join(dir, "hooks.jsonl")
	cmd := "cat >> " + log + " && echo >> " + log + " && echo '{}'"
	hooks := map[string]any{}
	for _, ev := range []string{"SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"} {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": 5000}}}}
	}
	settings := filepath.Join(dir, "system.json")
	data, _ := json.Marshal(map[string]any{"hooks": hooks})
	if err := os.WriteFile(settings, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	const target = "loop-gemini"
	gemini := harness.NewGemini(harness.GeminiOptions{})
	screen := func() string {
		out, _ := testkit.TmuxRun(socket, "capture-pane", "-p", "-t", target)
		return out
	}
	payloads := func(event string) []map[string]any {
		data, _ := os.ReadFile(log)
		var out []map[string]any
		for _, line := range strings.Split(string(data), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["hook_event_name"] == event {
				out = append(out, m)
			}
		}
		return out
	}
	spawn := func(argv []string) {
		t.Helper()
		full := append([]string{"env", "GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + settings, agent.GeminiPath()}, argv...)
		if _, err := testkit.TmuxRun(socket, append([]string{"new-session", "-d", "-s", target, "-x", "120", "-y", "40", "-c", cwd}, full...)...); err != nil {
			t.Fatal(err)
		}
	}
	id := uuid.NewString()
	fresh, _ := gemini.FreshArgv(id, nil, "-- first")
	spawn(fresh)
	testkit.Eventually(t, func() bool { return len(payloads("AfterAgent")) == 1 }, 10*time.Second, "no AfterAgent; log %+v", agent.Log())
	testkit.Eventually(t, func() bool { return gemini.Ready(loop.PaneSnapshot{Screen: screen()}) }, 5*time.Second, "not ready:\n%s", screen())
	if a := payloads("AfterAgent")[0]; a["session_id"] != id || a["prompt_response"] != "fake answer to: -- first" || a["prompt"] != "-- first" {
		t.Fatalf("AfterAgent %v", a)
	}
	for _, h := range agent.Entries("hook") {
		if strings.TrimSpace(h.Text) != "{}" || h.Error != "" {
			t.Fatalf("hook run %+v: the CLI wants JSON on stdout", h)
		}
	}

	// A submit key right after the paste is a newline; the next one submits.
	pasteSubmit(t, socket, target, "second", 0)
	agent.WaitForKind(t, "swallowed", 5*time.Second)
	if len(payloads("BeforeAgent")) != 1 {
		t.Fatalf("a submit key right after a paste was taken: %v", payloads("BeforeAgent"))
	}
	time.Sleep(200 * time.Millisecond) // past the window in which the CLI drops a submit key
	if _, err := testkit.TmuxRun(socket, "send-keys", "-t", target, "Enter"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() bool { return len(payloads("AfterAgent")) == 2 }, 10*time.Second, "no second AfterAgent")
	if b := payloads("BeforeAgent")[1]; b["prompt"] != "second" {
		t.Fatalf("second BeforeAgent %v", b)
	}

	// A stop (SIGTERM) gives SessionEnd reason exit.
	start := agent.Entries("start")[0]
	if err := syscall.Kill(start.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() bool { return len(payloads("SessionEnd")) == 1 }, 10*time.Second, "no SessionEnd; log %+v", agent.Log())
	if e := payloads("SessionEnd")[0]; e["reason"] != "exit" {
		t.Fatalf("SessionEnd %v", e)
	}
	_, _ = testkit.TmuxRun(socket, "kill-session", "-t", target)
	for _, ev := range []string{"SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"} {
		sameHookShape(t, "gemini", ev, payloads(ev)[0])
	}
	gdir := filepath.Join(agent.GeminiHome(), ".gemini")
	path, err := harness.GeminiSessionPath(gdir, cwd, id)
	if err != nil || path == "" {
		t.Fatalf("GeminiSessionPath: %q %v", path, err)
	}
	sameLineShapes(t, "gemini", path, []string{"metadata", "user", "gemini", "$set"})
	entries, err := harness.ReadGeminiTranscript(path, 10)
	if err != nil || len(entries) != 4 || entries[0].Text != "-- first" || entries[3].Text != "fake answer to: second" || entries[1].Usage == nil {
		t.Fatalf("transcript %+v %v", entries, err)
	}

	resume, _ := gemini.ResumeArgv(id, nil, "again")
	spawn(resume)
	testkit.Eventually(t, func() bool { return len(payloads("AfterAgent")) == 3 }, 10*time.Second, "no resumed AfterAgent; log %+v", agent.Log())
	if s := payloads("SessionStart"); len(s) != 2 || s[1]["source"] != "resume" || s[1]["session_id"] != id {
		t.Fatalf("SessionStarts %v", s)
	}
	if entries, _ := harness.ReadGeminiTranscript(path, 10); len(entries) != 6 || entries[4].Text != "again" {
		t.Fatalf("resumed transcript %+v", entries)
	}
}
