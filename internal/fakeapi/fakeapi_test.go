package fakeapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/fakeapi"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// do posts a Messages request (safe off the test's goroutine).
func do(url, sessionID, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if sessionID != "" {
		req.Header.Set("x-claude-code-session-id", sessionID)
	}
	return http.DefaultClient.Do(req)
}

func post(t *testing.T, url, sessionID, body string) *http.Response {
	t.Helper()
	resp, err := do(url, sessionID, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sse reads a server-sent-event stream into (event, data) pairs.
func sse(t *testing.T, r io.Reader) (events []string, data []map[string]any) {
	t.Helper()
	events, data, err := readSSE(r)
	if err != nil {
		t.Fatal(err)
	}
	return events, data
}

// readSSE is sse without the test (safe off the test's goroutine).
func readSSE(r io.Reader) (events []string, data []map[string]any, err error) {
	sc := bufio.NewScanner(r)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				return nil, nil, fmt.Errorf("data line %q: %v", line, err)
			}
			if d["type"] != event {
				return nil, nil, fmt.Errorf("event %q carries data of type %v", event, d["type"])
			}
			events, data = append(events, event), append(data, d)
		}
	}
	return events, data, sc.Err()
}

const streamBody = `{"model":"claude-x","stream":true,"messages":[
 {"role":"user","content":"first"},
 {"role":"assistant","content":[{"type":"text","text":"ok"}]},
 {"role":"user","content":[{"type":"text","text":"<system-reminder>ignore me</system-reminder>"},{"type":"text","text":"second prompt"},{"type":"text","text":"<system-reminder>me too</system-reminder>"}]}]}`

func TestStream_MinimalSequenceAndRecord(t *testing.T) {
	s := fakeapi.Start(t)
	resp := post(t, s.URL, "conv-1", streamBody)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events, data := sse(t, resp.Body)
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if strings.Join(events, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", events, want)
	}
	if delta := data[2]["delta"].(map[string]any); delta["type"] != "text_delta" || delta["text"] != "answer to: second prompt" {
		t.Fatalf("delta %v", delta)
	}
	if d := data[4]["delta"].(map[string]any); d["stop_reason"] != "end_turn" {
		t.Fatalf("message_delta %v", d)
	}
	if m := data[0]["message"].(map[string]any); m["model"] != "claude-x" || m["role"] != "assistant" {
		t.Fatalf("message_start %v", m)
	}

	turns := s.Turns()
	if len(turns) != 1 {
		t.Fatalf("%d turns", len(turns))
	}
	got := turns[0]
	if got.SessionID != "conv-1" || !got.Stream || got.Model != "claude-x" || got.Query != "beta=true" ||
		got.LastUserText != "second prompt" || got.Answer != "answer to: second prompt" {
		t.Fatalf("recorded %+v", got)
	}
}

