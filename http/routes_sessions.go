package http

import (
	"net/http"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
)

// sessionRoutes are the work-item session operations (original §8.2's
// GET /sessions and /sessions/one, decisions D4's start, reply and close).
// Refs are work-item refs only: a standing ref is refused as invalid (400),
// so neither namespace reaches the other through the API.
func (s *Server) sessionRoutes(v1 string) []route {
	return []route{
		{Route{http.MethodGet, v1 + "/sessions", "listSessions"}, s.listSessions},
		{Route{http.MethodGet, v1 + "/sessions/one", "getSession"}, s.getSession},
		{Route{http.MethodPost, v1 + "/sessions/start", "startSession"}, s.startSession},
		{Route{http.MethodPost, v1 + "/sessions/reply", "replySession"}, s.replySession},
		{Route{http.MethodPost, v1 + "/sessions/close", "closeSession"}, s.closeSession},
	}
}

// listSessions answers GET /api/v1/sessions[?status=active|paused|closed]:
// every work-item session's row, [] when none.
func (s *Server) listSessions(c echo.Context) error {
	rows, err := s.opt.WorkItems.List(c.Request().Context(), c.QueryParam("status"))
	return listed(c, rows, err)
}

// getSession answers GET /api/v1/sessions/one?ref=: one work item's
// session (404 when none is registered; ref is required).
func (s *Server) getSession(c echo.Context) error {
	return one(c, "ref", s.opt.WorkItems.Get)
}

// startSession answers POST /api/v1/sessions/start {ref, harness: "",
// cwd: "", prompt: "", slack: false}. A start that fails is still 200, with
// outcome failed and exitCode 1.
func (s *Server) startSession(c echo.Context) error {
	return post(c, func(o *object) loop.WorkItemStartRequest {
		req := loop.WorkItemStartRequest{Ref: o.str("ref", true, "")}
		req.Harness, req.Cwd, req.Prompt = spawnKeys(o)
		req.Slack = o.boolean("slack", false)
		return req
	}, s.opt.WorkItems.Start, func(res loop.WorkItemStartResult) loop.WorkItemStartResult {
		res.Messages = noneNil(res.Messages)
		return res
	})
}

// replySession answers POST /api/v1/sessions/reply {ref, text, actor: "",
// comment: true}. comment is accepted for the original's body and ignored:
// nothing is posted to the ticket. A reply never spawns: no session, a
// closed one or one without a live pane is 404; a delivery that fails is
// 200 with delivered false.
func (s *Server) replySession(c echo.Context) error {
	r, err := readTalk(c, "ref", func(o *object) { _ = o.boolean("comment", true) })
	if err != nil {
		return err
	}
	res, err := s.opt.WorkItems.Reply(r.ctx, loop.WorkItemReplyRequest{Ref: r.id, Text: r.text, Actor: r.actor, Wait: r.wait, TimeoutSeconds: r.timeout})
	if err != nil {
		return err
	}
	res.Messages = noneNil(res.Messages)
	return writeJSON(c, http.StatusOK, res)
}

// closeSession answers POST /api/v1/sessions/close {ref, keepTmux: null}:
// keepTmux overrides routing.tmux.keepSessionOnClose when it is a boolean.
// A work item with no active session is 200 with closed false.
func (s *Server) closeSession(c echo.Context) error {
	return post(c, func(o *object) loop.WorkItemCloseRequest {
		return loop.WorkItemCloseRequest{Ref: o.str("ref", true, ""), KeepTmux: o.optionalBool("keepTmux")}
	}, s.opt.WorkItems.Close, func(res loop.CloseResult) loop.CloseResult {
		res.Messages = noneNil(res.Messages)
		return res
	})
}

// optionalBool reads a boolean field that may be absent or null (nil).
func (o *object) optionalBool(key string) *bool {
	raw, ok := o.raw[key]
	if !ok || kindOf(raw) == "null" {
		return nil
	}
	b := o.boolean(key, false)
	return &b
}
