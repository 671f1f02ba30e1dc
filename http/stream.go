package http

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
)

// GET /api/v1/stream: server-sent events, one per event the log
// records. Every process that appends to the log while the service runs
// does so through the service (it holds the store), but through many code
// paths, so the stream does not hook them: one tailer per service reads the
// log (Options.Events, loop.EventLog) past the last sequence number it saw
// every streamPoll while anybody listens, and fans what it finds out to the
// subscribers. Idle, that is one read finding nothing; with nobody
// listening, nothing at all.
//
// The messages: first `ready` ({"seq": the log's last sequence number}),
// then `event` for each event (id: its seq; data: the envelope of GET
// /api/v1/events, seq included), and a keep-alive comment every
// service.stream.keepAliveSeconds. A client that reconnects with
// Last-Event-ID (or ?after=) first gets every event it missed, read and
// written streamPage at a time. Open streams beyond
// service.stream.maxSubscribers are 503; service.stream.enabled: false is
// 404. A client that takes more than streamStall to accept one write (it
// stopped reading) is dropped, so stalled clients hold no slot.

const (
	// streamPoll is how often the tailer reads the log while subscribed.
	streamPoll = 25 * time.Millisecond
	// streamBuffer is how many events a subscriber may lag behind; one
	// further behind is cut off (its client reconnects and catches up).
	streamBuffer = 1024
	// streamPage is how many events one read of the log takes, for the
	// tailer and for a reconnecting client's replay: no answer is built
	// whole.
	streamPage = 256
	// streamStall bounds each write to a client: one that has not taken
	// it by then is dropped.
	streamStall = 30 * time.Second
)

// streamHub is the service's one tailer and its subscribers.
type streamHub struct {
	log loop.EventLog
	// ctx is the tailer's reads' context, cancelled by close.
	ctx    context.Context
	cancel context.CancelFunc

	// stall bounds each write to a client (streamStall).
	stall time.Duration

	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	last    uint64 // the last sequence number handed out
	running bool   // the tailer runs
	done    chan struct{}
	closed  bool
}

// subscriber is one open stream.
type subscriber struct {
	events chan loop.Event
	gone   chan struct{} // closed when the hub cuts it off or shuts down
	once   sync.Once
}

func (sub *subscriber) cut() { sub.once.Do(func() { close(sub.gone) }) }

func newStreamHub(log loop.EventLog) *streamHub {
	ctx, cancel := context.WithCancel(context.Background())
	return &streamHub{log: log, ctx: ctx, cancel: cancel, stall: streamStall, subs: map[*subscriber]struct{}{}, done: make(chan struct{})}
}

// errStreamFull is a subscription over the cap.
type errStreamFull struct{ limit int }

func (e errStreamFull) Error() string {
	return "the event stream has its " + strconv.Itoa(e.limit) + " subscribers already (service.stream.maxSubscribers); close another dashboard tab or raise the limit"
}

// lastSeq reads the log's last sequence number.
func (h *streamHub) lastSeq(ctx context.Context) (uint64, error) {
	evs, err := h.log.Events(ctx, loop.EventQuery{Limit: 1})
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	return evs[len(evs)-1].Seq, nil
}

// subscribe adds a subscriber and returns the sequence number it starts
// after: every later event reaches it.
func (h *streamHub) subscribe(ctx context.Context, limit int) (*subscriber, uint64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, 0, loop.Internal("the-loop service is shutting down; reconnect to the new one")
	}
	if len(h.subs) >= limit {
		return nil, 0, errStreamFull{limit}
	}
	if !h.running {
		seq, err := h.lastSeq(ctx)
		if err != nil {
			return nil, 0, err
		}
		h.last, h.running = seq, true
		go h.tail()
	}
	sub := &subscriber{events: make(chan loop.Event, streamBuffer), gone: make(chan struct{})}
	h.subs[sub] = struct{}{}
	return sub, h.last, nil
}

// unsubscribe removes a subscriber; the tailer stops with the last one.
func (h *streamHub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, sub)
	sub.cut()
}

// close ends every stream (the server shuts down: http.Server.Shutdown does
// not end open responses by itself).
func (h *streamHub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	h.cancel()
	close(h.done)
	for sub := range h.subs {
		sub.cut()
	}
}

// subscribers counts the open streams.
func (h *streamHub) subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// tail reads the log every streamPoll while there are subscribers.
func (h *streamHub) tail() {
	tick := time.NewTicker(streamPoll)
	defer tick.Stop()
	for {
		select {
		case <-h.done:
			h.mu.Lock()
			h.running = false
			h.mu.Unlock()
			return
		case <-tick.C:
		}
		h.mu.Lock()
		after, n := h.last, len(h.subs)
		if n == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		h.fanOut(after)
	}
}

// fanOut reads the log after seq a page at a time, until a page comes back
// short, and hands each event to every subscriber.
func (h *streamHub) fanOut(after uint64) {
	for {
		evs, err := h.log.Events(h.ctx, loop.EventQuery{After: after, Forward: true, Limit: streamPage})
		if err != nil || len(evs) == 0 {
			return // a failed read is tried again at the next tick
		}
		h.mu.Lock()
		for _, ev := range evs {
			for sub := range h.subs {
				select {
				case sub.events <- ev:
				default: // too far behind: cut off, its client catches up on reconnect
					delete(h.subs, sub)
					sub.cut()
				}
			}
		}
		after = evs[len(evs)-1].Seq
		h.last = after
		h.mu.Unlock()
		if len(evs) < streamPage {
			return
		}
	}
}

// StreamReady is the data of the stream's first message.
type StreamReady struct {
	// Seq is the last sequence number of the log when the stream began:
	// every event after it follows.
	Seq uint64 `json:"seq"`
}

