package http

import (
	"net/http"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
)

// environment answers GET /api/v1/environment: the service's own view of
// its environment (loop.Environment), what `the-loop doctor` asks a running
// service for. A service built without Options.Environment answers 404.
func (s *Server) environment(c echo.Context) error {
	if s.opt.Environment == nil {
		return loop.NotFound("this service does not report its environment")
	}
	env := s.opt.Environment(c.Request().Context())
	if env.Checks == nil {
		env.Checks = []loop.EnvironmentCheck{}
	}
	return writeJSON(c, http.StatusOK, env)
}
