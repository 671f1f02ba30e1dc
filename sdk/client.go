package sdk

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

// conn is the transport every namespace of a Client shares: the base URL,
// the HTTP client and the bearer token. A status other than 2xx comes back
// as an *Error wrapping a *loop.Error whose Code is mapped back from the
// status (404 not found, 400 invalid, 422 unprocessable, else internal) and
// whose Message is the body's detail; a service that cannot be reached is
// an *Error wrapping a *NotRunningError.
type conn struct {
	base   string
	http   *http.Client
	token  string
	socket string // the unix socket requests go to ("": base's host over TCP)
}

// where names the service for messages: its socket, else its URL.
func (c *conn) where() string {
	if c.socket != "" {
		return c.socket
	}
	return c.base
}

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
	err := c.c.send(ctx, http.MethodGet, "/api/v1/health", nil, nil, &h, false)
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

// do sends one request (in as JSON when not nil), with the bearer token,
// and decodes a 2xx body into out; any other status is the *loop.Error its
// detail describes.
func (c *conn) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	return c.send(ctx, method, path, query, in, out, true)
}

// send is do, with the token only when withToken; its error is an *Error.
func (c *conn) send(ctx context.Context, method, path string, query url.Values, in, out any, withToken bool) error {
	return wrap(c.exchange(ctx, method, path, query, in, out, withToken))
}

// exchange is one request and its answer.
func (c *conn) exchange(ctx context.Context, method, path string, query url.Values, in, out any, withToken bool) error {
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
		return loop.Errorf(loop.EINTERNAL, "the-loop service at %s answered %s %s with a body that is not the expected JSON: %w", c.where(), method, path, err)
	}
	return nil
}

// errorBody is every error response's body (decisions D7).
type errorBody struct {
	Detail string `json:"detail"`
}

// statusError maps a non-2xx answer back to the error vocabulary, with the
// body's detail as the message and the status as the cause (*StatusError).
func statusError(status int, body []byte) *loop.Error {
	var eb errorBody
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
func (c *conn) transportError(method, path string, err error) error {
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial") {
		return &NotRunningError{URL: c.where(), Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return loop.Errorf(loop.EINTERNAL, "the-loop service at %s did not answer %s %s in time: %w", c.where(), method, path, err)
	}
	return loop.Errorf(loop.EINTERNAL, "the-loop service at %s did not answer %s %s: %w", c.where(), method, path, err)
}
