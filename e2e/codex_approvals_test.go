package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
)

// answeringHook writes a hook command that saves its payload as the
// recorder does (<event>-<ns>.json, read by payloads) and answers, for a
// payload holding one of words, the file <event>-<word>.out beside it
// when there is one, else {}. The test's outputs are the-loop's own
// (loop.PermissionRequestAnswer, loop.PreToolUseAnswer), so what the CLI
// does with them is what it would do with the hook program's.
func (w *agentWorld) answeringHook(words ...string) string {
	w.t.Helper()
	path := filepath.Join(w.hooks, "answer.sh")
	script := "#!/bin/sh\np=$(cat)\nprintf '%s' \"$p\" > \"" + w.hooks + "/$1-$(date +%s%N).json\"\n" +
		"for w in " + strings.Join(words, " ") + "; do\n" +
		"  case \"$p\" in *\"$w\"*) if [ -f \"" + w.hooks + "/$1-$w.out\" ]; then cat \"" + w.hooks + "/$1-$w.out\"; exit 0; fi;; esac\n" +
		"done\necho '{}'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		w.t.Fatal(err)
	}
	return path
}

// answer makes the answering hook of event print out for a payload
// holding word.
func (w *agentWorld) answer(event, word string, out []byte) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.hooks, event+"-"+word+".out"), append(out, '\n'), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// toolResult waits for a turn request carrying a tool's output that
// holds text.
func (w *agentWorld) toolResult(what, text string) fakeapi.Request {
	w.t.Helper()
	var got fakeapi.Request
	eventually(w.t, what, func() bool {
		for _, r := range w.api.AgentTurns() {
			if strings.Contains(r.ToolResult, text) {
				got = r
				return true
			}
		}
		return false
	})
	return got
}

