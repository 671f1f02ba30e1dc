package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Tool calls of the other agent CLIs' APIs. NewOpenAIWithTools and
// NewGeminiWithTools are NewOpenAI and NewGemini whose ToolUse answers are
// a tool call in that API's wire format (a Responses `function_call` item,
// a Gemini `functionCall` part) rather than a text; every other answer is
// theirs, byte for byte. A request that carries a tool's output (a
// `function_call_output` item last in a Responses input, a
// `functionResponse` part in the last Gemini user content) has it in
// Request.ToolResult and an empty LastUserText, as a Messages request whose
// last user message holds only a tool_result does: the answer chosen for ""
// ends the turn.

// NewOpenAIWithTools starts NewOpenAI's fake whose ToolUse answers are
// function calls. Close it when done.
func NewOpenAIWithTools() *Server { return newServer((*Server).serveOpenAITools) }

// StartOpenAIWithTools is NewOpenAIWithTools for a test: the server is
// closed when the test ends.
func StartOpenAIWithTools(t testing.TB) *Server { return started(t, NewOpenAIWithTools()) }

// NewGeminiWithTools starts NewGemini's fake whose ToolUse answers are
// function calls. Close it when done.
func NewGeminiWithTools() *Server { return newServer((*Server).serveGeminiTools) }

// StartGeminiWithTools is NewGeminiWithTools for a test: the server is
// closed when the test ends.
func StartGeminiWithTools(t testing.TB) *Server { return started(t, NewGeminiWithTools()) }

// peekBody reads r's body and puts it back for the next reader.
func peekBody(r *http.Request) []byte {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body
}

// responsesToolBody is the part of a Responses request that tells a tool's
// output.
type responsesToolBody struct {
	Input []struct {
		Type   string          `json:"type"`
		Output json.RawMessage `json:"output"`
	} `json:"input"`
}

func (s *Server) serveOpenAITools(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != ResponsesPath {
		s.serveOpenAI(w, r)
		return
	}
	body := peekBody(r)
	var tb responsesToolBody
	var rb responsesBody
	if json.Unmarshal(body, &tb) != nil || json.Unmarshal(body, &rb) != nil {
		s.serveOpenAI(w, r)
		return
	}
	rec := readBody(r)
	rec.Stream, rec.Model = rb.Stream, rb.Model
	if n := len(tb.Input); n > 0 && tb.Input[n-1].Type == "function_call_output" {
		rec.ToolResult = outputText(tb.Input[n-1].Output)
	} else {
		for i := len(rb.Input) - 1; i >= 0; i-- {
			if in := rb.Input[i]; in.Role == "user" && (in.Type == "" || in.Type == "message") {
				rec.LastUserText = responsesUserText(in.Content)
				break
			}
		}
	}
	s.mu.Lock()
	answer := s.answer(rec.LastUserText)
	s.mu.Unlock()
	tool, input, ok := toolUseOf(answer)
	if !ok {
		// A text: the plain fake answers it (and records it) as ever.
		r.Body = io.NopCloser(bytes.NewReader(body))
		if rec.ToolResult != "" {
			s.answerText(w, r, rec, answer)
			return
		}
		s.serveOpenAI(w, r)
		return
	}
	rec.Answer = answer
	s.record(rec)
	if !s.wait(r) {
		return
	}
	id := fmt.Sprintf("resp_fake%d", rec.At.UnixNano())
	itemID := fmt.Sprintf("fc_fake%d", rec.At.UnixNano())
	callID := fmt.Sprintf("call_fake%d", rec.At.UnixNano())
	item := map[string]any{"type": "function_call", "id": itemID, "call_id": callID, "name": tool,
		"arguments": input, "status": "completed"}
	e := newSSE(w)
	e.send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	e.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0,
		"item": map[string]any{"type": "function_call", "id": itemID, "call_id": callID, "name": tool, "arguments": "", "status": "in_progress"}})
	e.send("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta",
		"item_id": itemID, "output_index": 0, "delta": input})
	e.send("response.function_call_arguments.done", map[string]any{"type": "response.function_call_arguments.done",
		"item_id": itemID, "output_index": 0, "arguments": input})
	e.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	e.send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id, "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 15},
	}})
}

// answerText answers rec, a request carrying a tool's output, with the
// text answer as the plain fake would, keeping rec's ToolResult.
func (s *Server) answerText(w http.ResponseWriter, r *http.Request, rec Request, answer string) {
	rec.Answer = answer
	s.record(rec)
	if !s.wait(r) {
		return
	}
	streamResponse(w, rec.At, answer)
}

// outputText is a function_call_output's output: a string as is, else its
// text parts joined, else its JSON.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}

// geminiToolBody is the part of a generateContent request that tells a
// tool's output.
type geminiToolBody struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionResponse *struct {
				Name     string          `json:"name"`
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
}

func (s *Server) serveGeminiTools(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	_, method, _ := strings.Cut(path[strings.LastIndexByte(path, '/')+1:], ":")
	if r.Method != http.MethodPost || method != "streamGenerateContent" {
		s.serveGemini(w, r)
		return
	}
	body := peekBody(r)
	var gb geminiBody
	var tb geminiToolBody
	if json.Unmarshal(body, &gb) != nil || json.Unmarshal(body, &tb) != nil || gb.GenerationConfig.ResponseMimeType == "application/json" {
		s.serveGemini(w, r)
		return
	}
	rec := readBody(r)
	rec.Stream = true
	rec.Model, _, _ = strings.Cut(strings.TrimPrefix(path[strings.LastIndexByte(path, '/')+1:], "models/"), ":")
	result := ""
	if n := len(tb.Contents); n > 0 && tb.Contents[n-1].Role == "user" {
		for _, p := range tb.Contents[n-1].Parts {
			if p.FunctionResponse != nil {
				result = string(p.FunctionResponse.Response)
			}
		}
	}
	if result == "" {
		rec.LastUserText = gb.lastUserText()
	}
	rec.ToolResult = result
	s.mu.Lock()
	rec.Answer = s.answer(rec.LastUserText)
	s.mu.Unlock()
	tool, input, ok := toolUseOf(rec.Answer)
	if !ok && result == "" {
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.serveGemini(w, r)
		return
	}
	s.record(rec)
	if !s.wait(r) {
		return
	}
	part := map[string]any{"text": rec.Answer}
	if ok {
		var args map[string]any
		_ = json.Unmarshal([]byte(input), &args)
		part = map[string]any{"functionCall": map[string]any{"name": tool, "args": args}}
	}
	newSSE(w).send("", map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]int{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  rec.Model,
		"responseId":    fmt.Sprintf("fake%d", rec.At.UnixNano()),
	})
}
