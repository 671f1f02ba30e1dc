package http

import (
	"net/http"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/sdk"
)

// postHook answers POST /api/v1/hooks?session=<ref>: the body is one raw
// Claude Code hook payload, the request in sdk's hook wire format
// (sdk.ReadHookDelivery). An agent (a socket peer in a session's pane)
// may speak only for its own session;
// the route appends no api.request (a hook fires several times a turn).
// 200 {"ok": true} once applied or ignored (an unknown session, another
// conversation).
func (s *Server) postHook(c echo.Context) error {
	d, err := readDelivery(c, HooksPath)
	if err != nil {
		return err
	}
	if s.opt.Hooks == nil {
		return loop.Errorf(loop.EINTERNAL, "POST %s: this service has no hook sink (Options.Hooks is nil); start it with `the-loop serve`", HooksPath)
	}
	if err := s.opt.Hooks.ApplyHook(verbContext(c), s.opt.StateRoot, d); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, hookAnswer{OK: true})
}

// readDelivery is the hook delivery a request to route carries (sdk's
// wire format): an agent speaks for its own session only (403), and over
// the socket its parents are the peer's ancestry as the service read it —
// the process proof a clear needs, never what a client says.
func readDelivery(c echo.Context, route string) (loop.HookDelivery, error) {
	req := c.Request()
	d, err := sdk.ReadHookDelivery(req)
	if err != nil {
		return d, err
	}
	caller, _ := CallerFrom(req.Context())
	if caller.Kind == CallerAgent && ownRef(caller.Agent) != d.Session {
		return d, echo.NewHTTPError(http.StatusForbidden, "POST "+route+" refused: this process runs in "+
			caller.Agent.String()+"'s agent pane; it posts hooks for that session only, not "+d.Session+"'s")
	}
	if caller.Socket {
		d.Parents = caller.chain
	}
	return d, nil
}

// ownRef is the session ref an agent credential speaks for.
func ownRef(a loop.AgentIdentity) string {
	if a.Standing != "" {
		return loop.StandingRef(a.Standing)
	}
	return a.WorkItem
}

// hookAnswer is the hook route's answer.
type hookAnswer struct {
	OK bool `json:"ok"`
}
