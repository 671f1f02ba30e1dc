package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// The real Codex and Gemini CLIs driven by the-loop itself, offline: the
// hooks the-loop declares for them (Codex's -c overrides with the hook-trust
// bypass; one entry per event in the Gemini CLI's user settings, beside the
// operator's) reach the-loop, and the operator's own hooks still run; Codex's id is captured before
// the session is recorded running, a say is submitted (Gemini: after its
// submit delay, with one more submit key if it still lost it) and --wait
// prints the fake API's answer, the transcript is read from the CLI's
// session file, and a start after a stop resumes the same conversation.

// loopAgentConfig is a standing session of %HARNESS% run by the binary at
// %BIN%.
const loopAgentConfig = `
state: {root: .the-loop}
service: {port: %PORT%, socket: %SERVICE_SOCKET%}
routing:
  harnessBinaries: {%HARNESS%: %BIN%}
  tmux: {socketName: %SOCKET%, resumeProbeSeconds: 1}
standingSessions:
  enabled: true
  sessions:
    - name: supervisor
      harness: %HARNESS%
      cwd: %CWD%
      prompt: ` + bootBrief + `
`

// loopAgentWorld is a world whose session runs the real CLI bin of
// harnessName under home, with env added to the-loop's environment.
func loopAgentWorld(t *testing.T, api *fakeapi.Server, harnessName, bin, home, cwd string, env ...string) *world {
	t.Helper()
	binary(t)
	w := &world{t: t, dir: t.TempDir(), cwd: cwd, api: api, socket: testkit.Tmux(t)}
	w.cfg = filepath.Join(w.dir, "cli-config.yaml")
	yaml := strings.NewReplacer("%SOCKET%", w.socket, "%CWD%", w.cwd, "%PORT%", fmt.Sprint(freePort(t)), "%SERVICE_SOCKET%", filepath.Join(testkit.ShortDir(t), "service.sock"),
		"%HARNESS%", harnessName, "%BIN%", bin).Replace(loopAgentConfig)
	if err := os.WriteFile(w.cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	w.env = append(filterEnv(os.Environ(), "TMUX", "TMUX_PANE", "HOME", "CODEX_HOME", "GEMINI_CLI_HOME", "THE_LOOP_CLI_CONFIG",
		"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"),
		"HOME="+home, "LANG=C.UTF-8", "GORACE=atexit_sleep_ms=0")
	w.env = append(w.env, env...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen of %s at the end:\n%s", target, w.screen())
			if r := w.run("events", "--format", "jsonl", "--limit", "0"); r.code == 0 {
				t.Logf("events:\n%s", r.stdout)
			}
			for i, r := range api.Requests() {
				t.Logf("api request %d: %s %s?%s session=%q user=%.200q", i, r.Method, r.Path, r.Query, r.SessionID, r.LastUserText)
			}
		}
		w.run("stop")
		if pid := w.servicePID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return w
}

// startSayWaitResume is the run every harness with hooks passes; it
// returns the conversation id.
func startSayWaitResume(t *testing.T, w *world, check func(id string)) {
	t.Helper()
	w.api.SetAnswer(func(text string) string {
		if strings.Contains(text, "e2e-wait") {
			return "the answer is 42"
		}
		return fakeapi.DefaultAnswer(text)
	})
	w.must("standing", "start", session)
	row := w.waitRow("the boot turn's answer heard", func(r loop.StandingRow) bool {
		return r.Activity == loop.ActivityIdle && r.LastAnswerAt != ""
	})
	if row.Status != loop.StatusRunning || row.HarnessSessionID == "" {
		t.Fatalf("row after the start: %+v", row)
	}
	id := row.HarnessSessionID
	if check != nil {
		check(id)
	}
	r := w.must("standing", "say", session, "--text", "e2e-wait: what is the answer?", "--actor", "e2e", "--wait", "--timeout", "60s")
	if strings.TrimSpace(r.stdout) != "the answer is 42" || !strings.Contains(r.stderr, "submitted to "+target) {
		t.Fatalf("say --wait: %s", r)
	}
	tr := w.must("standing", "transcript", session, "--format", "json")
	var es []loop.TranscriptEntry
	if err := json.Unmarshal([]byte(tr.stdout), &es); err != nil {
		t.Fatalf("transcript: %v\n%s", err, tr)
	}
	if len(es) != 4 || !strings.Contains(es[0].Text, bootBrief) || !strings.Contains(es[2].Text, "e2e-wait: what is the answer?") || es[3].Text != "the answer is 42" {
		t.Fatalf("transcript %+v", es)
	}

	answered := w.row().LastAnswerAt
	w.must("standing", "stop", session)
	w.must("standing", "start", session)
	// The resume notice is a turn of its own: its answer comes first.
	w.waitRow("the resumed session idle under the same id, the notice answered", func(r loop.StandingRow) bool {
		return r.Status == loop.StatusRunning && r.HarnessSessionID == id && r.Activity == loop.ActivityIdle && r.LastAnswerAt != answered
	})
	r = w.must("standing", "say", session, "--text", "e2e-wait: again?", "--actor", "e2e", "--wait", "--timeout", "60s")
	if strings.TrimSpace(r.stdout) != "the answer is 42" {
		t.Fatalf("say --wait after the resume: %s", r)
	}
}

// sayWaitIntoABusyAgent: a say --wait delivered while a turn runs (the
// fake API holds it) gets its own answer, not the running turn's.
func sayWaitIntoABusyAgent(t *testing.T, w *world) {
	t.Helper()
	w.api.SetAnswer(func(text string) string {
		switch {
		case strings.Contains(text, "e2e-busy-first"):
			return "the first answer"
		case strings.Contains(text, "e2e-busy-second"):
			return "the second answer is 7"
		}
		return fakeapi.DefaultAnswer(text)
	})
	n, said := len(w.api.Requests()), len(w.events("standing.said"))
	w.api.Hold(0)
	defer w.api.Release()
	w.must("standing", "say", session, "--text", "e2e-busy-first", "--actor", "e2e")
	eventually(t, "the first say's held turn", func() bool { return len(w.api.Requests()) > n })
	w.waitRow("the agent working", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWorking })
	done := make(chan result, 1)
	go func() {
		done <- w.run("standing", "say", session, "--text", "e2e-busy-second: and now?", "--actor", "e2e", "--wait", "--timeout", "90s")
	}()
	eventually(t, "the second say delivered", func() bool { return len(w.events("standing.said")) >= said+2 })
	w.api.Release()
	r := <-done
	if r.code != 0 || strings.TrimSpace(r.stdout) != "the second answer is 7" || !strings.Contains(r.stderr, "queued in "+target) {
		t.Fatalf("say --wait into a busy agent: %s", r)
	}
}

