package sdk

import (
	"context"
	"net/http"
	"os"

	loop "github.com/the-loop-dev/the-loop"
	loophttp "github.com/the-loop-dev/the-loop/http"
)

// The types the API returns are the-loop's own; these aliases let a program
// use them without importing the root package.
type (
	// Row is one standing session as every surface shows it.
	Row = loop.StandingRow
	// ControlResult is what start, stop, restart, create and delete return.
	ControlResult = loop.StandingControlResult
	// SayResult is what Say returns.
	SayResult = loop.SayResult
	// Report is the status report: the service row, the standing rows, ok.
	Report = loop.Report
	// Health is the service's health answer.
	Health = loop.Health
	// Event is one entry of the event log; Seq is its position.
	Event = loop.Event
	// EventsQuery selects events; its zero value selects every event.
	EventsQuery = loophttp.EventsQuery
)

// Verb is what Standing.Control does.
type Verb string

// The control verbs.
const (
	Start   Verb = "start"
	Stop    Verb = "stop"
	Restart Verb = "restart"
)

// Option configures a Client.
type Option func(*options)

// options are a Client's settings before New resolves the token.
type options struct {
	http      loophttp.ClientOptions
	tokenSet  bool   // WithToken was given
	stateRoot string // WithStateRoot's directory
}

// WithToken sends "Authorization: Bearer <token>" with every request: the
// operator's token (`the-loop token` prints it), or an agent's own
// THE_LOOP_AGENT_TOKEN (valid on /mcp only, so the REST calls of this SDK
// answer it with ErrForbidden).
func WithToken(token string) Option {
	return func(o *options) { o.http.Token, o.tokenSet = token, true }
}

// WithStateRoot reads the operator's token from <dir>/service.token (the
// state root's token file the service creates at its first start). The SDK
// never reads the CLI config: dir is the state root's absolute path.
func WithStateRoot(dir string) Option {
	return func(o *options) { o.stateRoot = dir }
}

// WithHTTPClient sends requests through hc (default: a client without an
// overall timeout — a start may take a while; bound calls with their
// context).
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) { o.http.HTTP = hc }
}

// Client is a client of the-loop's service. It is safe for concurrent use.
type Client struct {
	// Standing holds the standing-session operations.
	Standing *Standing

	c *loophttp.Client
}

// New returns a client of the service at baseURL (e.g.
// "http://127.0.0.1:4114", the default service.host:service.port). The
// token it sends is WithToken's, else the file WithStateRoot names, else
// $THE_LOOP_TOKEN; with none, calls but Health answer ErrUnauthorized. A
// token file that cannot be read (or that others may read) is not an error
// here: the client sends no token and the refusal names the file.
func New(baseURL string, opts ...Option) *Client {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.tokenSet:
	case o.stateRoot != "":
		if token, err := loophttp.ReadTokenFile(o.stateRoot); err == nil {
			o.http.Token = token
		}
	default:
		o.http.Token = os.Getenv(loophttp.TokenEnvVar)
	}
	c := loophttp.NewClient(baseURL, o.http)
	return &Client{Standing: &Standing{c: c}, c: c}
}

// URL returns the service's base URL.
func (c *Client) URL() string { return c.c.URL() }

// Health asks whether the service answers, and its version and pid.
func (c *Client) Health(ctx context.Context) (Health, error) {
	h, err := c.c.Health(ctx)
	return h, wrap(err)
}

// Status returns the status report (what `the-loop status --format json`
// prints): the service row, a row per standing session, and whether every
// session `the-loop start` would start is running.
func (c *Client) Status(ctx context.Context) (Report, error) {
	rep, err := c.c.Status(ctx)
	return rep, wrap(err)
}

// Events returns the events q selects, oldest first, each with its Seq.
// To follow the log, ask again with After set to the last Seq seen.
func (c *Client) Events(ctx context.Context, q EventsQuery) ([]Event, error) {
	evs, err := c.c.Events(ctx, q)
	return evs, wrap(err)
}
