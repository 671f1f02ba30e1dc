package http

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/metrics"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
)

var truncatedRE = regexp.MustCompile(`… \[truncated \d+ bytes\]$`)

// emitMany appends n events in one transaction.
func emitMany(t testing.TB, f *fixture, n int, name string) {
	t.Helper()
	evs := make([]loop.Event, n)
	for i := range evs {
		evs[i] = loop.Event{TS: time.Now().UTC(), Source: "test", Event: name, Level: loop.LevelInfo, PID: 1, Fields: []loop.Field{loop.F("i", i)}}
	}
	if err := f.svc.Emit(evs...); err != nil {
		t.Fatal(err)
	}
}

// plainGet sends a GET outside the contract check: for requests the
// contract itself refuses.
func (f *fixture) plainGet(t testing.TB, path string) response {
	t.Helper()
	resp, err := f.plain.Get(f.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: data}
}

func seqList(evs []loop.Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

func sameSeqs(a, b []loop.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Seq != b[i].Seq {
			return false
		}
	}
	return true
}

// TestEvents_AnAnswerIsBoundedAndTheClientPagesThroughAll: GET
// /api/v1/events holds 1,000 events unless asked, never more than 10,000
// (more is a 400 naming the parameter and the bound), pages forward from
// after, and the SDK's "all" (Limit 0) reads every event in pages.
func TestEvents_AnAnswerIsBoundedAndTheClientPagesThroughAll(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	emitMany(t, f, sdk.EventsPage+50, "test.many")
	all := f.events(store.EventQuery{})
	if len(all) <= sdk.EventsPage {
		t.Fatalf("the log holds %d events, want more than a page", len(all))
	}

	var got []json.RawMessage
	r := f.get("/api/v1/events")
	r.decode(t, &got)
	if r.status != http.StatusOK || len(got) != EventsDefaultLimit {
		t.Fatalf("default answer: %d, %d events; want %d", r.status, len(got), EventsDefaultLimit)
	}
	newest, err := f.client.Events(t.Context(), loop.EventQuery{Limit: 3})
	if err != nil || !sameSeqs(newest, all[len(all)-3:]) {
		t.Fatalf("limit=3: %v %v, want the newest three", seqList(newest), err)
	}
	for _, q := range []string{"limit=10001", "limit=0", "limit=-1"} {
		r := f.plainGet(t, "/api/v1/events?"+q)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "query.limit") || !strings.Contains(string(r.body), "10000") {
			t.Errorf("%s: %d %s; want 400 naming query.limit and 10000", q, r.status, r.body)
		}
	}
	page, err := f.client.Events(t.Context(), loop.EventQuery{Forward: true, Limit: 5})
	if err != nil || !sameSeqs(page, all[:5]) {
		t.Fatalf("after=0&limit=5: %v %v, want the oldest five", seqList(page), err)
	}
	next, err := f.client.Events(t.Context(), loop.EventQuery{After: page[4].Seq, Limit: 5})
	if err != nil || !sameSeqs(next, all[5:10]) {
		t.Fatalf("the next page: %v %v, want the five after %d", seqList(next), err, page[4].Seq)
	}

	// All, through the client: every event, in order, in pages.
	every, err := f.client.Events(t.Context(), loop.EventQuery{})
	if err != nil || !sameSeqs(every, all) {
		t.Fatalf("limit 0 through the client: %d events (%v), want %d", len(every), err, len(all))
	}
	lastMany, err := f.client.Events(t.Context(), loop.EventQuery{Limit: sdk.EventsPage + 20})
	if err != nil || !sameSeqs(lastMany, all[len(all)-sdk.EventsPage-20:]) {
		t.Fatalf("the last %d through the client: %d events (%v)", sdk.EventsPage+20, len(lastMany), err)
	}
	if EventsMaxLimit != sdk.EventsPage {
		t.Errorf("the service answers at most %d events, the client pages by %d", EventsMaxLimit, sdk.EventsPage)
	}
}

// TestStream_ReplaysEverythingMissedInPages: a client that reconnects
// with after=0 gets every event up to the stream's start, in order, though
// the log holds several pages.
func TestStream_ReplaysEverythingMissedInPages(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	emitMany(t, f, 3*streamPage+10, "test.replayed")
	all := f.events(store.EventQuery{})
	s := f.openStream(t, "?after=0")
	ready := s.next(t)
	var r StreamReady
	if err := json.Unmarshal([]byte(ready.data), &r); ready.event != "ready" || err != nil || r.Seq != all[len(all)-1].Seq {
		t.Fatalf("ready %+v (%v), want seq %d", ready, err, all[len(all)-1].Seq)
	}
	for _, want := range all {
		if m := s.next(t); m.event != "event" || m.id != fmt.Sprint(want.Seq) {
			t.Fatalf("replay: %+v, want event %d", m, want.Seq)
		}
	}
}

