package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The fake can also stand in for the APIs of the other agent CLIs the-loop
// hosts (docs/harnesses.md): the OpenAI Responses API that the Codex CLI
// streams from, and the Gemini API (generativelanguage) that the Gemini
// CLI calls. Each is a Server of its own, with the same recording, answer
// choice and holding as the Messages API; only the wire format differs.

// ResponsesPath is the path the Codex CLI posts a turn to when its model
// provider's base URL is <URL>/v1.
const ResponsesPath = "/v1/responses"

// NewOpenAI starts a fake OpenAI Responses API on 127.0.0.1:0: `POST
// /v1/responses` answers a streamed response (server-sent events) holding
// one assistant message; `GET /v1/models` answers an empty list. Close it
// when done.
func NewOpenAI() *Server { return newServer((*Server).serveOpenAI) }

// StartOpenAI is NewOpenAI for a test: the server is closed when the test
// ends.
func StartOpenAI(t testing.TB) *Server { return started(t, NewOpenAI()) }

// NewGemini starts a fake Gemini API on 127.0.0.1:0: `POST
// /v1beta/models/<model>:streamGenerateContent` answers one streamed
// candidate (server-sent events), `:generateContent` one JSON candidate and
// `:countTokens` a count. Close it when done.
func NewGemini() *Server { return newServer((*Server).serveGemini) }

// StartGemini is NewGemini for a test: the server is closed when the test
// ends.
func StartGemini(t testing.TB) *Server { return started(t, NewGemini()) }

// AgentTurns returns the turn requests received so far, oldest first: those
// whose LastUserText the fake read (a Responses post, a Gemini generate).
func (s *Server) AgentTurns() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost && (r.Path == ResponsesPath || strings.Contains(r.Path, "enerateContent")) {
			out = append(out, r)
		}
	}
	return out
}

// wait holds an answer while the server holds answers (see Hold); false
// when the client went away.
func (s *Server) wait(r *http.Request) bool {
	s.mu.Lock()
	gate, hold := s.gate, s.hold
	s.mu.Unlock()
	if gate == nil {
		return true
	}
	var timeout <-chan time.Time
	if hold > 0 {
		t := time.NewTimer(hold)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-gate:
	case <-timeout:
	case <-s.done:
	case <-r.Context().Done():
		return false
	}
	return true
}

// choose records rec with the answer chosen for its LastUserText.
func (s *Server) choose(rec *Request) {
	s.mu.Lock()
	rec.Answer = s.answer(rec.LastUserText)
	s.mu.Unlock()
	s.record(*rec)
}

// sseWriter writes server-sent events, flushing each.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return sseWriter{w, f}
}

// send writes one event; event "" writes a data-only event.
func (e sseWriter) send(event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(e.w, "event: %s\n", event)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if e.f != nil {
		e.f.Flush()
	}
}

func readBody(r *http.Request) Request {
	body := make([]byte, 0, 4096)
	buf := make([]byte, 32*1024)
	for len(body) < 64<<20 {
		n, err := r.Body.Read(buf)
		body = append(body, buf[:n]...)
		if err != nil {
			break
		}
	}
	return Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body, At: time.Now(),
		SessionID: firstHeader(r, "Session_id", "Session-Id", "X-Gemini-Session-Id")}
}

