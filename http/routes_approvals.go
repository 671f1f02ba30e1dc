package http

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/sdk"
)

// ApprovalDesk is what the approval routes need of the service
// (hearing.Hearer): the pending approvals, their decisions, and the
// PermissionRequest hooks that wait for them (decisions D35).
type ApprovalDesk interface {
	loop.ApprovalService
	// AwaitDecision records a PermissionRequest hook's delivery as a
	// pending approval, calls held once it is recorded, and holds until it
	// is settled; ctx ends when the hook goes away (a key answered the
	// dialog).
	AwaitDecision(ctx context.Context, stateRoot string, d loop.HookDelivery, held func()) (loop.ApprovalAnswer, error)
}

// PermissionHookPath is the route a PermissionRequest hook waits on
// (`the-loop-hook … --await-decision`).
const PermissionHookPath = sdk.PermissionHookPath

// approvalRoutes are the approvals' operations.
func (s *Server) approvalRoutes(v1 string) []route {
	return []route{
		{Route{http.MethodGet, v1 + "/approvals", "listApprovals"}, s.listApprovals},
		{Route{http.MethodPost, v1 + "/approvals/{id}", "decideApproval"}, s.decideApproval},
		{Route{http.MethodPost, PermissionHookPath, "awaitPermissionDecision"}, s.awaitPermission},
	}
}

// approvals is the service's desk, or the refusal of a service that has
// none.
func (s *Server) approvals() (ApprovalDesk, error) {
	if s.opt.Approvals == nil {
		return nil, loop.Internal("this service holds no approvals (Options.Approvals is nil); start it with `the-loop serve`")
	}
	return s.opt.Approvals, nil
}

// listApprovals answers GET /approvals?session=: the approvals of one
// standing session, or of all, pending first.
func (s *Server) listApprovals(c echo.Context) error {
	desk, err := s.approvals()
	if err != nil {
		return err
	}
	list, err := desk.Approvals(c.Request().Context(), c.QueryParam("session"))
	for i := range list {
		list[i] = s.redactApproval(list[i])
	}
	return listed(c, list, err)
}

// redactApproval is a with its input redacted as every answer of the
// service is (Options.Redactor: the service's secrets, the agents'
// credentials, the credential shapes): an approver sees what it approves,
// never a secret. An input the redaction left unreadable is kept as a
// JSON string of the redacted text.
func (s *Server) redactApproval(a loop.Approval) loop.Approval {
	text := string(a.Input)
	red := s.opt.Redactor.String(text)
	if red == text {
		return a
	}
	if json.Valid([]byte(red)) {
		a.Input = json.RawMessage(red)
	} else {
		a.Input, _ = json.Marshal(red)
	}
	return a
}

// decideApproval answers POST /approvals/{id} {decision, message,
// session}: the approval as decided; 404 for an unknown id, 409 for one
// settled or another session's, 400 for a bad decision or a message over
// 4 KiB.
func (s *Server) decideApproval(c echo.Context) error {
	desk, err := s.approvals()
	if err != nil {
		return err
	}
	id := c.Param("id")
	return post(c, func(o *object) loop.ApprovalDecision {
		return loop.ApprovalDecision{Decision: o.str("decision", true, ""), Message: o.str("message", false, ""), Session: o.str("session", false, "")}
	}, func(ctx context.Context, d loop.ApprovalDecision) (loop.Approval, error) {
		return desk.Decide(ctx, id, d, "operator")
	}, s.redactApproval)
}

// awaitPermission answers POST /hooks/permission?session=<ref> (the hook
// route's wire format): 200 and its headers as soon as the approval is
// recorded, then, once it is settled, the body: what the hook prints
// (no behavior for nothing). An agent
// waits for its own session only; the request's end — the hook SIGTERMed
// because a key answered the dialog — settles it at the terminal.
func (s *Server) awaitPermission(c echo.Context) error {
	desk, err := s.approvals()
	if err != nil {
		return err
	}
	req := c.Request()
	d, err := readDelivery(c, PermissionHookPath)
	if err != nil {
		return err
	}
	// Once recorded, the status and headers go at once: the hook knows
	// the service holds its request (a service that does not answer so
	// within 2 s is taken as none), and the answer follows as the body.
	wrote := false
	answer, err := desk.AwaitDecision(req.Context(), s.opt.StateRoot, d, func() {
		res := c.Response()
		res.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		res.WriteHeader(http.StatusOK)
		res.Flush()
		wrote = true
	})
	switch {
	case err != nil && !wrote:
		return err
	case err != nil: // settled on the service's side: the hook prints nothing
		s.log.Warn("an approval's wait ended in an error", "session", d.Session, "error", loop.ErrorMessage(err))
		answer = loop.ApprovalAnswer{}
	case !wrote: // not one to ask for: applied as a hook
		return writeJSON(c, http.StatusOK, answer)
	}
	return json.NewEncoder(c.Response()).Encode(answer)
}