// synthLog is an event log of n synthetic events (seq 1..n, each with a
// field of size bytes) that records the largest page asked of it.
type synthLog struct {
	n       atomic.Uint64
	size    int
	once    sync.Once
	blob    string // size bytes, made once and shared by every event
	mu      sync.Mutex
	maxPage int // the largest Limit asked for (-1: one asked for all)
}

func (l *synthLog) Events(_ context.Context, q loop.EventQuery) ([]loop.Event, error) {
	n := l.n.Load()
	l.once.Do(func() { l.blob = strings.Repeat("b", l.size) })
	l.mu.Lock()
	if q.Limit == 0 {
		l.maxPage = -1
	} else if l.maxPage >= 0 {
		l.maxPage = max(l.maxPage, q.Limit)
	}
	l.mu.Unlock()
	from := q.After + 1
	if q.Limit > 0 && !q.Forward && q.After == 0 {
		from = max(1, n-uint64(q.Limit)+1)
	}
	var out []loop.Event
	for seq := from; seq <= n && (q.Limit == 0 || len(out) < q.Limit); seq++ {
		out = append(out, loop.Event{Seq: seq, TS: time.Unix(0, 0).UTC(), Source: "test", Event: "test.synth", Level: loop.LevelInfo,
			Fields: []loop.Field{loop.F("blob", l.blob)}})
	}
	return out, nil
}

// streamConfig is the defaults with at most maxSubscribers streams.
func streamConfig(t *testing.T, maxSubscribers int) func() *config.Config {
	cfg := config.Default()
	cfg.StateRoot = t.TempDir()
	cfg.Service.StreamMaxSubscribers = maxSubscribers
	return func() *config.Config { return cfg }
}

// liveServer serves opt on 127.0.0.1:0 until the test ends.
func liveServer(t *testing.T, opt Options) (*Server, string) {
	t.Helper()
	s := NewServer(opt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-done
	})
	return s, "http://" + ln.Addr().String()
}

