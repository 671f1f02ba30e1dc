package sdk

import (
	"context"
	"net/http"
	"net/url"

	loop "github.com/the-loop-dev/the-loop"
)

// List returns every work-item session's row (status "" for all, else
// active, paused or closed).
func (w *WorkItems) List(ctx context.Context, status string) ([]loop.WorkItemRow, error) {
	rows := []loop.WorkItemRow{}
	var q url.Values
	if status != "" {
		q = url.Values{"status": {status}}
	}
	err := w.c.do(ctx, http.MethodGet, "/api/v1/sessions", q, nil, &rows)
	return rows, err
}

// Get returns one work item's session: ErrNotFound when none is
// registered, ErrInvalid for a ref that is not a work item's.
func (w *WorkItems) Get(ctx context.Context, ref string) (loop.WorkItemRow, error) {
	var row loop.WorkItemRow
	err := w.c.do(ctx, http.MethodGet, "/api/v1/sessions/one", url.Values{"ref": {ref}}, nil, &row)
	return row, err
}

// Start starts a work item's session, or resumes its conversation. A start
// that fails is a result with outcome failed, not an error.
func (w *WorkItems) Start(ctx context.Context, req loop.WorkItemStartRequest) (loop.WorkItemStartResult, error) {
	var res loop.WorkItemStartResult
	err := w.c.do(ctx, http.MethodPost, "/api/v1/sessions/start", nil, req, &res)
	return res, err
}

// Reply delivers an operator's reply into a work item's live session. It
// never spawns one; a delivery that failed is a result with Delivered
// false.
func (w *WorkItems) Reply(ctx context.Context, req loop.WorkItemReplyRequest) (loop.ReplyResult, error) {
	var res loop.ReplyResult
	err := w.c.do(ctx, http.MethodPost, "/api/v1/sessions/reply", nil, req, &res)
	return res, err
}

// Close closes a work item's session; req.KeepTmux (nil: the config's
// routing.tmux.keepSessionOnClose) says whether its tmux session is kept.
func (w *WorkItems) Close(ctx context.Context, req loop.WorkItemCloseRequest) (loop.CloseResult, error) {
	var res loop.CloseResult
	err := w.c.do(ctx, http.MethodPost, "/api/v1/sessions/close", nil, req, &res)
	return res, err
}
