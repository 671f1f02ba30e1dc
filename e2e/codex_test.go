package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
)

// codexConfig points the real Codex at the fake Responses API (a model
// provider of its own, its key from an environment variable), turns its
// hooks on and names the notify program. No trust is written here: the
// adapter's Prepare does that.
const codexConfig = `model = "gpt-fake"
model_provider = "fake"
notify = ["%RECORDER%", "notify"]
check_for_update_on_startup = false

[features]
codex_hooks = true

[model_providers.fake]
name = "fake"
base_url = "%URL%/v1"
env_key = "THE_LOOP_FAKE_OPENAI_KEY"
wire_api = "responses"
`

// codexHookEvents are the hooks the test records.
var codexHookEvents = []string{"SessionStart", "UserPromptSubmit", "Stop", "PostToolUse", "PermissionRequest"}

// TestRealCodex_FreshSayStopResume drives the real Codex CLI offline
// through the codex adapter: Prepare trusts the cwd (a git repository, for
// which Codex asks otherwise), a fresh start with a prompt reaches the fake
// API, Ready sees the composer, SessionIDOf captures the id Codex chose
// from the pane's own process tree (and it is the id of the hooks and of
// the session file), a say is a turn, and after a stop ResumeArgv
// continues the same conversation. Its session file and hook payloads are
// the recordings in harness/testdata/codex.
func TestRealCodex_FreshSayStopResume(t *testing.T) {
	bin := agentBinary(t, "THE_LOOP_CODEX_BIN", "codex", harness.CodexVersion, "codex", "@openai/codex")
	api := fakeapi.StartOpenAI(t)
	w := newAgentWorld(t, api, bin)
	if out, err := exec.Command("git", "init", "-q", w.cwd).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	codexHome := filepath.Join(w.home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	recorder := w.hookRecorder()
	cfg := strings.NewReplacer("%RECORDER%", recorder, "%URL%", api.URL).Replace(codexConfig)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	hooks := map[string]any{}
	for _, ev := range codexHookEvents {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": recorder + " " + ev, "timeout": 5}}}}
	}
	if err := os.WriteFile(filepath.Join(codexHome, "hooks.json"), mustJSON(t, map[string]any{"hooks": hooks}), 0o600); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "THE_LOOP_FAKE_OPENAI_KEY=sk-the-loop-fake")

	getenv := func(k string) string { return "" }
	codex := harness.NewCodex(harness.CodexOptions{TrustEnabled: true, Env: getenv, Home: w.home})
	if err := codex.Prepare(w.cwd, nil); err != nil {
		t.Fatal(err)
	}
	// Hook trust is Codex's own review; a test vets its recorder itself.
	args := []string{"--dangerously-bypass-hook-trust"}

	const boot = "-- you are the supervisor; say hello"
	argv, err := codex.FreshArgv("ignored-by-codex", args, boot)
	if err != nil {
		t.Fatal(err)
	}
	w.spawn(argv)
	w.turn("the boot turn at the fake Responses API", boot)
	snap := w.waitReady("Codex's composer after the boot turn", codex.Ready)
	if strings.Contains(strings.ToLower(snap.Screen), "trust this folder") {
		t.Fatalf("the folder dialog showed although Prepare trusted %s:\n%s", w.cwd, snap.Screen)
	}

	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	id, err := harness.WaitSessionID(ctx, codex, w.panePID(), 50*time.Millisecond)
	if err != nil {
		t.Fatalf("the conversation id from the pane's process tree: %v", err)
	}
	if !uuidLike.MatchString(id) {
		t.Fatalf("captured id %q is not a UUID", id)
	}
	var start map[string]any
	eventually(t, "the SessionStart hook", func() bool {
		p := w.payloads("SessionStart")
		if len(p) > 0 {
			start = p[0]
		}
		return start != nil
	})
	if start["session_id"] != id || start["source"] != "startup" {
		t.Fatalf("SessionStart payload %v; captured id %s", start, id)
	}

	w.say("second message")
	w.turn("the said text as a turn", "second message")
	eventually(t, "the Stop hook of the said turn", func() bool {
		for _, p := range w.payloads("Stop") {
			if p["last_assistant_message"] == fakeapi.DefaultAnswer("second message") {
				return true
			}
		}
		return false
	})
	path, err := harness.CodexSessionPath(codexHome, id)
	if err != nil || path == "" {
		t.Fatalf("CodexSessionPath(%s) = %q, %v", id, path, err)
	}
	var entries []loop.TranscriptEntry
	eventually(t, "the transcript to hold both turns", func() bool {
		entries, err = harness.ReadCodexTranscript(path, 10)
		return err == nil && len(entries) == 4
	})
	want := []string{boot, fakeapi.DefaultAnswer(boot), "second message", fakeapi.DefaultAnswer("second message")}
	for i, e := range entries {
		if e.Text != want[i] {
			t.Fatalf("transcript entry %d = %q, want %q (all: %+v)", i, e.Text, want[i], entries)
		}
	}
	if entries[1].Usage == nil || entries[1].Usage.Output == 0 {
		t.Fatalf("the boot answer has no token usage: %+v", entries[1])
	}

	w.stop()
	resumeArgv, err := codex.ResumeArgv(id, args, "--back after the stop")
	if err != nil {
		t.Fatal(err)
	}
	w.spawn(resumeArgv)
	r := w.turn("the resumed turn", "--back after the stop")
	w.waitReady("Codex's composer after the resume", codex.Ready)
	if r.SessionID != "" && r.SessionID != id {
		t.Fatalf("the resumed turn carries session %q, want %q", r.SessionID, id)
	}
	eventually(t, "the resumed process to hold the same conversation", func() bool {
		got, ok, err := codex.SessionIDOf(w.panePID())
		return err == nil && ok && got == id
	})
	eventually(t, "the resume's SessionStart hook", func() bool {
		for _, p := range w.payloads("SessionStart") {
			if p["source"] == "resume" && p["session_id"] == id {
				return true
			}
		}
		return false
	})
	eventually(t, "the resumed turn's answer in the same session file", func() bool {
		entries, err = harness.ReadCodexTranscript(path, 2)
		return err == nil && len(entries) == 2 && entries[0].Text == "--back after the stop" &&
			entries[1].Text == fakeapi.DefaultAnswer("--back after the stop")
	})
	w.stop()

	// The recordings: the session file, one payload of each hook seen and
	// one notify payload of the main conversation.
	paths := map[string]string{w.home: "/HOME", w.cwd: "/CWD", w.hooks: "/HOOKS"}
	session := scrubFile(t, path, paths)
	required := []string{"session_meta", "response_item/message", "event_msg/token_count", "event_msg/task_complete"}
	payloads := map[string]map[string]any{}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop"} {
		p := w.payloads(ev)
		if len(p) == 0 {
			t.Fatalf("no %s hook was recorded", ev)
		}
		payloads[ev] = p[0]
	}
	for _, p := range w.payloads("notify") {
		if p["thread-id"] == id {
			payloads["notify"] = p
			break
		}
	}
	if payloads["notify"] == nil {
		t.Fatalf("no notify payload for conversation %s", id)
	}
	if recording() {
		writeRecording(t, "codex", "session.jsonl", session)
		for ev, p := range payloads {
			writeRecording(t, "codex", "hooks/"+ev+".json", append(scrub(mustJSON(t, p), paths), '\n'))
		}
		return
	}
	checkShapes(t, "codex", "session.jsonl", session, required)
	for ev, p := range payloads {
		checkPayloadKeys(t, "codex", fmt.Sprintf("hooks/%s.json", ev), p)
	}
}
