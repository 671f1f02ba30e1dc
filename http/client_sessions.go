package http

import (
	"context"
	"net/http"
	"net/url"

	loop "github.com/the-loop-dev/the-loop"
)

// ListWorkItems returns every work-item session's row (status "" for all,
// else active, paused or closed).
func (c *Client) ListWorkItems(ctx context.Context, status string) ([]loop.WorkItemRow, error) {
	rows := []loop.WorkItemRow{}
	var q url.Values
	if status != "" {
		q = url.Values{"status": {status}}
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/sessions", q, nil, &rows)
	return rows, err
}

// GetWorkItem returns one work item's session (ENOTFOUND when none is
// registered, EINVALID for a ref that is not a work item's).
func (c *Client) GetWorkItem(ctx context.Context, ref string) (loop.WorkItemRow, error) {
	var row loop.WorkItemRow
	err := c.do(ctx, http.MethodGet, "/api/v1/sessions/one", url.Values{"ref": {ref}}, nil, &row)
	return row, err
}

// StartWorkItem starts a work item's session. A start that fails is a
// result with outcome failed, not an error.
func (c *Client) StartWorkItem(ctx context.Context, req loop.WorkItemStartRequest) (loop.WorkItemStartResult, error) {
	var res loop.WorkItemStartResult
	err := c.do(ctx, http.MethodPost, "/api/v1/sessions/start", nil, req, &res)
	return res, err
}

// ReplyWorkItem delivers an operator's reply into a work item's live
// session. It never spawns one; a delivery that failed is a result with
// Delivered false.
func (c *Client) ReplyWorkItem(ctx context.Context, ref, text, actor string) (loop.ReplyResult, error) {
	var res loop.ReplyResult
	body := map[string]any{"ref": ref, "text": text, "actor": actor}
	err := c.do(ctx, http.MethodPost, "/api/v1/sessions/reply", nil, body, &res)
	return res, err
}

// CloseWorkItem closes a work item's session; keepTmux (nil: the config's
// routing.tmux.keepSessionOnClose) says whether its tmux session is kept.
func (c *Client) CloseWorkItem(ctx context.Context, ref string, keepTmux *bool) (loop.CloseResult, error) {
	var res loop.CloseResult
	body := map[string]any{"ref": ref}
	if keepTmux != nil {
		body["keepTmux"] = *keepTmux
	}
	err := c.do(ctx, http.MethodPost, "/api/v1/sessions/close", nil, body, &res)
	return res, err
}
