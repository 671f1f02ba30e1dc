package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
)

// maxResponseBytes bounds what the client reads of one response.
const maxResponseBytes = 256 << 20

// ClientOptions configures a Client.
type ClientOptions struct {
	// HTTP is the client requests go through (default: a client without an
	// overall timeout — a start may take a while; bound calls with ctx).
	HTTP *http.Client
	// Token, when set, is sent as "Authorization: Bearer <Token>"
	// (service.tokenEnv, decisions D24).
	Token string
}

// Client is the typed client of the-loop's REST API: what the CLI uses
// whenever the service answers (decisions D3) and the core of the Go SDK.
// A status other than 2xx comes back as a *loop.Error whose Code is mapped
// back from the status (404 not found, 400 invalid, 422 unprocessable,
// else internal) and whose Message is the body's detail; a service that
// cannot be reached is a *NotRunningError.
type Client struct {
	base  string
	http  *http.Client
	token string
}

// NewClient returns a client of the service at baseURL (e.g.
// "http://127.0.0.1:4114").
func NewClient(baseURL string, opt ClientOptions) *Client {
	hc := opt.HTTP
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), http: hc, token: opt.Token}
}

// URL returns the service's base URL.
func (c *Client) URL() string { return c.base }

// NotRunningError says nothing answers at the service's address (the
// connection was refused or could not be made). errors.As finds it.
type NotRunningError struct {
	URL string
	Err error // the dial failure
}

// Error hints how to start the service.
func (e *NotRunningError) Error() string {
	return fmt.Sprintf("the-loop service is not running at %s — start it with `the-loop start` (or `the-loop serve`)", e.URL)
}

// Unwrap returns the dial failure.
func (e *NotRunningError) Unwrap() error { return e.Err }

// Health asks GET /api/v1/health. It never sends the bearer token: health
// needs none, and whoever answers at the address is not known to be the
// service the token belongs to until its health (its state root) says so.
func (c *Client) Health(ctx context.Context) (loop.Health, error) {
	var h loop.Health
	err := c.send(ctx, http.MethodGet, "/api/v1/health", nil, nil, &h, false)
	return h, err
}

// StatusError is the cause of the *loop.Error a non-2xx answer becomes:
// the HTTP status itself, for callers that tell 401 and 403 apart from
// other failures (errors.As finds it).
type StatusError struct {
	Status int
}

// Error names the status.
func (e *StatusError) Error() string {
	return fmt.Sprintf("the-loop service answered %d %s", e.Status, http.StatusText(e.Status))
}

