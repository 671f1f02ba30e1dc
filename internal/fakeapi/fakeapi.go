// Package fakeapi is a fake Anthropic Messages API on 127.0.0.1, for
// driving the real Claude Code CLI offline in end-to-end tests (the facts it
// relies on are in docs/claude-code.md).
//
// It answers `POST /v1/messages` (any query string) with the smallest
// server-sent-event stream Claude Code accepts when the request asks for
// `stream: true`, and with one JSON message otherwise; `HEAD` and `GET
// /api/hello` answer 200. It records every request, lets a test choose each
// answer, and can hold answers (a busy turn) until released.
package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// SessionHeader is the request header Claude Code carries its conversation
// id in.
const SessionHeader = "X-Claude-Code-Session-Id"

// Model is the model name the fake answers with.
const Model = "claude-fake-1"

// Request is one request the fake received.
type Request struct {
	// Method and Path are the request's; Query is its raw query string.
	Method, Path, Query string
	// SessionID is the x-claude-code-session-id header.
	SessionID string
	// Stream is the body's "stream" field.
	Stream bool
	// Model is the body's "model" field.
	Model string
	// LastUserText is the text of the last user message: its string
	// content, or its last text block that is not a <system-reminder>.
	LastUserText string
	// Answer is what the fake answered ("" for other than a message).
	Answer string
	// ToolResult is the content of the last user message's tool_result
	// block, when it holds one, and ToolError its is_error.
	ToolResult string
	ToolError  bool
	// Body is the raw request body.
	Body []byte
	// At is when the request arrived.
	At time.Time
}

// Server is a running fake Messages API. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL (http://127.0.0.1:<port>), for ANTHROPIC_BASE_URL.
	URL string

	srv *httptest.Server

	mu     sync.Mutex
	reqs   []Request
	answer func(lastUserText string) string
	gate   chan struct{} // non-nil while answers are held
	hold   time.Duration // the longest a held answer waits
	done   chan struct{} // closed by Close: releases everything
	closed bool
}

// toolUseMark starts an answer that is a tool use (ToolUse).
const toolUseMark = "\x00tool_use\x00"

// ToolUse is an answer (for SetAnswer) that asks to use tool with input
// (a JSON object) rather than a text: the stream carries one tool_use
// block, its input in input_json_delta parts, and stop_reason tool_use.
// The next request carries its tool_result (Request.ToolResult).
func ToolUse(tool, input string) string { return toolUseMark + tool + "\x00" + input }

// toolUseOf splits an answer made by ToolUse (ok false for a text).
func toolUseOf(answer string) (tool, input string, ok bool) {
	rest, ok := strings.CutPrefix(answer, toolUseMark)
	if !ok {
		return "", "", false
	}
	tool, input, _ = strings.Cut(rest, "\x00")
	return tool, input, true
}

// DefaultAnswer is the answer when the test chose none: "answer to: <text>".
func DefaultAnswer(lastUserText string) string { return "answer to: " + lastUserText }

// New starts a fake Messages API on 127.0.0.1:0. Close it when done.
func New() *Server { return newServer((*Server).serve) }

// Start is New for a test: the server is closed when the test ends.
func Start(t testing.TB) *Server { return started(t, New()) }

// newServer starts a fake on 127.0.0.1:0 whose requests serve answers.
func newServer(serve func(*Server, http.ResponseWriter, *http.Request)) *Server {
	s := &Server{answer: DefaultAnswer, done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(s, w, r) }))
	s.URL = s.srv.URL
	return s
}

// started closes s when t ends.
func started(t testing.TB, s *Server) *Server {
	t.Helper()
	t.Cleanup(s.Close)
	return s
}

// Close releases any held answer and shuts the server down.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetAnswer makes f choose the answer to each later message request, given
// its LastUserText; nil restores DefaultAnswer.
func (s *Server) SetAnswer(f func(lastUserText string) string) {
	if f == nil {
		f = DefaultAnswer
	}
	s.mu.Lock()
	s.answer = f
	s.mu.Unlock()
}

// Hold makes message requests arriving from now on wait, before any byte of
// the answer is sent, until Release is called or d has passed (d <= 0:
// until Release). The request is recorded when it arrives, so a test sees a
// held turn in Requests.
func (s *Server) Hold(d time.Duration) {
	s.mu.Lock()
	if s.gate == nil {
		s.gate = make(chan struct{})
	}
	s.hold = d
	s.mu.Unlock()
}

