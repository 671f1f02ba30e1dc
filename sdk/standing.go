package sdk

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	loophttp "github.com/the-loop-dev/the-loop/http"
)

// Standing is the standing-session namespace of a Client
// (client.Standing.List, …).
type Standing struct {
	c *loophttp.Client
}

// CreateOptions defines a standing session at runtime. Its zero values are
// the service's defaults: the session auto-starts with `the-loop start` and
// is started now.
type CreateOptions struct {
	// Name is required: lowercase letters, digits and hyphens, not starting
	// with a hyphen, at most 40.
	Name string
	// Harness is the agent CLI ("" uses routing.defaultHarness, else claude).
	Harness string
	// Cwd is the directory it runs in ("" uses routing.spawnWorkdir).
	Cwd string
	// Prompt is the boot brief.
	Prompt      string
	Description string
	// HarnessArgs are extra harness arguments: nil inherits
	// routing.harnessArgs, a non-nil empty slice means none.
	HarnessArgs  []string
	SlackEnabled bool
	SlackChannel string
	// NoAutoStart leaves it out of `the-loop start`.
	NoAutoStart bool
	// NoStart records it without starting it.
	NoStart bool
}

// request is the REST body the options stand for.
func (o CreateOptions) request() loop.StandingCreateRequest {
	req := loop.StandingCreateRequest{
		Name:         o.Name,
		Harness:      o.Harness,
		Cwd:          o.Cwd,
		Prompt:       o.Prompt,
		Description:  o.Description,
		SlackEnabled: o.SlackEnabled,
		SlackChannel: o.SlackChannel,
		AutoStart:    !o.NoAutoStart,
		Start:        !o.NoStart,
	}
	if o.HarnessArgs != nil {
		args := append([]string{}, o.HarnessArgs...)
		req.HarnessArgs = &args
	}
	return req
}

// List returns every declared or recorded standing session, sorted by name.
func (s *Standing) List(ctx context.Context) ([]Row, error) {
	rows, err := s.c.ListStanding(ctx)
	return rows, wrap(err)
}

// Get returns one session's row; ErrNotFound when it is neither declared
// nor recorded.
func (s *Standing) Get(ctx context.Context, name string) (Row, error) {
	row, err := s.c.GetStanding(ctx, name)
	return row, wrap(err)
}

// Create records a session and, unless o.NoStart, starts it. A name already
// declared or created, or not a valid name, is ErrInvalid.
func (s *Standing) Create(ctx context.Context, o CreateOptions) (ControlResult, error) {
	res, err := s.c.CreateStanding(ctx, o.request())
	return res, wrap(err)
}

// Delete stops and forgets a created session: a declared one is
// ErrInvalid, a name never created ErrNotFound.
func (s *Standing) Delete(ctx context.Context, name string) (ControlResult, error) {
	res, err := s.c.DeleteStanding(ctx, name)
	return res, wrap(err)
}

// Control starts, stops or restarts the named session; name "" starts or
// stops every one (restart needs a name). An unknown verb is ErrInvalid.
func (s *Standing) Control(ctx context.Context, name string, verb Verb) (ControlResult, error) {
	res, err := s.c.ControlStanding(ctx, name, string(verb), false)
	return res, wrap(err)
}

// StartAutoStart starts every session `the-loop start` starts: the declared
// ones with autoStart, and the created ones recorded with it.
func (s *Standing) StartAutoStart(ctx context.Context) (ControlResult, error) {
	res, err := s.c.ControlStanding(ctx, "", string(Start), true)
	return res, wrap(err)
}

// Say delivers text to a running session, naming actor as who speaks. An
// empty text is ErrInvalid, a session not running ErrNotFound; a delivery
// that failed (the agent never got ready) is a result with Delivered false.
func (s *Standing) Say(ctx context.Context, name, text, actor string) (SayResult, error) {
	res, err := s.c.SayStanding(ctx, name, text, actor)
	return res, wrap(err)
}
