package http

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// EventsQuery selects events for GET /api/v1/events (decisions D4, D5).
// Its zero value selects every event.
type EventsQuery struct {
	// Types are event-name patterns ("standing.*"); any may match.
	Types []string
	// Standing selects events of one standing session (field standing).
	Standing string
	// WorkItem selects events of one work item; "standing:<name>" also
	// selects that standing session's events (decisions D19).
	WorkItem string
	// Level is a minimum level: debug, info, warning or error.
	Level string
	// Since is an ISO-8601 time or an age (30s, 15m, 2h, 7d).
	Since string
	// Limit keeps the last Limit matching events; 0 means all.
	Limit int
	// After selects events with a sequence number above it (--follow).
	After uint64
}

// values encodes the query as URL parameters (unset ones omitted).
func (q EventsQuery) values() url.Values {
	v := url.Values{}
	for _, t := range q.Types {
		v.Add("type", t)
	}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("standing", q.Standing)
	set("workItem", q.WorkItem)
	set("level", q.Level)
	set("since", q.Since)
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.After != 0 {
		v.Set("after", strconv.FormatUint(q.After, 10))
	}
	return v
}

// storeQuery reads the URL parameters into a store query: a number that is
// not one is unprocessable (422); a bad level or since is the store's or
// ParseSince's refusal (400).
func storeQuery(v url.Values, now time.Time) (store.EventQuery, error) {
	q := store.EventQuery{
		Types:    v["type"],
		Standing: v.Get("standing"),
		WorkItem: v.Get("workItem"),
		MinLevel: v.Get("level"),
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
		q.Limit = n
	}
	if s := v.Get("after"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return q, unprocessable("query.after: expected an event sequence number, got '%s'", s)
		}
		q.After = n
	}
	since, err := store.ParseSince(v.Get("since"), now)
	if err != nil {
		return q, err
	}
	q.Since = since
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

// decodeSeqEvent reads one envelope with its "seq" back into an event.
func decodeSeqEvent(raw json.RawMessage) (loop.Event, error) {
	var ev loop.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, err
	}
	for i := len(ev.Fields) - 1; i >= 0; i-- {
		if ev.Fields[i].Key != "seq" {
			continue
		}
		n, err := strconv.ParseUint(fmt.Sprint(ev.Fields[i].Value), 10, 64)
		if err != nil {
			return ev, fmt.Errorf("event %s: seq %v is not a sequence number", ev.Event, ev.Fields[i].Value)
		}
		ev.Seq = n
		ev.Fields = append(ev.Fields[:i:i], ev.Fields[i+1:]...)
		break
	}
	return ev, nil
}

// events answers GET /api/v1/events: the selected envelopes, oldest first,
// each with its seq; [] when none.
func (s *Server) events(c echo.Context) error {
	q, err := storeQuery(c.QueryParams(), time.Now())
	if err != nil {
		return err
	}
	var evs []loop.Event
	if err := s.opt.Lifecycle.DB.View(func(tx *store.Tx) error {
		evs, err = tx.Events(q)
		return err
	}); err != nil {
		return err
	}
	out := make([]seqEvent, len(evs))
	for i := range evs {
		out[i] = seqEvent{evs[i]}
	}
	return writeJSON(c, http.StatusOK, out)
}