// TestRealCodex_ApprovalHooksTakeTheLoopsAnswers drives the real Codex CLI
// offline (docs/harnesses.md, "Approvals"): the fake Responses API asks
// for exec_command with sandbox_permissions require_escalated, for which
// Codex (approval_policy on-request) asks permission. Its
// PermissionRequest hook's payload is what hearing.AwaitDecision reads
// (session_id, tool_name Bash, tool_input.command; turn_id, no prompt_id),
// and the-loop's own answers decide it with no key: loop.PermissionRequestAnswer
// allow runs the command, deny gives the model its message; a PreToolUse
// deny (loop.PreToolUseAnswer) blocks the command before any approval is
// asked, and a PreToolUse allow is refused by Codex ("unsupported
// permissionDecision:allow"), the approval then asked as ever.
func TestRealCodex_ApprovalHooksTakeTheLoopsAnswers(t *testing.T) {
	bin := agentBinary(t, "THE_LOOP_CODEX_BIN", "codex", harness.CodexVersion, "codex", "@openai/codex")
	api := fakeapi.StartOpenAIWithTools(t)
	w := newAgentWorld(t, api, bin)
	codexHome := filepath.Join(w.home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := strings.NewReplacer("%RECORDER%", w.hookRecorder(), "%URL%", api.URL).Replace("approval_policy = \"on-request\"\n" + codexConfig)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	hook := w.answeringHook("permit-me", "refuse-me", "rule-block", "rule-pass")
	hooks := map[string]any{}
	for _, ev := range []string{"SessionStart", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"} {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": hook + " " + ev, "timeout": 30}}}}
	}
	if err := os.WriteFile(filepath.Join(codexHome, "hooks.json"), mustJSON(t, map[string]any{"hooks": hooks}), 0o600); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "THE_LOOP_FAKE_OPENAI_KEY=sk-the-loop-fake")

	const denyMessage = "not this one: use the scratch directory"
	w.answer("PermissionRequest", "permit-me", loop.PermissionRequestAnswer(loop.ApprovalAnswer{Behavior: loop.DecisionAllow}))
	w.answer("PermissionRequest", "refuse-me", loop.PermissionRequestAnswer(loop.ApprovalAnswer{Behavior: loop.DecisionDeny,
		Message: loop.FrameDeny("operator", denyMessage, loop.DenyNonce(denyMessage))}))
	w.answer("PreToolUse", "rule-block", loop.PreToolUseAnswer(loop.RuleDeny, "approval rule 1 of the-loop"))
	w.answer("PreToolUse", "rule-pass", loop.PreToolUseAnswer(loop.RuleAllow, "approval rule 2 of the-loop"))

	marker := func(word string) string { return filepath.Join(filepath.Dir(w.cwd), filepath.Base(w.cwd)+"-"+word) }
	prompts := map[string]string{"run allow": "permit-me", "run deny": "refuse-me", "run rule deny": "rule-block", "run rule allow": "rule-pass"}
	api.SetAnswer(func(u string) string {
		if word, ok := prompts[u]; ok {
			input, _ := json.Marshal(map[string]string{"cmd": "touch " + marker(word),
				"sandbox_permissions": "require_escalated", "justification": "may I touch " + word + "?"})
			return fakeapi.ToolUse("exec_command", string(input))
		}
		return "done: " + u
	})
	codex := harness.NewCodex(harness.CodexOptions{TrustEnabled: true, Env: func(string) string { return "" }, Home: w.home})
	argv, err := codex.FreshArgv("", []string{harness.CodexBypassHookTrust}, "run allow")
	if err != nil {
		t.Fatal(err)
	}
	w.spawn(argv)

	// An allow: the command runs with no key pressed.
	w.toolResult("the allowed command's output", "Process exited with code 0")
	if _, err := os.Stat(marker("permit-me")); err != nil {
		t.Fatalf("the command allowed by the PermissionRequest hook did not run: %v", err)
	}
	var req map[string]any
	eventually(t, "the PermissionRequest payload", func() bool {
		for _, p := range w.payloads("PermissionRequest") {
			if in, _ := p["tool_input"].(map[string]any); in != nil && in["command"] == "touch "+marker("permit-me") {
				req = p
				return true
			}
		}
		return false
	})
	var start map[string]any
	if s := w.payloads("SessionStart"); len(s) > 0 {
		start = s[0]
	}
	if req["hook_event_name"] != "PermissionRequest" || req["tool_name"] != "Bash" || req["session_id"] == nil ||
		req["session_id"] != start["session_id"] || req["cwd"] == nil || req["turn_id"] == nil || req["prompt_id"] != nil {
		t.Fatalf("PermissionRequest payload %v (SessionStart %v): want hook_event_name, tool_name Bash, the session's session_id, cwd, turn_id and no prompt_id", req, start)
	}
	w.waitReady("Codex's composer after the allowed turn", codex.Ready)

	// A deny: the model reads the message; the command does not run.
	w.say("run deny")
	got := w.toolResult("the denied command's error", denyMessage)
	if !strings.Contains(got.ToolResult, "Rejected(") {
		t.Fatalf("the denied command's output %q: want Codex's Rejected(…) around the message", got.ToolResult)
	}
	if _, err := os.Stat(marker("refuse-me")); err == nil {
		t.Fatal("the command denied by the PermissionRequest hook ran")
	}
	w.waitReady("Codex's composer after the denied turn", codex.Ready)

	// A PreToolUse deny: blocked before any approval is asked.
	w.say("run rule deny")
	w.toolResult("the command a PreToolUse deny blocked", "Command blocked by PreToolUse hook: approval rule 1 of the-loop")
	for _, p := range w.payloads("PermissionRequest") {
		if in, _ := p["tool_input"].(map[string]any); in != nil && strings.Contains(fmt.Sprint(in["command"]), "rule-block") {
			t.Fatalf("a PermissionRequest fired for the command a PreToolUse deny blocked: %v", p)
		}
	}
	w.waitReady("Codex's composer after the blocked turn", codex.Ready)

	// A PreToolUse allow is not supported: the approval is asked as ever.
	w.say("run rule allow")
	eventually(t, "Codex to refuse the PreToolUse allow", func() bool {
		return strings.Contains(w.screen(), "unsupported permissionDecision:allow")
	})
	eventually(t, "the PermissionRequest after a PreToolUse allow", func() bool {
		for _, p := range w.payloads("PermissionRequest") {
			if in, _ := p["tool_input"].(map[string]any); in != nil && strings.Contains(fmt.Sprint(in["command"]), "rule-pass") {
				return true
			}
		}
		return false
	})
	eventually(t, "Codex's own approval dialog", func() bool {
		return strings.Contains(w.screen(), "Would you like to run the following command?")
	})
	if _, err := os.Stat(marker("rule-pass")); err == nil {
		t.Fatal("the command a PreToolUse allow answered ran without an approval")
	}
	w.stop()
}
