package fakeapi

import (
	"net/http"
	"strings"
	"testing"
)

func TestOpenAIWithTools_FunctionCallThenItsOutput(t *testing.T) {
	s := StartOpenAIWithTools(t)
	s.SetAnswer(func(u string) string {
		if u == "run it" {
			return ToolUse("exec_command", `{"cmd":"true"}`)
		}
		return "done"
	})
	post := func(body string) (events []string, data []map[string]any) {
		t.Helper()
		resp, err := http.Post(s.URL+ResponsesPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return sseData(t, resp.Body)
	}
	user := `{"type":"message","role":"user","content":[{"type":"input_text","text":"run it"}]}`
	events, data := post(`{"model":"m","stream":true,"input":[` + user + `]}`)
	want := "response.created,response.output_item.added,response.function_call_arguments.delta,response.function_call_arguments.done,response.output_item.done,response.completed"
	if strings.Join(events, ",") != want {
		t.Fatalf("events %v, want %s", events, want)
	}
	item := data[4]["item"].(map[string]any)
	if item["type"] != "function_call" || item["name"] != "exec_command" || item["arguments"] != `{"cmd":"true"}` || item["call_id"] == "" {
		t.Fatalf("item %v", item)
	}
	_, data = post(`{"model":"m","stream":true,"input":[` + user + `,{"type":"function_call","call_id":"c","name":"exec_command","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"c","output":"exit 0"}]}`)
	text := data[3]["item"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	turns := s.AgentTurns()
	if text != "done" || len(turns) != 2 || turns[1].ToolResult != "exit 0" || turns[1].LastUserText != "" || turns[0].ToolResult != "" {
		t.Fatalf("answer %v, turns %+v", text, turns)
	}
	// Without a tool use the plain fake answers, as NewOpenAI's does.
	events, _ = post(`{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":"hello"}]}`)
	if len(events) != 5 || s.AgentTurns()[2].Answer != "done" {
		t.Fatalf("a text answer: events %v, turns %+v", events, s.AgentTurns())
	}
}

func TestGeminiWithTools_FunctionCallThenItsResponse(t *testing.T) {
	s := StartGeminiWithTools(t)
	s.SetAnswer(func(u string) string {
		if u == "run it" {
			return ToolUse("run_shell_command", `{"command":"true"}`)
		}
		return "done"
	})
	post := func(body string) map[string]any {
		t.Helper()
		resp, err := http.Post(s.URL+"/v1beta/models/g:streamGenerateContent?alt=sse", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, data := sseData(t, resp.Body)
		if len(data) != 1 {
			t.Fatalf("chunks %v", data)
		}
		return data[0]["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	}
	user := `{"role":"user","parts":[{"text":"run it"}]}`
	part := post(`{"contents":[` + user + `]}`)
	call, _ := part["functionCall"].(map[string]any)
	if call["name"] != "run_shell_command" || call["args"].(map[string]any)["command"] != "true" {
		t.Fatalf("part %v", part)
	}
	part = post(`{"contents":[` + user + `,{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"ok"}}}]}]}`)
	turns := s.AgentTurns()
	if part["text"] != "done" || len(turns) != 2 || turns[1].ToolResult != `{"output":"ok"}` || turns[1].LastUserText != "" || turns[1].Model != "g" {
		t.Fatalf("part %v, turns %+v", part, turns)
	}
}
