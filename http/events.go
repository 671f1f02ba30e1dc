package http

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
)

// Bounds of GET /api/v1/events: an answer holds EventsDefaultLimit
// events unless limit asks for another count, at most EventsMaxLimit; more
// are read in pages with after.
const (
	EventsDefaultLimit = 1000
	EventsMaxLimit     = 10000
)

// eventQuery reads the URL parameters into a query: a number that is not
// one is unprocessable (422); a limit outside 1..EventsMaxLimit, a bad
// level or since is the event log's refusal (400). after, even 0, pages
// forward from it (loop.EventQuery.Forward).
func eventQuery(v url.Values) (loop.EventQuery, error) {
	q := loop.EventQuery{
		Types:    v["type"],
		Standing: v.Get("standing"),
		WorkItem: v.Get("workItem"),
		Level:    v.Get("level"),
		Since:    v.Get("since"),
		Limit:    EventsDefaultLimit,
	}
	if q.Standing != "" {
		if err := loop.CheckName(q.Standing); err != nil {
			return q, err
		}
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return q, unprocessable("query.limit: expected an integer, got '%s'", s)
		}
		if n < 1 || n > EventsMaxLimit {
			return q, loop.Invalid("query.limit: %d is outside 1..%d (default %d); read more in pages: "+
				"ask again with after=<the last seq>", n, EventsMaxLimit, EventsDefaultLimit)
		}
		q.Limit = n
	}
	if s := v.Get("after"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return q, unprocessable("query.after: expected an event sequence number, got '%s'", s)
		}
		q.After, q.Forward = n, true
	}
	return q, nil
}

// seqEvent is an event as GET /api/v1/events sends it: the original's
// envelope with one more key, "seq", last.
type seqEvent struct{ loop.Event }

// MarshalJSON writes the envelope and appends "seq".
func (e seqEvent) MarshalJSON() ([]byte, error) {
	b, err := e.Event.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("event %s: unexpected envelope %q", e.Event.Event, b)
	}
	b = b[:len(b)-1]
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, `"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	return append(b, '}'), nil
}

// events answers GET /api/v1/events: the selected envelopes, oldest first,
// each with its seq; [] when none. Without after, the last limit of them;
// with it, the first limit after it.
func (s *Server) events(c echo.Context) error {
	q, err := eventQuery(c.QueryParams())
	if err != nil {
		return err
	}
	evs, err := s.opt.Events.Events(c.Request().Context(), q)
	if err != nil {
		return err
	}
	out := make([]seqEvent, len(evs))
	for i := range evs {
		out[i] = seqEvent{evs[i]}
	}
	return writeJSON(c, http.StatusOK, out)
}
