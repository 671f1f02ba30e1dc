package lifecycle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// The real CLIs' recorded payloads (harness/testdata) read as Claude
// Code's: Gemini's BeforeAgent and AfterAgent are a turn's start and end
// with prompt_response as the answer, Codex's turn_id is the prompt id, a
// Codex PermissionRequest and a Gemini ToolPermission notification are a
// permission prompt.
func TestParseHookPayload_ReadsCodexAndGeminiAsClaude(t *testing.T) {
	read := func(cli, event string) HookPayload {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("..", "harness", "testdata", cli, "hooks", event+".json"))
		if err != nil {
			t.Fatal(err)
		}
		p, ok := ParseHookPayload(data)
		if !ok {
			t.Fatalf("%s %s: not a hook payload", cli, event)
		}
		return p
	}
	if p := read("gemini", "BeforeAgent"); p.Event != "UserPromptSubmit" || p.Prompt != "-- you are the supervisor; say hello" || p.PromptID != "" {
		t.Fatalf("gemini BeforeAgent read as %+v", p)
	}
	if p := read("gemini", "AfterAgent"); p.Event != "Stop" || p.LastMessage != "answer to: -- you are the supervisor; say hello" {
		t.Fatalf("gemini AfterAgent read as %+v", p)
	}
	if p := read("gemini", "SessionEnd"); p.Event != "SessionEnd" || p.Reason != "exit" {
		t.Fatalf("gemini SessionEnd read as %+v", p)
	}
	u, s := read("codex", "UserPromptSubmit"), read("codex", "Stop")
	if u.Event != "UserPromptSubmit" || u.PromptID == "" || s.Event != "Stop" || s.PromptID != u.PromptID || s.LastMessage == "" {
		t.Fatalf("codex turn read as %+v / %+v", u, s)
	}
	p, _ := ParseHookPayload([]byte(`{"hook_event_name":"PermissionRequest","session_id":"x","turn_id":"t1","tool_name":"shell"}`))
	if p.Event != "Notification" || p.NotificationType != "permission_prompt" || p.PromptID != "t1" || !strings.Contains(p.Message, "shell") {
		t.Fatalf("codex PermissionRequest read as %+v", p)
	}
	p, _ = ParseHookPayload([]byte(`{"hook_event_name":"Notification","session_id":"x","notification_type":"ToolPermission","message":"Allow?"}`))
	if p.NotificationType != "permission_prompt" {
		t.Fatalf("gemini ToolPermission read as %+v", p)
	}
	// A Gemini answer cut at MaxHookPayload keeps its first part.
	p, _ = ParseHookPayload([]byte(`{"hook_event_name":"AfterAgent","session_id":"x","prompt_response":"the first part of a long ans`))
	if p.Event != "Stop" || p.LastMessage != "the first part of a long ans" {
		t.Fatalf("a cut AfterAgent read as %+v", p)
	}
}

// Turns without a prompt id of their own get one: a Gemini BeforeAgent gets
// an id of the-loop's, which its AfterAgent answers; a Codex turn under a
// turn id already answered (a message queued during that turn) gets one
// of its own, so each answer is found by its own prompt.
func TestHooks_TurnsWithoutTheirOwnIDGetOne(t *testing.T) {
	w := newHookWorld(t)
	w.setHarness("codex") // a turn id reused for a new turn is Codex's
	w.hook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	w.hook(map[string]any{"hook_event_name": "BeforeAgent", "prompt": "first"})
	w.hook(map[string]any{"hook_event_name": "AfterAgent", "prompt": "first", "prompt_response": "one"})
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "resume notice", "turn_id": "t1"})
	w.hook(map[string]any{"hook_event_name": "Stop", "turn_id": "t1", "last_assistant_message": "two"})
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "queued say", "turn_id": "t1"})
	if a := w.row().Activity; a != loop.ActivityWorking {
		t.Fatalf("a reused turn id's turn: %s", a)
	}
	w.hook(map[string]any{"hook_event_name": "Stop", "turn_id": "t1", "last_assistant_message": "three"})
	h := w.record().Hearing
	if len(h.Answers) != 3 || len(h.Prompts) != 3 {
		t.Fatalf("answers %+v prompts %+v", h.Answers, h.Prompts)
	}
	ids := map[string]bool{}
	for i, p := range h.Prompts {
		if p.PromptID == "" || ids[p.PromptID] || h.Answers[i].PromptID != p.PromptID {
			t.Fatalf("prompt %d %+v answered by %+v (all %+v)", i, p, h.Answers[i], h.Answers)
		}
		ids[p.PromptID] = true
	}
	if !strings.HasPrefix(h.Prompts[0].PromptID, "heard-") || h.Prompts[1].PromptID != "t1" || !strings.HasPrefix(h.Prompts[2].PromptID, "t1#") {
		t.Fatalf("prompt ids %+v", h.Prompts)
	}
	if got := heardPromptFor(h.Prompts, h.Prompts[:2], loop.PromptSum("queued say"), false); got != h.Prompts[2].PromptID {
		t.Fatalf("the queued say's turn: %q", got)
	}
	if w.row().Activity != loop.ActivityIdle {
		t.Fatalf("after the last Stop: %s", w.row().Activity)
	}
}

// Claude's hook of a message queued into a turn can be heard after that
// turn's Stop (each hook is its own process): the message's own turn runs
// then, under the new id its Stop carries — no turn_started under the old
// id, working until that Stop, which answers it.
func TestHooks_QueuedPromptHeardAfterItsTurnsStop(t *testing.T) {
	w := newHookWorld(t)
	w.hook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "boot", "prompt_id": "p1"})
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p1", "last_assistant_message": "booted"})
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "queued say", "prompt_id": "p1"})
	if a := w.row().Activity; a != loop.ActivityWorking {
		t.Fatalf("the queued message's turn runs: activity %s", a)
	}
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p2", "last_assistant_message": "the answer"})
	if a := w.row().Activity; a != loop.ActivityIdle {
		t.Fatalf("after its Stop: activity %s", a)
	}
	h := w.record().Hearing
	if len(h.Prompts) != 2 || h.Prompts[1].PromptID != "p1" || !h.Prompts[1].Queued {
		t.Fatalf("prompts %+v", h.Prompts)
	}
	if n := len(h.Answers); n != 2 || h.Answers[1].PromptID != "p2" || h.Answers[1].Text != "the answer" {
		t.Fatalf("answers %+v", h.Answers)
	}
	started := w.eventsOf("standing.turn_started")
	if len(started) != 1 || started[0] != "p1" {
		t.Fatalf("turn_started prompt ids %q, want only the boot turn's", started)
	}
}
