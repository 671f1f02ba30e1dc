package http

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
)

// ErrorBody is every error response's body (decisions D7).
type ErrorBody struct {
	Detail string `json:"detail"`
}

// errorStatus is the one mapping from an error to an HTTP status and the
// detail an operator reads: the-loop's vocabulary by loop.ErrorCode (not
// found 404, invalid 400, unprocessable 422, anything else 500), a body over
// the limit 413, guard's refusals (401, 403, 415: echo errors carrying their
// message) and echo's own errors (unknown route 404, wrong method 405) with
// a message naming the request.
func errorStatus(err error, r *http.Request) (int, string) {
	var tooBig *http.MaxBytesError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf(
			"the request body is larger than %d bytes (service.maxBodyBytes); send less, or raise the limit in the config", tooBig.Limit)
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusNotFound:
			return he.Code, fmt.Sprintf("no route %s in the-loop's API", describe(r))
		case http.StatusMethodNotAllowed:
			return he.Code, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path)
		}
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && m != "" {
			msg = m
		}
		if he.Internal != nil {
			msg += ": " + he.Internal.Error()
		}
		return he.Code, msg
	}
	return loop.HTTPStatus(loop.ErrorCode(err)), loop.ErrorMessage(err)
}

// writeError is echo's error handler: every failure leaves as
// {"detail": …} with errorStatus's code; internal errors are also logged.
func (s *Server) writeError(err error, c echo.Context) {
	if c.Response().Committed {
		s.log.Warn("error after the response was sent", "request", describe(c.Request()), "error", err)
		return
	}
	status, detail := errorStatus(err, c.Request())
	if status >= 500 {
		s.log.Error("request failed", "request", describe(c.Request()), "error", err)
	}
	if err := writeJSON(c, status, ErrorBody{Detail: detail}); err != nil {
		s.log.Warn("could not send the error response", "request", describe(c.Request()), "error", err)
	}
}

// unprocessable is a request that fails validation (422): detail names the
// place as FastAPI does ("body.verb: field required").
func unprocessable(format string, args ...any) *loop.Error {
	return loop.Errorf(loop.EUNPROCESSABLE, format, args...)
}