// TestStream_ReplayReadsTheLogAPageAtATime: the replay of a long log and
// the tailer read at most streamPage events per read, and every event
// still arrives.
func TestStream_ReplayReadsTheLogAPageAtATime(t *testing.T) {
	log := &synthLog{size: 10}
	log.n.Store(5 * streamPage)
	_, url := liveServer(t, Options{Events: log, NoAuth: true, Config: streamConfig(t, 4)})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/api/v1/stream?after=0", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	s := &sse{resp: resp, rd: bufio.NewReader(resp.Body)}
	if m := s.next(t); m.event != "ready" {
		t.Fatalf("first %+v", m)
	}
	log.n.Add(2 * streamPage) // what the tailer then finds
	for seq := 1; seq <= 7*streamPage; seq++ {
		if m := s.next(t); m.id != fmt.Sprint(seq) {
			t.Fatalf("message %+v, want event %d", m, seq)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if log.maxPage < 0 || log.maxPage > streamPage {
		t.Errorf("the stream read %d events at once (-1: all), want at most %d", log.maxPage, streamPage)
	}
}

// TestStream_DropsAClientThatStopsReading: a client that opens the stream
// and never reads again is dropped once a write waits on it longer than
// the stall bound, and its place is free for the next one.
func TestStream_DropsAClientThatStopsReading(t *testing.T) {
	log := &synthLog{size: 60 << 10}
	s, url := liveServer(t, Options{Events: log, NoAuth: true, Config: streamConfig(t, 1)})
	s.hub.stall = 200 * time.Millisecond
	// A small receive buffer: the client's side holds little of what the
	// server writes.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/v1/stream HTTP/1.1\r\nHost: %s\r\n\r\n", strings.TrimPrefix(url, "http://"))
	testkit.Eventually(t, func() bool { return s.hub.subscribers() == 1 }, 30*time.Second, "the stream request to reach the handler")
	// More than the socket buffers hold (60 MB), less than the
	// subscriber's buffer: only a write bound drops it.
	log.n.Store(streamBuffer - 24)
	testkit.Eventually(t, func() bool { return s.hub.subscribers() == 0 }, 60*time.Second, "the stalled client to be dropped")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/api/v1/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the next client: %d, want 200 (the stalled one's place is free)", resp.StatusCode)
	}
}

// TestMetrics_MadeUpMethodsAndPathsKeepTheLabelsBounded: hundreds of
// unauthenticated requests with made-up methods and paths leave /metrics
// with HTTP's own methods and "other", and route templates only.
func TestMetrics_MadeUpMethodsAndPathsKeepTheLabelsBounded(t *testing.T) {
	f := newFixture(t, fixtureOptions{meter: metrics.New("test-version")})
	for i := range 300 {
		path := fmt.Sprintf("/no/such/%d", i)
		if i%3 == 0 {
			path = fmt.Sprintf("/api/v1/standing-sessions/%d", i)
		}
		req, err := http.NewRequest(fmt.Sprintf("M%04dX", i), f.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := f.plain.Transport.(tokenTransport).next.RoundTrip(req) // no credential
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	status, samples, body := f.scrape()
	if status != http.StatusOK {
		t.Fatalf("scrape: %d %s", status, body)
	}
	known := map[string]bool{metrics.LabelOther: true}
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"} {
		known[m] = true
	}
	routes := map[string]bool{"unmatched": true, metrics.LabelOther: true}
	for _, r := range f.server.Routes() {
		routes[r.Path] = true
	}
	seen := map[string]bool{}
	for _, s := range samples {
		if s.Name != "the_loop_http_request_duration_seconds_count" {
			continue
		}
		if m := s.Labels["method"]; !known[m] {
			t.Errorf("method label %q", m)
		}
		if r := s.Labels["route"]; !routes[r] && !seen[r] {
			seen[r] = true
			t.Errorf("route label %q is not a route template", r)
		}
	}
	if got := metrics.Sum(samples, "the_loop_http_request_duration_seconds_count", map[string]string{"method": metrics.LabelOther}); got != 300 {
		t.Errorf("requests with made-up methods counted: %v, want 300", got)
	}
}

// TestHooks_AFloodOfHugeNotificationsLeavesTheStoreAndItsAnswersBounded:
// 100 Notification hooks with 1 MB messages, posted to the hook route of
// a running session, leave the event log within eventLog.maxBytes, each
// field within 64 KiB, and GET /api/v1/events and /stream?after=0 answer
// with no more than the log holds.
func TestHooks_AFloodOfHugeNotificationsLeavesTheStoreAndItsAnswersBounded(t *testing.T) {
	const maxBytes = 2 << 20
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}, maxEventBytes: maxBytes})
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`); r.status != http.StatusOK {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	row, err := f.client.Standing.Get(t.Context(), "alpha")
	if err != nil || row.HarnessSessionID == "" {
		t.Fatalf("row %+v %v", row, err)
	}
	msg := strings.Repeat("m", 1_000_000)
	payload, _ := json.Marshal(map[string]string{"hook_event_name": "Notification", "session_id": row.HarnessSessionID, "message": msg})
	for range 100 {
		req, _ := http.NewRequest(http.MethodPost, f.url+HooksPath+"?session=standing:alpha", strings.NewReader(string(payload)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("hook: %d %s", resp.StatusCode, body)
		}
	}
	all := f.events(store.EventQuery{})
	var stored int
	heard := 0
	for _, ev := range all {
		b, _ := json.Marshal(ev)
		stored += len(b) + 8
		if ev.Event == "standing.attention" {
			heard++
			if m, _ := ev.Field("message").(string); len(m) > store.MaxEventField || !truncatedRE.MatchString(m) {
				t.Fatalf("a stored message of %d bytes, ending %q", len(m), m[max(0, len(m)-30):])
			}
		}
	}
	if heard == 0 || stored > maxBytes {
		t.Fatalf("the log holds %d bytes (%d Notifications heard), want at most %d and at least one heard", stored, heard, maxBytes)
	}

	r := f.plainGet(t, "/api/v1/events")
	if r.status != http.StatusOK || len(r.body) > maxBytes+len(all)*64 {
		t.Fatalf("GET /api/v1/events: %d, %d bytes; the log holds %d", r.status, len(r.body), stored)
	}
	s := f.openStream(t, "?after=0")
	ready := s.next(t)
	var rd StreamReady
	_ = json.Unmarshal([]byte(ready.data), &rd)
	streamed := 0
	for seq := uint64(0); seq < rd.Seq; {
		m := s.next(t)
		streamed += len(m.data)
		fmt.Sscan(m.id, &seq)
	}
	if streamed > maxBytes+len(all)*64 {
		t.Fatalf("the stream replayed %d bytes; the log holds %d", streamed, stored)
	}
}
