package sdk

import (
	"context"
	"net/http"
	"net/url"

	loop "github.com/the-loop-dev/the-loop"
)

// List returns every declared or recorded standing session, sorted by name.
func (s *Standing) List(ctx context.Context) ([]Row, error) {
	rows := []loop.StandingRow{}
	err := s.c.do(ctx, http.MethodGet, "/api/v1/standing-sessions", nil, nil, &rows)
	return rows, err
}

// Get returns one session's row; ErrNotFound when it is neither declared
// nor recorded.
func (s *Standing) Get(ctx context.Context, name string) (Row, error) {
	var row loop.StandingRow
	err := s.c.do(ctx, http.MethodGet, "/api/v1/standing-sessions/one", url.Values{"name": {name}}, nil, &row)
	return row, err
}

// Create records a session and, unless req.Start is false, starts it. The
// request is sent as given: set AutoStart and Start explicitly. A name
// already declared or created, or not a valid name, is ErrInvalid.
func (s *Standing) Create(ctx context.Context, req loop.StandingCreateRequest) (ControlResult, error) {
	var res loop.StandingControlResult
	err := s.c.do(ctx, http.MethodPost, "/api/v1/standing-sessions/create", nil, req, &res)
	return res, err
}

// Delete stops and forgets a created session: a declared one is
// ErrInvalid, a name never created ErrNotFound.
func (s *Standing) Delete(ctx context.Context, req loop.StandingDeleteRequest) (ControlResult, error) {
	var res loop.StandingControlResult
	err := s.c.do(ctx, http.MethodPost, "/api/v1/standing-sessions/delete", nil, req, &res)
	return res, err
}

// Control starts, stops or restarts the named session; name "" starts or
// stops every one (restart needs a name), AutoOnly keeping the
// auto-starting ones. An unknown verb is ErrInvalid.
func (s *Standing) Control(ctx context.Context, req loop.StandingControlRequest) (ControlResult, error) {
	var res loop.StandingControlResult
	err := s.c.do(ctx, http.MethodPost, "/api/v1/standing-sessions/control", nil, req, &res)
	return res, err
}

// Say delivers text to a running session, naming the actor who speaks. An
// empty text is ErrInvalid, a session not running ErrNotFound; a delivery
// that failed (the agent never got ready, or never took it) is a result
// with Delivered false. The result's Outcome says how it was taken; with
// req.Wait the call returns once the session answered this message (Reply)
// or req.TimeoutSeconds passed: give ctx a deadline beyond it, or none.
func (s *Standing) Say(ctx context.Context, req loop.StandingSayRequest) (SayResult, error) {
	var res loop.SayResult
	err := s.c.do(ctx, http.MethodPost, "/api/v1/standing-sessions/say", nil, req, &res)
	return res, err
}

// Status returns the standing rows of the service's status report and
// whether every session that should run does.
func (s *Standing) Status(ctx context.Context) ([]Row, bool, error) {
	var rep loop.Report
	if err := s.c.do(ctx, http.MethodGet, "/api/v1/status", nil, nil, &rep); err != nil {
		return nil, false, err
	}
	return rep.StandingSessions, rep.OK, nil
}