// stream answers GET /api/v1/stream.
func (s *Server) stream(c echo.Context) error {
	cfg := configOf(c)
	if !cfg.Service.StreamEnabled {
		return loop.Errorf(loop.ENOTFOUND, "the event stream is turned off (service.stream.enabled: false); poll GET /api/v1/events?after=<seq> instead, or set it to true")
	}
	after, resume, err := streamAfter(c)
	if err != nil {
		return err
	}
	if s.hub == nil {
		return loop.Internal("the event stream has no event log to read (the server was built without Options.Events)")
	}
	ctx := c.Request().Context()
	sub, start, err := s.hub.subscribe(ctx, max(1, cfg.Service.StreamMaxSubscribers))
	if err != nil {
		if full, ok := err.(errStreamFull); ok {
			return echo.NewHTTPError(http.StatusServiceUnavailable, full.Error())
		}
		return err
	}
	defer s.hub.unsubscribe(sub)
	var missed []loop.Event
	if resume = resume && after < start; resume {
		// The first page is read before the answer begins: a log that
		// cannot be read is still a status.
		if missed, err = s.opt.Events.Events(ctx, replayPage(after)); err != nil {
			return err
		}
	}
	w := newSSEWriter(c.Response(), s.hub.stall)
	defer w.close()
	ready, _ := json.Marshal(StreamReady{Seq: start})
	w.buf.WriteString("retry: 1000\nevent: ready\ndata: ")
	w.buf.Write(ready)
	w.buf.WriteString("\n\n")
	if resume && s.replay(ctx, w, missed, start) != nil {
		return nil // the client went away, or the log could not be read: it reconnects
	}
	if w.send() != nil {
		return nil // the client went away
	}
	keepAlive := time.NewTicker(time.Duration(max(1, cfg.Service.StreamKeepAliveSeconds)) * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.gone:
			return nil
		case ev := <-sub.events:
			if err := writeStreamEvent(&w.buf, ev); err != nil {
				return nil
			}
			// Whatever else is queued goes in the same write.
			for more := true; more; {
				select {
				case ev := <-sub.events:
					if err := writeStreamEvent(&w.buf, ev); err != nil {
						return nil
					}
				default:
					more = false
				}
			}
			if w.send() != nil {
				return nil
			}
		case <-keepAlive.C:
			w.buf.WriteString(": keep-alive\n\n")
			if w.send() != nil {
				return nil
			}
		}
	}
}

// streamAfter reads where a reconnecting client left off: Last-Event-ID,
// else ?after=; resume is false when neither is given.
func streamAfter(c echo.Context) (after uint64, resume bool, err error) {
	for _, raw := range []string{c.Request().Header.Get("Last-Event-ID"), c.QueryParam("after")} {
		if raw == "" {
			continue
		}
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return 0, false, unprocessable("query.after: expected an event sequence number, got '%s'", raw)
		}
		return n, true, nil
	}
	return 0, false, nil
}

// replayPage is the query of one page of a replay after seq.
func replayPage(after uint64) loop.EventQuery {
	return loop.EventQuery{After: after, Forward: true, Limit: streamPage}
}

// replay writes the events after the client's seq up to start (the
// subscription delivers the later ones), a page at a time: page is the
// first, each later one is read once the one before is written.
func (s *Server) replay(ctx context.Context, w *sseWriter, page []loop.Event, start uint64) error {
	for {
		for _, ev := range page {
			if ev.Seq > start {
				return nil
			}
			if err := writeStreamEvent(&w.buf, ev); err != nil {
				return err
			}
		}
		if err := w.send(); err != nil {
			return err
		}
		if len(page) < streamPage || page[len(page)-1].Seq >= start {
			return nil
		}
		var err error
		if page, err = s.opt.Events.Events(ctx, replayPage(page[len(page)-1].Seq)); err != nil {
			return err
		}
	}
}

// sseWriter writes a stream's messages: what buf holds goes in one write,
// flushed, which the client must take within stall.
type sseWriter struct {
	w     *echo.Response
	rc    *http.ResponseController
	stall time.Duration
	buf   bytes.Buffer
}

// newSSEWriter sends the stream's headers and its status. The connection
// closes with the stream: no later request inherits its write deadline.
func newSSEWriter(w *echo.Response, stall time.Duration) *sseWriter {
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream; charset=utf-8")
	h.Set(echo.HeaderCacheControl, "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set(echo.HeaderConnection, "close")
	w.WriteHeader(http.StatusOK)
	// The controller of the writer beneath echo's: its Flush reports a
	// failed write (echo's Flush has no error to give).
	return &sseWriter{w: w, rc: http.NewResponseController(w.Writer), stall: stall}
}

// send writes and flushes buf, failing once the client has not taken it
// within stall.
func (s *sseWriter) send() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall))
	_, err := s.w.Write(s.buf.Bytes())
	s.buf.Reset()
	if err == nil {
		err = s.rc.Flush()
	}
	return err
}

// close bounds the answer's last write (its end) as it bounds the others:
// a stalled client cut off by the tailer holds no goroutine either.
func (s *sseWriter) close() { _ = s.rc.SetWriteDeadline(time.Now().Add(s.stall)) }

// writeStreamEvent appends one `event` message: id, then the envelope on
// one data line (JSON has no raw newlines).
func writeStreamEvent(buf *bytes.Buffer, ev loop.Event) error {
	data, err := seqEvent{ev}.MarshalJSON()
	if err != nil {
		return err
	}
	buf.WriteString("id: ")
	buf.WriteString(strconv.FormatUint(ev.Seq, 10))
	buf.WriteString("\nevent: event\ndata: ")
	buf.Write(data)
	buf.WriteString("\n\n")
	return nil
}
