package http

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/mock"
)

// mockServer is the REST service over hand-written mocks: no tmux, no
// bbolt. Requests go straight to its handler, as from the loopback host,
// with the operator's token.
type mockServer struct {
	t *testing.T
	s *Server
}

func newMockServer(t *testing.T, opt Options) *mockServer {
	opt.Token = "op-token"
	return &mockServer{t: t, s: NewServer(opt)}
}

// do sends one request and returns its status and body.
func (m *mockServer) do(method, target, body string) (int, []byte) {
	m.t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Host = "127.0.0.1:4114"
	req.Header.Set("Authorization", "Bearer op-token")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	m.s.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// TestMock_ListStandingSendsTheServiceRows: GET /standing-sessions is the
// service's rows as JSON, and [] (never null) when there are none.
func TestMock_ListStandingSendsTheServiceRows(t *testing.T) {
	var rows []loop.StandingRow
	m := newMockServer(t, Options{Standing: &mock.StandingService{
		ListFn: func(context.Context) ([]loop.StandingRow, error) { return rows, nil },
	}})
	if status, body := m.do(http.MethodGet, "/api/v1/standing-sessions", ""); status != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("no rows: %d %s", status, body)
	}
	rows = []loop.StandingRow{{Name: "alpha", Status: loop.StatusRunning, Running: true}}
	status, body := m.do(http.MethodGet, "/api/v1/standing-sessions", "")
	var got []loop.StandingRow
	if err := json.Unmarshal(body, &got); status != 200 || err != nil || !reflect.DeepEqual(got, rows) {
		t.Fatalf("rows: %d %s %v", status, body, err)
	}
}

// TestMock_ErrorCodesMapToStatuses: the service's error codes leave as
// 404, 400 and 500 with the message as the detail.
func TestMock_ErrorCodesMapToStatuses(t *testing.T) {
	var err error
	m := newMockServer(t, Options{Standing: &mock.StandingService{
		GetFn: func(context.Context, string) (loop.StandingRow, error) { return loop.StandingRow{}, err },
	}})
	for _, tc := range []struct {
		err    error
		status int
	}{
		{loop.NotFound("standing session 'nobody' is neither declared nor recorded"), 404},
		{loop.Invalid("invalid standing-session name 'No'"), 400},
		{loop.Internal("the store is gone"), 500},
	} {
		err = tc.err
		status, body := m.do(http.MethodGet, "/api/v1/standing-sessions/one?name=x", "")
		var eb ErrorBody
		if jerr := json.Unmarshal(body, &eb); status != tc.status || jerr != nil || eb.Detail != loop.ErrorMessage(tc.err) {
			t.Errorf("%v: %d %s", tc.err, status, body)
		}
	}
}

// TestMock_VerbsGetTypedRequests: the POST bodies reach the services as
// their typed requests.
func TestMock_VerbsGetTypedRequests(t *testing.T) {
	var control loop.StandingControlRequest
	var say loop.StandingSayRequest
	var reply loop.WorkItemReplyRequest
	var closed loop.WorkItemCloseRequest
	m := newMockServer(t, Options{
		Standing: &mock.StandingService{
			ControlFn: func(_ context.Context, r loop.StandingControlRequest) (loop.StandingControlResult, error) {
				control = r
				return loop.StandingControlResult{OK: true}, nil
			},
			SayFn: func(_ context.Context, r loop.StandingSayRequest) (loop.SayResult, error) {
				say = r
				return loop.SayResult{Name: r.Name, Delivered: true}, nil
			},
		},
		WorkItems: &mock.WorkItemService{
			ReplyFn: func(_ context.Context, r loop.WorkItemReplyRequest) (loop.ReplyResult, error) {
				reply = r
				return loop.ReplyResult{WorkItem: r.Ref, Delivered: true}, nil
			},
			CloseFn: func(_ context.Context, r loop.WorkItemCloseRequest) (loop.CloseResult, error) {
				closed = r
				return loop.CloseResult{WorkItem: r.Ref, Closed: true}, nil
			},
		},
	})
	if status, body := m.do(http.MethodPost, "/api/v1/standing-sessions/control", `{"verb":"start","autoOnly":true}`); status != 200 ||
		control != (loop.StandingControlRequest{Verb: "start", AutoOnly: true}) || !strings.Contains(string(body), `"sessions":[]`) {
		t.Errorf("control: %d %s %+v", status, body, control)
	}
	if status, body := m.do(http.MethodPost, "/api/v1/standing-sessions/say", `{"name":"alpha","text":"hi","actor":"ops"}`); status != 200 ||
		say != (loop.StandingSayRequest{Name: "alpha", Text: "hi", Actor: "ops"}) || !strings.Contains(string(body), `"messages":[]`) {
		t.Errorf("say: %d %s %+v", status, body, say)
	}
	if status, body := m.do(http.MethodPost, "/api/v1/sessions/reply", `{"ref":"github:octo/repo#5","text":"v2"}`); status != 200 ||
		reply != (loop.WorkItemReplyRequest{Ref: "github:octo/repo#5", Text: "v2"}) {
		t.Errorf("reply: %d %s %+v", status, body, reply)
	}
	if status, body := m.do(http.MethodPost, "/api/v1/sessions/close", `{"ref":"github:octo/repo#5","keepTmux":false}`); status != 200 ||
		closed.Ref != "github:octo/repo#5" || closed.KeepTmux == nil || *closed.KeepTmux {
		t.Errorf("close: %d %s %+v", status, body, closed)
	}
	// A body that fails validation never reaches the service.
	control = loop.StandingControlRequest{}
	if status, _ := m.do(http.MethodPost, "/api/v1/standing-sessions/control", `{"name":"alpha"}`); status != 422 || control.Name != "" {
		t.Errorf("control without verb: %d, reached the service: %+v", status, control)
	}
}

