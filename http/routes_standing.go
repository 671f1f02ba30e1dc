package http

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
)

// The standing-session routes (original §8.2): GETs read, POSTs run a verb.
// A verb's own refusals come back as errors and leave through errorStatus;
// an ok:false result, or a say that could not deliver, is still 200.

// verbContext is the context a verb runs under: once a state-changing verb
// has begun it runs to its end even if the caller hangs up (the store records
// each transition, so a half-run verb would only leave work for the next).
func verbContext(c echo.Context) context.Context {
	return context.WithoutCancel(c.Request().Context())
}

// listStanding answers GET /standing-sessions: every row, [] when none.
func (s *Server) listStanding(c echo.Context) error {
	rows, err := s.opt.Standing.List(c.Request().Context())
	return listed(c, rows, err)
}

// getStanding answers GET /standing-sessions/one?name=: one row (404 when it
// is neither declared nor recorded; name is required).
func (s *Server) getStanding(c echo.Context) error {
	return one(c, "name", s.opt.Standing.Get)
}

// listed answers a list verb's rows (of either kind): [] when there are
// none, never null.
func listed[R any](c echo.Context, rows []R, err error) error {
	if err != nil {
		return err
	}
	if rows == nil {
		rows = []R{}
	}
	return writeJSON(c, http.StatusOK, rows)
}

// one answers a get verb (of either kind) of the row the query parameter
// key names: 422 when the query lacks it.
func one[R any](c echo.Context, key string, get func(ctx context.Context, id string) (R, error)) error {
	ids, ok := c.QueryParams()[key]
	if !ok || len(ids) == 0 {
		return unprocessable("query.%s: field required", key)
	}
	row, err := get(c.Request().Context(), ids[0])
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, row)
}

// createStanding answers POST /standing-sessions/create (StandingCreateBody:
// name required; autoStart and start default true; harnessArgs null or
// absent inherits routing.harnessArgs).
func (s *Server) createStanding(c echo.Context) error {
	return post(c, func(o *object) loop.StandingCreateRequest {
		req := loop.StandingCreateRequest{Name: o.str("name", true, "")}
		req.Harness, req.Cwd, req.Prompt = spawnKeys(o)
		req.Description, req.HarnessArgs = o.str("description", false, ""), o.list("harnessArgs")
		req.SlackEnabled, req.SlackChannel = o.boolean("slackEnabled", false), o.str("slackChannel", false, "")
		req.AutoStart, req.Start = o.boolean("autoStart", true), o.boolean("start", true)
		req.Restart = o.str("restart", false, "")
		return req
	}, s.opt.Standing.Create, normalise)
}

// deleteStanding answers POST /standing-sessions/delete {name}.
func (s *Server) deleteStanding(c echo.Context) error {
	return post(c, func(o *object) loop.StandingDeleteRequest {
		return loop.StandingDeleteRequest{Name: o.str("name", true, "")}
	}, s.opt.Standing.Delete, normalise)
}

// controlStanding answers POST /standing-sessions/control {name: "" (all),
// verb: start|stop|restart, autoOnly: false} (decisions D4 adds autoOnly).
func (s *Server) controlStanding(c echo.Context) error {
	return post(c, func(o *object) loop.StandingControlRequest {
		return loop.StandingControlRequest{Name: o.str("name", false, ""), Verb: o.str("verb", true, ""), AutoOnly: o.boolean("autoOnly", false)}
	}, s.opt.Standing.Control, normalise)
}

// sayToStanding answers POST /standing-sessions/say {name, text, actor: "",
// wait: false, timeoutSeconds}: 200 with the outcome and, for a waiting
// say, the reply.
func (s *Server) sayToStanding(c echo.Context) error {
	r, err := readTalk(c, "name", nil)
	if err != nil {
		return err
	}
	res, err := s.opt.Standing.Say(r.ctx, loop.StandingSayRequest{Name: r.id, Text: r.text, Actor: r.actor, Wait: r.wait, TimeoutSeconds: r.timeout,
		Caller: agentCaller(c.Request().Context())})
	if err != nil {
		return err
	}
	res.Messages = noneNil(res.Messages)
	return writeJSON(c, http.StatusOK, res)
}

// talkRequest is a say's or a reply's body as both routes read it.
type talkRequest struct {
	id, text, actor string
	wait            bool
	timeout         float64
	// ctx is the verb's: the request's own while it waits (a client that
	// goes away stops the wait; what was pasted stays delivered).
	ctx context.Context
}

// readTalk reads a say's or a reply's body: key (the session's name or
// ref), text and actor, what also reads, then wait and timeoutSeconds (a
// number of seconds above 0, and only with wait true).
func readTalk(c echo.Context, key string, also func(o *object)) (talkRequest, error) {
	o, err := readObject(c)
	if err != nil {
		return talkRequest{}, err
	}
	r := talkRequest{id: o.str(key, true, ""), text: o.str("text", true, ""), actor: o.str("actor", false, "")}
	if also != nil {
		also(o)
	}
	r.wait = o.boolean("wait", false)
	r.timeout = o.number("timeoutSeconds", 0)
	if err := o.err(); err != nil {
		return talkRequest{}, err
	}
	if r.wait && r.timeout < 0 || !r.wait && r.timeout != 0 {
		return talkRequest{}, loop.Invalid("timeoutSeconds %v: give a number of seconds above 0, and only with wait true", r.timeout)
	}
	r.ctx = verbContext(c)
	if r.wait {
		r.ctx = c.Request().Context()
	}
	return r, nil
}

// agentCaller is the agent whose credential carries the request (nil for
// the operator's): a say is framed as its.
func agentCaller(ctx context.Context) *loop.AgentIdentity {
	if caller, ok := CallerFrom(ctx); ok && caller.Kind == CallerAgent {
		return &caller.Agent
	}
	return nil
}

// post answers a POST verb: the body read into an object, the request made
// of it (a mistake in it refused, 400 naming the key), the call made in the
// verb's context, and its result written shaped (arrays never null).
func post[Req, Res any](c echo.Context, request func(*object) Req, call func(context.Context, Req) (Res, error), shaped func(Res) Res) error {
	o, err := readObject(c)
	if err != nil {
		return err
	}
	req := request(o)
	if err := o.err(); err != nil {
		return err
	}
	res, err := call(verbContext(c), req)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, shaped(res))
}

// spawnKeys reads what a create's and a start's bodies share: harness, cwd
// and prompt ("" where absent).
func spawnKeys(o *object) (harness, cwd, prompt string) {
	return o.str("harness", false, ""), o.str("cwd", false, ""), o.str("prompt", false, "")
}

// noneNil is msgs, [] for none: JSON shows [], never null.
func noneNil(msgs []loop.Message) []loop.Message {
	if msgs == nil {
		return []loop.Message{}
	}
	return msgs
}

// normalise makes sessions an array, never null.
func normalise(res loop.StandingControlResult) loop.StandingControlResult {
	if res.Sessions == nil {
		res.Sessions = []loop.StandingRow{}
	}
	return res
}
