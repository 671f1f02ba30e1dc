package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// TestRealGemini_ApprovalHooks drives the real Gemini CLI offline
// (docs/harnesses.md, "Approvals"): in one turn the fake Gemini API asks
// twice for run_shell_command. A BeforeTool hook's deny in the CLI's own
// format ({"decision":"deny","reason":R}) blocks the first call before any
// dialog, and the model reads "Tool execution blocked: R". The second
// call's BeforeTool hook answers in Claude Code's format (what the-loop's
// hook program prints: loop.PreToolUseAnswer) and its ToolPermission
// Notification hook with Claude's PermissionRequest allow: the CLI heeds
// neither, draws its own dialog, and the command does not run. So no hook
// of the Gemini CLI answers its permission dialog, and the-loop's answers
// are not the CLI's format.
func TestRealGemini_ApprovalHooks(t *testing.T) {
	bin := agentBinary(t, "THE_LOOP_GEMINI_BIN", "gemini", harness.GeminiVersion, "gemini", "@google/gemini-cli")
	api := fakeapi.StartGeminiWithTools(t)
	w := newAgentWorld(t, api, bin)
	gemini := harness.NewGemini(harness.GeminiOptions{TrustEnabled: true, Env: func(string) string { return "" }, Home: w.home})
	w.tmux = runner.New(runner.Options{Socket: w.socket, ConfigFile: testkit.TmuxConfig, SubmitDelay: gemini.SubmitDelay(), LockDir: filepath.Join(t.TempDir(), "locks")})
	geminiDir := filepath.Join(w.home, ".gemini")
	if err := os.MkdirAll(geminiDir, 0o700); err != nil {
		t.Fatal(err)
	}
	hook := w.answeringHook("rule-block", "loop-format")
	hooks := map[string]any{}
	for _, ev := range []string{"SessionStart", "BeforeTool", "AfterTool", "Notification", "AfterAgent"} {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": hook + " " + ev, "timeout": 30000}}}}
	}
	settings := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}, "hooks": hooks}
	if err := os.WriteFile(filepath.Join(geminiDir, "settings.json"), mustJSON(t, settings), 0o600); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "GEMINI_API_KEY=the-loop-fake-key", "GOOGLE_GEMINI_BASE_URL="+api.URL)
	if err := gemini.Prepare(w.cwd, nil); err != nil {
		t.Fatal(err)
	}
	w.answer("BeforeTool", "rule-block", mustJSON(t, map[string]string{"decision": "deny", "reason": "approval rule 1 of the-loop"}))
	w.answer("BeforeTool", "loop-format", loop.PreToolUseAnswer(loop.RuleDeny, "approval rule 2 of the-loop"))
	w.answer("Notification", "loop-format", loop.PermissionRequestAnswer(loop.ApprovalAnswer{Behavior: loop.DecisionAllow}))

	marker := func(word string) string { return filepath.Join(filepath.Dir(w.cwd), filepath.Base(w.cwd)+"-"+word) }
	call := func(word string) string {
		input, _ := json.Marshal(map[string]string{"command": "touch " + marker(word), "description": "touch " + word})
		return fakeapi.ToolUse("run_shell_command", string(input))
	}
	var mu sync.Mutex
	results := 0
	api.SetAnswer(func(u string) string {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasPrefix(u, "run them"):
			return call("rule-block")
		case u == "": // a tool's output: the next call, then the end
			if results++; results == 1 {
				return call("loop-format")
			}
		}
		return "done: " + u
	})
	id := uuid.NewString()
	argv, err := gemini.FreshArgv(id, nil, "run them")
	if err != nil {
		t.Fatal(err)
	}
	w.spawn(argv)

	w.toolResult("the call a BeforeTool deny blocked", "Tool execution blocked: approval rule 1 of the-loop")
	var before map[string]any
	eventually(t, "the BeforeTool payload", func() bool {
		for _, p := range w.payloads("BeforeTool") {
			if in, _ := p["tool_input"].(map[string]any); in != nil && in["command"] == "touch "+marker("rule-block") {
				before = p
				return true
			}
		}
		return false
	})
	if before["hook_event_name"] != "BeforeTool" || before["tool_name"] != "run_shell_command" || before["session_id"] != id ||
		before["cwd"] == nil || before["prompt_id"] != nil || before["turn_id"] != nil {
		t.Fatalf("BeforeTool payload %v: want tool_name run_shell_command, session_id %s, cwd, and no prompt or turn id", before, id)
	}

	eventually(t, "the CLI's own dialog for the second call", func() bool {
		return strings.Contains(w.screen(), "Allow execution of")
	})
	var note map[string]any
	for _, p := range w.payloads("Notification") {
		if d, _ := p["details"].(map[string]any); d != nil && d["command"] == "touch "+marker("loop-format") {
			note = p
		}
	}
	if note == nil || note["notification_type"] != "ToolPermission" {
		t.Fatalf("no ToolPermission notification for the second call before its dialog (notifications: %v)", w.payloads("Notification"))
	}
	if _, err := os.Stat(marker("loop-format")); err == nil {
		t.Fatal("the second call ran: the CLI heeded an answer in Claude Code's format")
	}
	if _, err := os.Stat(marker("rule-block")); err == nil {
		t.Fatal("the call a BeforeTool deny blocked ran")
	}
	w.stop()
}