// Release lets every held answer go and stops holding new ones.
func (s *Server) Release() {
	s.mu.Lock()
	if s.gate != nil {
		close(s.gate)
		s.gate = nil
	}
	s.mu.Unlock()
}

// Step lets the answers held so far go and keeps holding those arriving
// from now on (as Hold did); without a Hold it does nothing.
func (s *Server) Step() {
	s.mu.Lock()
	if s.gate != nil {
		close(s.gate)
		s.gate = make(chan struct{})
	}
	s.mu.Unlock()
}

// Requests returns a copy of every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Turns returns the message requests (POST /v1/messages) received so far,
// oldest first.
func (s *Server) Turns() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/messages" {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		SessionID: r.Header.Get(SessionHeader), Body: body, At: time.Now(),
	}
	switch {
	case r.URL.Path == "/api/hello" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		s.record(rec)
		w.WriteHeader(http.StatusOK)
	case r.URL.Path == "/v1/messages" && r.Method == http.MethodPost:
		s.message(w, r, rec)
	default:
		s.record(rec)
		http.Error(w, fmt.Sprintf(`{"type":"error","error":{"type":"not_found_error","message":"the fake API has no %s %s"}}`, r.Method, r.URL.Path), http.StatusNotFound)
	}
}

func (s *Server) record(rec Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, rec)
	return len(s.reqs) - 1
}

// messagesBody is the part of a Messages request the fake reads.
type messagesBody struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (s *Server) message(w http.ResponseWriter, r *http.Request, rec Request) {
	var mb messagesBody
	if err := json.Unmarshal(rec.Body, &mb); err != nil {
		s.record(rec)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"the body is not JSON"}}`, http.StatusBadRequest)
		return
	}
	rec.Stream, rec.Model = mb.Stream, mb.Model
	for i := len(mb.Messages) - 1; i >= 0; i-- {
		if mb.Messages[i].Role == "user" {
			rec.LastUserText = userText(mb.Messages[i].Content)
			rec.ToolResult, rec.ToolError = toolResult(mb.Messages[i].Content)
			break
		}
	}
	s.mu.Lock()
	rec.Answer = s.answer(rec.LastUserText)
	gate, hold := s.gate, s.hold
	s.mu.Unlock()
	s.record(rec)

	if gate != nil {
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
			return
		}
	}
	model := mb.Model
	if model == "" {
		model = Model
	}
	id := fmt.Sprintf("msg_fake%d", rec.At.UnixNano())
	usage := map[string]int{"input_tokens": 10, "output_tokens": len(strings.Fields(rec.Answer)) + 1,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !mb.Stream {
		text := rec.Answer
		if _, _, ok := toolUseOf(text); ok {
			text = "(the fake answers a tool use in a stream only)"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "end_turn", "stop_sequence": nil, "usage": usage,
		})
		return
	}
	stream(w, id, model, rec.Answer, usage)
}

// stream writes answer as the server-sent-event stream of one message:
// a text block, or the tool_use block of a ToolUse answer.
func stream(w http.ResponseWriter, id, model, answer string, usage map[string]int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": usage["input_tokens"], "output_tokens": 1,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	stop := "end_turn"
	if tool, input, ok := toolUseOf(answer); ok {
		stop = "tool_use"
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_" + strings.TrimPrefix(id, "msg_"), "name": tool, "input": map[string]any{}}})
		half := len(input) / 2
		for _, part := range []string{input[:half], input[half:]} {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
	} else {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": answer}})
	}
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": usage["output_tokens"]}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// toolResult is the content of a user message's tool_result block (its
// text, or its text blocks joined) and its is_error; "" when none.
func toolResult(raw json.RawMessage) (string, bool) {
	var blocks []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
		IsError bool            `json:"is_error"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		var text string
		if json.Unmarshal(b.Content, &text) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(b.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		return text, b.IsError
	}
	return "", false
}

// userText is a user message's text: a string content as is, or the last
// text block that is not a <system-reminder> (Claude Code puts reminders
// beside the prompt in the same message).
func userText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	last, reminder := "", ""
	for _, b := range blocks {
		switch {
		case b.Type != "text":
		case strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>"):
			reminder = b.Text
		default:
			last = b.Text
		}
	}
	if last == "" {
		return reminder
	}
	return last
}
