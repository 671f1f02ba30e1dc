package sdk

import (
	"context"
	"net/http"
	"net/url"

	loop "github.com/the-loop-dev/the-loop"
)

// Approvals lists the approvals of one standing session ("": every
// session's), pending first, then the newest (GET /api/v1/approvals).
func (a *Approvals) Approvals(ctx context.Context, session string) ([]loop.Approval, error) {
	list := []loop.Approval{}
	var q url.Values
	if session != "" {
		q = url.Values{"session": {session}}
	}
	err := a.c.do(ctx, http.MethodGet, "/api/v1/approvals", q, nil, &list)
	return list, err
}

// List is Approvals: the approvals of session ("": all).
func (a *Approvals) List(ctx context.Context, session string) ([]loop.Approval, error) {
	return a.Approvals(ctx, session)
}

// Decide decides the pending approval id (POST /api/v1/approvals/{id}).
// The service records the operator as its decider; by is not sent (an
// agent decides through MCP, as itself). An unknown id is ErrNotFound, one
// settled already or another session's than d.Session ErrConflict, a bad
// decision or a message over loop.MaxDenyMessage ErrInvalid.
func (a *Approvals) Decide(ctx context.Context, id string, d loop.ApprovalDecision, _ string) (loop.Approval, error) {
	var out loop.Approval
	err := a.c.do(ctx, http.MethodPost, "/api/v1/approvals/"+url.PathEscape(id), nil, d, &out)
	return out, err
}