// TestMock_EventsQueryAndRequestLog: GET /events hands the event log the
// parameters as a query and sends each event with its seq; a POST is
// recorded as api.request with the status sent, a GET is not.
func TestMock_EventsQueryAndRequestLog(t *testing.T) {
	var q loop.EventQuery
	var logged []loop.Event
	m := newMockServer(t, Options{
		PID: 42,
		Events: &mock.EventLog{EventsFn: func(_ context.Context, got loop.EventQuery) ([]loop.Event, error) {
			q = got
			return []loop.Event{{Seq: 7, Event: "standing.started", Level: loop.LevelInfo, Fields: []loop.Field{loop.F("standing", "alpha")}}}, nil
		}},
		Recorder: &mock.EventWriter{
			NewEventFn: func(name, level string, fields ...loop.Field) loop.Event {
				return loop.Event{Event: name, Level: level, Fields: fields}
			},
			EmitFn: func(evs ...loop.Event) error { logged = append(logged, evs...); return nil },
		},
		Standing: &mock.StandingService{SayFn: func(context.Context, loop.StandingSayRequest) (loop.SayResult, error) {
			return loop.SayResult{}, loop.NotFound("standing session 'alpha' has not been started")
		}},
	})
	status, body := m.do(http.MethodGet, "/api/v1/events?type=standing.*&type=channel.*&workItem=standing:alpha&level=info&since=1h&limit=5&after=3", "")
	want := loop.EventQuery{Types: []string{"standing.*", "channel.*"}, WorkItem: "standing:alpha", Level: "info", Since: "1h", Limit: 5, After: 3, Forward: true}
	if status != 200 || !reflect.DeepEqual(q, want) || !strings.Contains(string(body), `"seq":7}`) {
		t.Fatalf("events: %d %s %+v", status, body, q)
	}
	if status, _ := m.do(http.MethodGet, "/api/v1/events?limit=many", ""); status != 422 {
		t.Errorf("limit=many: %d, want 422", status)
	}
	if len(logged) != 0 {
		t.Fatalf("reads were logged: %+v", logged)
	}
	if status, _ := m.do(http.MethodPost, "/api/v1/standing-sessions/say", `{"name":"alpha","text":"hi"}`); status != 404 {
		t.Fatalf("say: %d, want 404", status)
	}
	if len(logged) != 1 || logged[0].Event != "api.request" || logged[0].PID != 42 || logged[0].Source != "service" ||
		logged[0].Field("status") != 404 || logged[0].Field("path") != "/api/v1/standing-sessions/say" {
		t.Fatalf("api.request: %+v", logged)
	}
}

// TestMock_TranscriptAndPeekPassTheQueryToTheService: the read routes
// hand the name and the count (0 when absent) to loop.StandingService and
// send its result as it is; a count that is not a positive integer never
// reaches it (422), and its error codes leave as statuses.
func TestMock_TranscriptAndPeekPassTheQueryToTheService(t *testing.T) {
	type call struct {
		name string
		n    int
	}
	var calls []call
	var peekErr error
	m := newMockServer(t, Options{Standing: &mock.StandingService{
		TranscriptFn: func(_ context.Context, name string, last int) (loop.TranscriptResult, error) {
			calls = append(calls, call{name, last})
			return loop.TranscriptResult{Name: name, Entries: []loop.TranscriptEntry{{Role: loop.RoleUser, Text: "hi"}}}, nil
		},
		PeekFn: func(_ context.Context, name string, lines int) (loop.PeekResult, error) {
			calls = append(calls, call{name, lines})
			return loop.PeekResult{Name: name, TmuxTarget: "loop-standing-" + name, Running: true, Lines: []string{"❯"}}, peekErr
		},
	}})
	status, body := m.do(http.MethodGet, "/api/v1/standing-sessions/transcript?name=alpha&last=3", "")
	var tr loop.TranscriptResult
	if err := json.Unmarshal(body, &tr); status != 200 || err != nil || tr.Name != "alpha" || len(tr.Entries) != 1 || tr.Entries[0].Text != "hi" {
		t.Fatalf("transcript: %d %s %v", status, body, err)
	}
	status, body = m.do(http.MethodGet, "/api/v1/standing-sessions/peek?name=alpha", "")
	var pr loop.PeekResult
	if err := json.Unmarshal(body, &pr); status != 200 || err != nil || pr.TmuxTarget != "loop-standing-alpha" || !pr.Running || len(pr.Lines) != 1 {
		t.Fatalf("peek: %d %s %v", status, body, err)
	}
	for _, q := range []string{"transcript?name=alpha&last=0", "transcript?name=alpha&last=x", "peek?name=alpha&lines=-1", "peek?lines=2"} {
		if status, body := m.do(http.MethodGet, "/api/v1/standing-sessions/"+q, ""); status != 422 {
			t.Errorf("%s: %d %s, want 422", q, status, body)
		}
	}
	if want := []call{{"alpha", 3}, {"alpha", 0}}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("the service was asked %+v, want %+v", calls, want)
	}
	peekErr = loop.NotFound("standing session 'alpha' has no tmux session to peek at")
	if status, body := m.do(http.MethodGet, "/api/v1/standing-sessions/peek?name=alpha&lines=5", ""); status != 404 || !strings.Contains(string(body), "no tmux session to peek at") {
		t.Fatalf("not found: %d %s", status, body)
	}
}