func TestNonStreaming_JSONMessage(t *testing.T) {
	s := fakeapi.Start(t)
	s.SetAnswer(func(text string) string { return strings.ToUpper(text) })
	resp := post(t, s.URL, "", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	defer resp.Body.Close()
	var msg struct {
		Type       string `json:"type"`
		Role       string `json:"role"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type, Text string
		} `json:"content"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.Role != "assistant" || msg.StopReason != "end_turn" || len(msg.Content) != 1 || msg.Content[0].Text != "HI" {
		t.Fatalf("message %+v", msg)
	}
	s.SetAnswer(nil)
	resp2 := post(t, s.URL, "", `{"messages":[{"role":"user","content":"back"}]}`)
	resp2.Body.Close()
	if turns := s.Turns(); len(turns) != 2 || turns[0].Stream || turns[1].Answer != "answer to: back" {
		t.Fatalf("turns %+v", turns)
	}
}

func TestHello_OtherPaths_BadBody(t *testing.T) {
	s := fakeapi.Start(t)
	for _, m := range []string{http.MethodHead, http.MethodGet} {
		req, _ := http.NewRequest(m, s.URL+"/api/hello", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s /api/hello: %d", m, resp.StatusCode)
		}
	}
	resp, err := http.Get(s.URL + "/v1/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("unknown path: %d", resp.StatusCode)
	}
	bad := post(t, s.URL, "", "not json")
	bad.Body.Close()
	if bad.StatusCode != 400 {
		t.Fatalf("bad body: %d", bad.StatusCode)
	}
	if n := len(s.Requests()); n != 4 {
		t.Fatalf("%d requests recorded, want 4", n)
	}
	if n := len(s.Turns()); n != 1 { // the bad body still was a POST /v1/messages
		t.Fatalf("%d turns", n)
	}
}

func TestHold_UntilRelease(t *testing.T) {
	s := fakeapi.Start(t)
	s.Hold(0)
	done := make(chan []string, 1)
	go func() {
		resp, err := do(s.URL, "c", streamBody)
		if err != nil {
			done <- []string{err.Error()}
			return
		}
		defer resp.Body.Close()
		ev, _, err := readSSE(resp.Body)
		if err != nil {
			ev = append(ev, err.Error())
		}
		done <- ev
	}()
	// The held request is recorded at once, and nothing is answered.
	testkit.Eventually(t, func() bool { return len(s.Turns()) == 1 }, 5*time.Second, "the held request to be recorded")
	select {
	case ev := <-done:
		t.Fatalf("answered while held: %v", ev)
	case <-time.After(100 * time.Millisecond):
	}
	s.Release()
	if ev := testkit.Await(t, done, "an answer after Release"); len(ev) != 6 {
		t.Fatalf("events after release %v", ev)
	}
	// Released: later requests are answered straight away.
	resp := post(t, s.URL, "c", streamBody)
	ev, _ := sse(t, resp.Body)
	resp.Body.Close()
	if len(ev) != 6 {
		t.Fatalf("events %v", ev)
	}
}

func TestHold_ForADuration(t *testing.T) {
	s := fakeapi.Start(t)
	const d = 300 * time.Millisecond
	s.Hold(d)
	start := time.Now()
	resp := post(t, s.URL, "c", streamBody)
	ev, _ := sse(t, resp.Body)
	resp.Body.Close()
	if took := time.Since(start); took < d || len(ev) != 6 {
		t.Fatalf("answered after %v with %v, want a full answer after at least %v", took, ev, d)
	}
}

func TestClose_ReleasesHeldAnswers(t *testing.T) {
	s := fakeapi.New()
	s.Hold(0)
	errc := make(chan error, 1)
	go func() {
		resp, err := do(s.URL, "c", streamBody)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	testkit.Eventually(t, func() bool { return len(s.Turns()) == 1 }, 5*time.Second, "the held request")
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	testkit.Await(t, closed, "Close blocked on a held answer")
	// An answer or a closed connection: either way, not stuck.
	testkit.Await(t, errc, "the held client to return after Close")
}

func TestStep_ReleasesTheHeldAndHoldsTheNext(t *testing.T) {
	s := fakeapi.Start(t)
	s.Hold(0)
	answered := func() <-chan int {
		done := make(chan int, 1)
		go func() {
			resp, err := do(s.URL, "c", streamBody)
			if err != nil {
				done <- -1
				return
			}
			defer resp.Body.Close()
			ev, _, _ := readSSE(resp.Body)
			done <- len(ev)
		}()
		return done
	}
	first := answered()
	testkit.Eventually(t, func() bool { return len(s.Turns()) == 1 }, 5*time.Second, "the first held request")
	s.Step()
	if n := testkit.Await(t, first, "Step to let the held answer go"); n != 6 {
		t.Fatalf("the first answer had %d events", n)
	}
	second := answered()
	testkit.Eventually(t, func() bool { return len(s.Turns()) == 2 }, 5*time.Second, "the second request")
	select {
	case n := <-second:
		t.Fatalf("the request after Step was answered (%d events), want it held", n)
	case <-time.After(100 * time.Millisecond):
	}
	s.Release()
	if n := testkit.Await(t, second, "an answer after Release"); n != 6 {
		t.Fatalf("the second answer had %d events", n)
	}
}
