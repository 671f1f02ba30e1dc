package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// The hook route's wire format, written by `the-loop hook` (NewHookRequest,
// through Client.PostHook) and read by the service's route
// (ReadHookDelivery): POST HooksPath?session=<ref>, the body the raw hook
// payload, the delivery's flags in the headers below. A delivery's Parents
// never travel: the service reads the poster's ancestry from the kernel.
const (
	// HooksPath is the hook route.
	HooksPath = "/api/v1/hooks"
	// PermissionHookPath is the route a PermissionRequest hook waits on
	// for its decision (AwaitDecision): the same wire format, answered
	// with a loop.ApprovalAnswer once the approval is settled.
	PermissionHookPath = "/api/v1/hooks/permission"
	// HookTruncatedHeader is "true" when the payload was cut at
	// lifecycle.MaxHookPayload (loop.HookDelivery.Truncated).
	HookTruncatedHeader = "X-The-Loop-Hook-Truncated"
	// HookDeliveryHeader is the delivery's id (loop.HookDelivery.ID): the
	// same delivery replayed from the spool is not applied twice.
	HookDeliveryHeader = "X-The-Loop-Hook-Delivery"
)

// hookSessionParam is the query parameter naming the delivery's session.
const hookSessionParam = "session"

// NewHookRequest is the POST that hands d to the service at baseURL (e.g.
// "http://the-loop.sock" over a socket): d.Session in the query, d.Payload
// as the body, d.Truncated and d.ID in their headers. d.Parents is not
// sent.
func NewHookRequest(ctx context.Context, baseURL string, d loop.HookDelivery) (*http.Request, error) {
	return newHookRequest(ctx, baseURL, HooksPath, d)
}

// newHookRequest is NewHookRequest to route.
func newHookRequest(ctx context.Context, baseURL, route string, d loop.HookDelivery) (*http.Request, error) {
	u := strings.TrimRight(baseURL, "/") + route + "?" + url.Values{hookSessionParam: {d.Session}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(d.Payload))
	if err != nil {
		return nil, loop.Internal("building the hook request %s: %w", u, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if d.Truncated {
		req.Header.Set(HookTruncatedHeader, "true")
	}
	if d.ID != "" {
		req.Header.Set(HookDeliveryHeader, d.ID)
	}
	return req, nil
}

// ReadHookDelivery is the delivery a hook request carries (what
// NewHookRequest wrote): the session from the query (trimmed), the whole
// body as the payload, the truncation flag and the id from the headers.
// Parents stays nil: whoever serves the route fills it from what it knows
// of the poster, never from the request.
func ReadHookDelivery(r *http.Request) (loop.HookDelivery, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return loop.HookDelivery{}, err
	}
	return loop.HookDelivery{
		Session:   strings.TrimSpace(r.URL.Query().Get(hookSessionParam)),
		Payload:   body,
		Truncated: r.Header.Get(HookTruncatedHeader) == "true",
		ID:        r.Header.Get(HookDeliveryHeader),
	}, nil
}

// PostHook hands d to the service (POST HooksPath, NewHookRequest) with
// the client's token, if any (over the socket none is sent: the service
// knows the poster from the kernel). A non-2xx answer is an *Error whose
// status HTTPStatus tells; no answer is a transport error (HTTPStatus 0).
func (c *Client) PostHook(ctx context.Context, d loop.HookDelivery) error {
	req, err := NewHookRequest(ctx, c.c.base, d)
	if err != nil {
		return err
	}
	if c.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.c.token)
	}
	resp, err := c.c.http.Do(req)
	if err != nil {
		return wrap(c.c.transportError(http.MethodPost, HooksPath, err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return wrap(loop.Errorf(loop.EINTERNAL, "reading the-loop service's answer to POST %s: %w", HooksPath, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return wrap(statusError(resp.StatusCode, data))
	}
	return nil
}

// AwaitDecision posts d, a PermissionRequest hook's payload, to
// PermissionHookPath and waits for the approval it asks to be settled:
// the answer is what the hook prints (no Behavior: nothing). The service
// answers its status as soon as it holds the request; one that does not
// within heldWithin (0: no bound) is taken as none, an error with no
// status. Give ctx the hook's own bound; its end ends the wait at the
// service too.
func (c *Client) AwaitDecision(ctx context.Context, d loop.HookDelivery, heldWithin time.Duration) (loop.ApprovalAnswer, error) {
	var a loop.ApprovalAnswer
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := newHookRequest(ctx, c.c.base, PermissionHookPath, d)
	if err != nil {
		return a, err
	}
	if c.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.c.token)
	}
	var late *time.Timer
	if heldWithin > 0 {
		late = time.AfterFunc(heldWithin, cancel)
	}
	resp, err := c.c.http.Do(req)
	if late != nil && !late.Stop() && err == nil {
		resp.Body.Close()
		err = context.DeadlineExceeded
	}
	if err != nil {
		if late != nil && ctx.Err() != nil {
			err = fmt.Errorf("the service did not take the request within %s: %w", heldWithin, err)
		}
		return a, wrap(c.c.transportError(http.MethodPost, PermissionHookPath, err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return a, wrap(loop.Errorf(loop.EINTERNAL, "reading the-loop service's answer to POST %s: %w", PermissionHookPath, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return a, wrap(statusError(resp.StatusCode, data))
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return a, wrap(loop.Errorf(loop.EINTERNAL, "the-loop service's answer to POST %s is not an approval answer: %v", PermissionHookPath, err))
	}
	return a, nil
}