// HTTPStatus returns the HTTP status err came back with (0 when it is not
// a service's non-2xx answer).
func HTTPStatus(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// ListStanding returns every standing session's row.
func (c *Client) ListStanding(ctx context.Context) ([]loop.StandingRow, error) {
	rows := []loop.StandingRow{}
	err := c.do(ctx, http.MethodGet, "/api/v1/standing-sessions", nil, nil, &rows)
	return rows, err
}

// GetStanding returns one session's row (ENOTFOUND when it is neither
// declared nor recorded).
func (c *Client) GetStanding(ctx context.Context, name string) (loop.StandingRow, error) {
	var row loop.StandingRow
	err := c.do(ctx, http.MethodGet, "/api/v1/standing-sessions/one", url.Values{"name": {name}}, nil, &row)
	return row, err
}

// CreateStanding records (and unless req.Start is false, starts) a session.
// The request is sent as given: set AutoStart and Start explicitly.
func (c *Client) CreateStanding(ctx context.Context, req loop.StandingCreateRequest) (loop.StandingControlResult, error) {
	var res loop.StandingControlResult
	err := c.do(ctx, http.MethodPost, "/api/v1/standing-sessions/create", nil, req, &res)
	return res, err
}

// DeleteStanding stops and forgets a created session.
func (c *Client) DeleteStanding(ctx context.Context, name string) (loop.StandingControlResult, error) {
	var res loop.StandingControlResult
	err := c.do(ctx, http.MethodPost, "/api/v1/standing-sessions/delete", nil, map[string]any{"name": name}, &res)
	return res, err
}

// ControlStanding runs verb (start, stop or restart) on the named session, or on
// all of them (name ""); autoOnly keeps the auto-starting ones (start).
func (c *Client) ControlStanding(ctx context.Context, name, verb string, autoOnly bool) (loop.StandingControlResult, error) {
	var res loop.StandingControlResult
	body := map[string]any{"name": name, "verb": verb, "autoOnly": autoOnly}
	err := c.do(ctx, http.MethodPost, "/api/v1/standing-sessions/control", nil, body, &res)
	return res, err
}

// SayStanding delivers text to a running session. A delivery that failed is a
// result with Delivered false, not an error.
func (c *Client) SayStanding(ctx context.Context, name, text, actor string) (loop.SayResult, error) {
	var res loop.SayResult
	body := map[string]any{"name": name, "text": text, "actor": actor}
	err := c.do(ctx, http.MethodPost, "/api/v1/standing-sessions/say", nil, body, &res)
	return res, err
}

// Status returns the service's report: its own row, the standing rows and ok.
func (c *Client) Status(ctx context.Context) (loop.Report, error) {
	var rep loop.Report
	err := c.do(ctx, http.MethodGet, "/api/v1/status", nil, nil, &rep)
	return rep, err
}

// Events returns the events q selects, oldest first, each with its Seq.
func (c *Client) Events(ctx context.Context, q EventsQuery) ([]loop.Event, error) {
	var raws []json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/api/v1/events", q.values(), nil, &raws); err != nil {
		return nil, err
	}
	evs := make([]loop.Event, 0, len(raws))
	for _, raw := range raws {
		ev, err := decodeSeqEvent(raw)
		if err != nil {
			return nil, loop.Errorf(loop.EINTERNAL, "the-loop service at %s sent an event that does not decode: %w", c.base, err)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// do sends one request (in as JSON when not nil), with the bearer token,
// and decodes a 2xx body into out; any other status is the *loop.Error its
// detail describes.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	return c.send(ctx, method, path, query, in, out, true)
}

// send is do, with the token only when withToken.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, in, out any, withToken bool) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return loop.Internal("encoding the request to %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return loop.Internal("building the request %s %s: %w", method, u, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if withToken && c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "reading the-loop service's answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return loop.Errorf(loop.EINTERNAL, "the-loop service at %s answered %s %s with a body that is not the expected JSON: %w", c.base, method, path, err)
	}
	return nil
}

// statusError maps a non-2xx answer back to the error vocabulary, with the
// body's detail as the message and the status as the cause (*StatusError).
func statusError(status int, body []byte) *loop.Error {
	var eb ErrorBody
	msg := ""
	if json.Unmarshal(body, &eb) == nil && eb.Detail != "" {
		msg = eb.Detail
	} else if s := strings.TrimSpace(string(body)); s != "" && len(s) < 1024 {
		msg = fmt.Sprintf("the-loop service answered %d %s: %s", status, http.StatusText(status), s)
	} else {
		msg = fmt.Sprintf("the-loop service answered %d %s", status, http.StatusText(status))
	}
	return &loop.Error{Code: loop.CodeForHTTPStatus(status), Message: msg, Err: &StatusError{Status: status}}
}

// transportError classifies a request that got no answer: nothing listening
// (or no route to it) is a *NotRunningError; the caller's own cancellation
// or deadline is returned wrapped; anything else is internal.
func (c *Client) transportError(method, path string, err error) error {
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial") {
		return &NotRunningError{URL: c.base, Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return loop.Errorf(loop.EINTERNAL, "the-loop service at %s did not answer %s %s in time: %w", c.base, method, path, err)
	}
	return loop.Errorf(loop.EINTERNAL, "the-loop service at %s did not answer %s %s: %w", c.base, method, path, err)
}