func TestRealCodex_ThroughTheLoop(t *testing.T) {
	bin := agentBinary(t, "THE_LOOP_CODEX_BIN", "codex", harness.CodexVersion, "codex", "@openai/codex")
	api := fakeapi.StartOpenAI(t)
	home, cwd := t.TempDir(), t.TempDir()
	if out, err := exec.Command("git", "init", "-q", cwd).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	// The operator's own config: the fake provider, no hooks enabled; and
	// a hook of their own in hooks.json, which must run beside the-loop's.
	cfg := strings.NewReplacer("%URL%", api.URL).Replace(`model = "gpt-fake"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "%URL%/v1"
env_key = "THE_LOOP_FAKE_OPENAI_KEY"
wire_api = "responses"
`)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "operator-hook")
	spy := []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "cat >> " + mark + "; echo >> " + mark, "timeout": 5}}}}
	hooks := map[string]any{"hooks": map[string]any{"SessionStart": spy, "UserPromptSubmit": spy, "Stop": spy}}
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(mark)
			t.Logf("the operator's hooks saw:\n%s", data)
		}
	})
	if err := os.WriteFile(filepath.Join(codexHome, "hooks.json"), mustJSON(t, hooks), 0o600); err != nil {
		t.Fatal(err)
	}
	w := loopAgentWorld(t, api, "codex", bin, home, cwd, "THE_LOOP_FAKE_OPENAI_KEY=sk-the-loop-fake")
	startSayWaitResume(t, w, func(id string) {
		if strings.Contains(strings.ToLower(w.screen()), "hooks need review") {
			t.Fatalf("Codex asks to review hooks:\n%s", w.screen())
		}
		path, err := harness.CodexSessionPath(codexHome, id)
		if err != nil || path == "" {
			t.Fatalf("the captured id %s names no session file: %q %v", id, path, err)
		}
		eventually(t, "the operator's own SessionStart hook", func() bool {
			data, _ := os.ReadFile(mark)
			return strings.Contains(string(data), id)
		})
	})
	sayWaitIntoABusyAgent(t, w)
}

func TestRealGemini_ThroughTheLoop(t *testing.T) {
	bin := agentBinary(t, "THE_LOOP_GEMINI_BIN", "gemini", harness.GeminiVersion, "gemini", "@google/gemini-cli")
	api := fakeapi.StartGemini(t)
	home, cwd := t.TempDir(), t.TempDir()
	geminiDir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(geminiDir, 0o700); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "operator-hook")
	settings := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"hooks": map[string]any{"SessionStart": []any{map[string]any{"hooks": []any{
			map[string]any{"type": "command", "command": "cat >> " + mark + "; echo '{}'", "timeout": 5000}}}}}}
	if err := os.WriteFile(filepath.Join(geminiDir, "settings.json"), mustJSON(t, settings), 0o600); err != nil {
		t.Fatal(err)
	}
	w := loopAgentWorld(t, api, "gemini", bin, home, cwd, "GEMINI_API_KEY=the-loop-fake-key", "GOOGLE_GEMINI_BASE_URL="+api.URL, "TERM=screen")
	startSayWaitResume(t, w, func(id string) {
		eventually(t, "the operator's own SessionStart hook", func() bool {
			data, _ := os.ReadFile(mark)
			return strings.Contains(string(data), id)
		})
	})
}
