package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	loop "github.com/the-loop-dev/the-loop"
)

// EventsPage is how many events the client asks for at a time when a query
// wants more than one answer holds: the service's most per answer (GET
// /api/v1/events's limit, at most 10,000).
const EventsPage = 10000

// Events returns the events q selects, oldest first, each with its Seq
// (loop.EventLog). To follow the log, ask again with After set to the last
// Seq seen. A Limit of 0 (all) or above EventsPage is read in pages of
// EventsPage, each after the last Seq of the one before, until a page
// comes back short. A bad level or since is ErrInvalid.
func (c *Client) Events(ctx context.Context, q EventsQuery) ([]Event, error) {
	if q.Limit > 0 && q.Limit <= EventsPage {
		return c.eventsPage(ctx, q)
	}
	newest := q.Limit > 0 && q.After == 0 && !q.Forward // the last Limit: keep a window of them
	want := q.Limit
	var out []loop.Event
	page := q
	page.Forward, page.Limit = true, EventsPage
	for {
		evs, err := c.eventsPage(ctx, page)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
		if newest && len(out) > want {
			out = append(out[:0:0], out[len(out)-want:]...)
		}
		if !newest && want > 0 && len(out) >= want {
			return out[:want], nil
		}
		if len(evs) < EventsPage {
			return out, nil
		}
		page.After = evs[len(evs)-1].Seq
	}
}

// eventsPage asks for one answer of GET /api/v1/events.
func (c *Client) eventsPage(ctx context.Context, q EventsQuery) ([]Event, error) {
	var raws []json.RawMessage
	if err := c.c.do(ctx, http.MethodGet, "/api/v1/events", queryValues(q), nil, &raws); err != nil {
		return nil, err
	}
	evs := make([]loop.Event, 0, len(raws))
	for _, raw := range raws {
		ev, err := decodeSeqEvent(raw)
		if err != nil {
			return nil, wrap(loop.Errorf(loop.EINTERNAL, "the-loop service at %s sent an event that does not decode: %w", c.c.where(), err))
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// queryValues encodes q as GET /api/v1/events's parameters (unset ones
// omitted; after is sent, even as 0, when q pages forward).
func queryValues(q loop.EventQuery) url.Values {
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
	if q.After != 0 || q.Forward {
		v.Set("after", strconv.FormatUint(q.After, 10))
	}
	return v
}

// decodeSeqEvent reads one envelope with its "seq" (the last key GET
// /api/v1/events adds) back into an event.
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