func firstHeader(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.Header.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// responsesBody is the part of a Responses request the fake reads.
type responsesBody struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Input  []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"input"`
}

func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request) {
	rec := readBody(r)
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.record(rec)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[],"models":[]}`))
	case r.Method == http.MethodPost && r.URL.Path == ResponsesPath:
		s.responses(w, r, rec)
	default:
		s.record(rec)
		http.Error(w, fmt.Sprintf(`{"error":{"message":"the fake API has no %s %s","type":"invalid_request_error"}}`, r.Method, r.URL.Path), http.StatusNotFound)
	}
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request, rec Request) {
	var rb responsesBody
	if err := json.Unmarshal(rec.Body, &rb); err != nil {
		s.record(rec)
		http.Error(w, `{"error":{"message":"the body is not JSON","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	rec.Stream, rec.Model = rb.Stream, rb.Model
	for i := len(rb.Input) - 1; i >= 0; i-- {
		if in := rb.Input[i]; in.Role == "user" && (in.Type == "" || in.Type == "message") {
			rec.LastUserText = responsesUserText(in.Content)
			break
		}
	}
	s.choose(&rec)
	if !s.wait(r) {
		return
	}
	streamResponse(w, rec.At, rec.Answer)
}

// streamResponse streams answer as a Responses API message, its ids made
// of at.
func streamResponse(w http.ResponseWriter, at time.Time, answer string) {
	id := fmt.Sprintf("resp_fake%d", at.UnixNano())
	msgID := fmt.Sprintf("msg_fake%d", at.UnixNano())
	out := len(strings.Fields(answer)) + 1
	item := map[string]any{"type": "message", "role": "assistant", "id": msgID, "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": answer, "annotations": []any{}}}}
	e := newSSE(w)
	e.send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	e.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0,
		"item": map[string]any{"type": "message", "role": "assistant", "id": msgID, "status": "in_progress", "content": []any{}}})
	e.send("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": msgID,
		"output_index": 0, "content_index": 0, "delta": answer})
	e.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	e.send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id, "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": out, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 10 + out},
	}})
}

// responsesUserText is a Responses input message's text: a string content,
// or its last input_text part.
func responsesUserText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i].Type == "input_text" || parts[i].Type == "text" {
			return parts[i].Text
		}
	}
	return ""
}

// geminiBody is the part of a generateContent request the fake reads.
// lastUserText is the last text part of the body's last user content.
func (gb *geminiBody) lastUserText() string {
	for i := len(gb.Contents) - 1; i >= 0; i-- {
		if c := gb.Contents[i]; c.Role == "user" {
			for j := len(c.Parts) - 1; j >= 0; j-- {
				if c.Parts[j].Text != "" {
					return c.Parts[j].Text
				}
			}
			return ""
		}
	}
	return ""
}

type geminiBody struct {
	GenerationConfig struct {
		ResponseMimeType   string         `json:"responseMimeType"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		ResponseSchema     map[string]any `json:"responseSchema"`
	} `json:"generationConfig"`
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"contents"`
}

func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request) {
	rec := readBody(r)
	path := r.URL.Path
	_, method, _ := strings.Cut(path[strings.LastIndexByte(path, '/')+1:], ":")
	switch {
	case r.Method == http.MethodPost && (method == "streamGenerateContent" || method == "generateContent"):
		s.generate(w, r, rec, method == "streamGenerateContent")
	case r.Method == http.MethodPost && method == "countTokens":
		s.record(rec)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"totalTokens":10}`))
	default:
		s.record(rec)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"code":404,"message":"the fake API has no %s %s","status":"NOT_FOUND"}}`, r.Method, path)
	}
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request, rec Request, stream bool) {
	var gb geminiBody
	if err := json.Unmarshal(rec.Body, &gb); err != nil {
		s.record(rec)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"code":400,"message":"the body is not JSON","status":"INVALID_ARGUMENT"}}`))
		return
	}
	rec.Stream = stream
	if m := strings.TrimPrefix(r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:], "models/"); m != "" {
		rec.Model, _, _ = strings.Cut(m, ":")
	}
	rec.LastUserText = gb.lastUserText()
	s.choose(&rec)
	if !s.wait(r) {
		return
	}
	text := rec.Answer
	if gc := gb.GenerationConfig; gc.ResponseMimeType == "application/json" {
		// The CLI's own side requests (its model router, its checks) ask
		// for JSON of a schema: answer the smallest value it accepts.
		schema := gc.ResponseJSONSchema
		if schema == nil {
			schema = gc.ResponseSchema
		}
		b, _ := json.Marshal(schemaValue(schema))
		text = string(b)
	}
	out := len(strings.Fields(text)) + 1
	resp := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}}},
		"usageMetadata": map[string]int{"promptTokenCount": 10, "candidatesTokenCount": out, "totalTokenCount": 10 + out},
		"modelVersion":  rec.Model,
		"responseId":    fmt.Sprintf("fake%d", rec.At.UnixNano()),
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	newSSE(w).send("", resp)
}

// schemaValue is the smallest value of a (Gemini, OpenAPI-style) JSON
// schema: an object with its required properties, the first enum value, a
// string "fake", a number 1, false, an empty list.
func schemaValue(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		obj := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			sub, _ := props[name].(map[string]any)
			obj[name] = schemaValue(sub)
		}
		return obj
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	default:
		return "fake"
	}
}
