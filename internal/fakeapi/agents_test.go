package fakeapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// sseData returns the data payloads of a server-sent-event stream, with
// the event name of each (or "").
func sseData(t *testing.T, body io.Reader) (events []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("data %q: %v", line, err)
			}
			events, data = append(events, event), append(data, m)
			event = ""
		}
	}
	return events, data
}

func TestOpenAI_StreamsOneAssistantMessage(t *testing.T) {
	s := StartOpenAI(t)
	s.SetAnswer(func(u string) string { return "hi, " + u })
	body := `{"model":"gpt-fake","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]},` +
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}]}`
	req, _ := http.NewRequest(http.MethodPost, s.URL+ResponsesPath, strings.NewReader(body))
	req.Header.Set("session_id", "01a23137-6aa2-7403-81f6-959f1fab0e62")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events, data := sseData(t, resp.Body)
	want := []string{"response.created", "response.output_item.added", "response.output_text.delta", "response.output_item.done", "response.completed"}
	if strings.Join(events, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", events, want)
	}
	item := data[3]["item"].(map[string]any)
	text := item["content"].([]any)[0].(map[string]any)["text"]
	if item["role"] != "assistant" || text != "hi, hello" {
		t.Fatalf("item %v", item)
	}
	if u := data[4]["response"].(map[string]any)["usage"].(map[string]any); u["output_tokens"] == nil || u["input_tokens"] == nil {
		t.Fatalf("usage %v", u)
	}
	turns := s.AgentTurns()
	if len(turns) != 1 || turns[0].LastUserText != "hello" || turns[0].Model != "gpt-fake" || !turns[0].Stream ||
		turns[0].SessionID != "01a23137-6aa2-7403-81f6-959f1fab0e62" {
		t.Fatalf("turns %+v", turns)
	}
	if r, _ := http.Get(s.URL + "/v1/models"); r == nil || r.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/models: %v", r)
	}
	if r, _ := http.Get(s.URL + "/v1/other"); r == nil || r.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /v1/other: %v", r)
	}
}

func TestGemini_StreamAndJSONSchemaAnswers(t *testing.T) {
	s := StartGemini(t)
	body := `{"contents":[{"role":"user","parts":[{"text":"<session_context>c"}]},{"role":"model","parts":[{"text":"ok"}]},{"role":"user","parts":[{"text":"hello"}]}]}`
	resp, err := http.Post(s.URL+"/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, data := sseData(t, resp.Body)
	resp.Body.Close()
	if len(data) != 1 {
		t.Fatalf("chunks %v", data)
	}
	cand := data[0]["candidates"].([]any)[0].(map[string]any)
	part := cand["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	if part["text"] != DefaultAnswer("hello") || cand["finishReason"] != "STOP" || data[0]["usageMetadata"] == nil {
		t.Fatalf("chunk %v", data[0])
	}
	// The CLI's router asks for JSON of a schema: the smallest value.
	router := `{"contents":[{"role":"user","parts":[{"text":"hello"}]}],"generationConfig":{"responseMimeType":"application/json",` +
		`"responseJsonSchema":{"type":"OBJECT","properties":{"reason":{"type":"STRING"},"score":{"type":"INTEGER"},"kind":{"type":"STRING","enum":["a","b"]},"opt":{"type":"BOOLEAN"}},"required":["reason","score","kind"]}}}`
	resp, err = http.Post(s.URL+"/v1beta/models/gemini-3.5-flash-lite:generateContent", "application/json", strings.NewReader(router))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Candidates []struct {
			Content struct {
				Parts []struct{ Text string } `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var v map[string]any
	if err := json.Unmarshal([]byte(out.Candidates[0].Content.Parts[0].Text), &v); err != nil {
		t.Fatalf("router answer %q is not JSON: %v", out.Candidates[0].Content.Parts[0].Text, err)
	}
	if v["reason"] != "fake" || v["score"] != float64(1) || v["kind"] != "a" || len(v) != 3 {
		t.Fatalf("router answer %v", v)
	}
	turns := s.AgentTurns()
	if len(turns) != 2 || turns[0].LastUserText != "hello" || turns[0].Model != "gemini-3.8-flash" || !turns[0].Stream || turns[1].Stream {
		t.Fatalf("turns %+v", turns)
	}
}

func TestAgents_HoldAndRelease(t *testing.T) {
	s := StartGemini(t)
	s.Hold(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Post(s.URL+"/v1beta/models/m:generateContent", "application/json", strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"busy"}]}]}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	testkit.Eventually(t, func() bool { return len(s.AgentTurns()) > 0 }, 5*time.Second, "the held request was not recorded")
	select {
	case <-done:
		t.Fatal("a held answer was sent")
	case <-time.After(50 * time.Millisecond):
	}
	s.Release()
	testkit.Await(t, done, "Release to let the answer go")
}
