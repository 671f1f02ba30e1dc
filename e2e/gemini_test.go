package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// geminiHookEvents are the hooks the test records.
var geminiHookEvents = []string{"SessionStart", "BeforeAgent", "AfterAgent", "Notification", "SessionEnd"}

// TestRealGemini_FreshSayStopResume drives the real Gemini CLI offline
// through the gemini adapter against the fake Gemini API: Prepare trusts
// the cwd (the CLI asks about every untrusted folder), a fresh start under
// the id the-loop chose (--session-id) with a prompt that starts with "-"
// reaches the API, Ready sees the input prompt, the hooks carry that id, a
// say is a turn, and after a stop --resume <id> continues the same
// conversation in the same session file. Its session file and hook
// payloads are the recordings in harness/testdata/gemini.
func TestRealGemini_FreshSayStopResume(t *testing.T) {
	bin := agentBinary(t, "THE_LOOP_GEMINI_BIN", "gemini", harness.GeminiVersion, "gemini", "@google/gemini-cli")
	api := fakeapi.StartGemini(t)
	w := newAgentWorld(t, api, bin)
	// The CLI drops a submit key that follows a paste too closely.
	gem := harness.NewGemini(harness.GeminiOptions{})
	w.tmux = runner.New(runner.Options{Socket: w.socket, ConfigFile: testkit.TmuxConfig, SubmitDelay: gem.SubmitDelay(), LockDir: filepath.Join(t.TempDir(), "locks")})
	geminiDir := filepath.Join(w.home, ".gemini")
	if err := os.MkdirAll(geminiDir, 0o700); err != nil {
		t.Fatal(err)
	}
	recorder := w.hookRecorder()
	hooks := map[string]any{}
	for _, ev := range geminiHookEvents {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": recorder + " " + ev, "timeout": 5000}}}}
	}
	// The authentication choice is the operator's (the CLI asks for it
	// once); the API key and base URL come from the environment.
	settings := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}, "hooks": hooks}
	if err := os.WriteFile(filepath.Join(geminiDir, "settings.json"), mustJSON(t, settings), 0o600); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "GEMINI_API_KEY=the-loop-fake-key", "GOOGLE_GEMINI_BASE_URL="+api.URL)

	gemini := harness.NewGemini(harness.GeminiOptions{TrustEnabled: true, Env: func(string) string { return "" }, Home: w.home})
	if err := gemini.Prepare(w.cwd, nil); err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	const boot = "-- you are the supervisor; say hello"
	argv, err := gemini.FreshArgv(id, nil, boot)
	if err != nil {
		t.Fatal(err)
	}
	w.spawn(argv)
	w.turn("the boot turn at the fake Gemini API", boot)
	snap := w.waitReady("the Gemini CLI's input prompt after the boot turn", gemini.Ready)
	if strings.Contains(strings.ToLower(snap.Screen), "do you trust") {
		t.Fatalf("the folder dialog showed although Prepare trusted %s:\n%s", w.cwd, snap.Screen)
	}
	var start map[string]any
	eventually(t, "the SessionStart hook", func() bool {
		if p := w.payloads("SessionStart"); len(p) > 0 {
			start = p[0]
		}
		return start != nil
	})
	if start["session_id"] != id || start["source"] != "startup" {
		t.Fatalf("SessionStart payload %v; want session_id %s", start, id)
	}

	// A submit key that reaches the CLI before its turn has ended (its
	// AfterAgent hook) is lost: the text stays in the input box.
	eventually(t, "the boot turn's AfterAgent hook", func() bool {
		for _, p := range w.payloads("AfterAgent") {
			if p["prompt_response"] == fakeapi.DefaultAnswer(boot) {
				return true
			}
		}
		return false
	})
	w.say("second message")
	// Now and then the CLI turns the submit key into a newline (see
	// docs/harnesses.md); one more submit key, as a verified say does when
	// no BeforeAgent came, submits the text.
	if !w.turnWithin("second message", submitWait) {
		t.Logf("no turn %v after the say; one more submit key (screen:\n%s)", submitWait, w.screen())
		if _, err := testkit.TmuxRun(w.socket, "send-keys", "-t", "="+agentTarget+":", "Enter"); err != nil {
			t.Fatal(err)
		}
	}
	w.turn("the said text as a turn", "second message")
	eventually(t, "the AfterAgent hook of the said turn", func() bool {
		for _, p := range w.payloads("AfterAgent") {
			if p["prompt_response"] == fakeapi.DefaultAnswer("second message") && p["session_id"] == id {
				return true
			}
		}
		return false
	})
	var path string
	eventually(t, "the session file", func() bool {
		path, err = harness.GeminiSessionPath(geminiDir, w.cwd, id)
		return err == nil && path != ""
	})
	var entries []loop.TranscriptEntry
	eventually(t, "the transcript to hold both turns", func() bool {
		entries, err = harness.ReadGeminiTranscript(path, 10)
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
	resumeArgv, err := gemini.ResumeArgv(id, nil, "--back after the stop")
	if err != nil {
		t.Fatal(err)
	}
	w.spawn(resumeArgv)
	w.turn("the resumed turn", "--back after the stop")
	w.waitReady("the Gemini CLI's input prompt after the resume", gemini.Ready)
	eventually(t, "the resume's SessionStart hook", func() bool {
		for _, p := range w.payloads("SessionStart") {
			if p["source"] == "resume" && p["session_id"] == id {
				return true
			}
		}
		return false
	})
	eventually(t, "the resumed turn's answer in the same session file", func() bool {
		entries, err = harness.ReadGeminiTranscript(path, 6)
		return err == nil && len(entries) == 6 && entries[0].Text == boot && entries[4].Text == "--back after the stop" &&
			entries[5].Text == fakeapi.DefaultAnswer("--back after the stop")
	})
	if again, _ := harness.GeminiSessionPath(geminiDir, w.cwd, id); again != path {
		t.Fatalf("the resume wrote %q, not the conversation's file %q", again, path)
	}
	w.stop()

	paths := map[string]string{w.home: "/HOME", w.cwd: "/CWD", w.hooks: "/HOOKS"}
	session := scrubFile(t, path, paths)
	required := []string{"meta", "user", "gemini", "$set"}
	payloads := map[string]map[string]any{}
	for _, ev := range []string{"SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"} {
		p := w.payloads(ev)
		if len(p) == 0 {
			t.Fatalf("no %s hook was recorded", ev)
		}
		payloads[ev] = p[0]
	}
	if recording() {
		writeRecording(t, "gemini", "session.jsonl", session)
		for ev, p := range payloads {
			writeRecording(t, "gemini", "hooks/"+ev+".json", append(scrub(mustJSON(t, p), paths), '\n'))
		}
		return
	}
	checkShapes(t, "gemini", "session.jsonl", session, required)
	for ev, p := range payloads {
		checkPayloadKeys(t, "gemini", fmt.Sprintf("hooks/%s.json", ev), p)
	}
}
