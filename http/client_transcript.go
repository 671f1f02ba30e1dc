package http

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	loop "github.com/the-loop-dev/the-loop"
)

// TranscriptStanding returns the last `last` entries (0: the service's
// default, 20) of a standing session's conversation, oldest first
// (ENOTFOUND for an unknown name, EINVALID for a harness whose transcript
// the-loop cannot read).
func (c *Client) TranscriptStanding(ctx context.Context, name string, last int) (loop.TranscriptResult, error) {
	var res loop.TranscriptResult
	err := c.do(ctx, http.MethodGet, "/api/v1/standing-sessions/transcript", countQuery(name, "last", last), nil, &res)
	return res, err
}

// PeekStanding returns the last `lines` lines (0: the service's default,
// 40) of a standing session's agent pane, and where it runs (ENOTFOUND when
// it has no pane of the-loop's).
func (c *Client) PeekStanding(ctx context.Context, name string, lines int) (loop.PeekResult, error) {
	var res loop.PeekResult
	err := c.do(ctx, http.MethodGet, "/api/v1/standing-sessions/peek", countQuery(name, "lines", lines), nil, &res)
	return res, err
}

// countQuery is name=…, with key=n when n is set.
func countQuery(name, key string, n int) url.Values {
	q := url.Values{"name": {name}}
	if n != 0 {
		q.Set(key, strconv.Itoa(n))
	}
	return q
}
