package sdk

import (
	"context"
	"net/http"
	"os"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
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
	EventsQuery = loop.EventQuery
)

// Option configures a Client.
type Option func(*options)

// options are a Client's settings before New resolves the token.
type options struct {
	http      *http.Client
	token     string
	tokenSet  bool   // WithToken was given
	stateRoot string // WithStateRoot's directory
}

// WithToken sends "Authorization: Bearer <token>" with every request of a
// TCP client (New): the operator's token (`the-loop token` prints it). An
// agent's own THE_LOOP_AGENT_TOKEN is refused over TCP (ErrForbidden). An
// empty token sends none; a socket client (Local, Socket) sends none
// either.
func WithToken(token string) Option {
	return func(o *options) { o.token, o.tokenSet = token, true }
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
	return func(o *options) { o.http = hc }
}

// Client is a client of the-loop's service: the typed client the CLI uses
// whenever the service answers (decisions D3), and the Go SDK. Its
// namespaces implement the root package's services over REST. It is safe
// for concurrent use.
type Client struct {
	// Standing holds the standing-session operations (loop.StandingService).
	Standing *Standing
	// WorkItems holds the work-item session operations
	// (loop.WorkItemService).
	WorkItems *WorkItems
	// Channels holds the channel operations (an inbound poll cycle).
	Channels *Channels
	// Approvals holds the approvals' operations (loop.ApprovalService):
	// the agents' permission requests and their decisions.
	Approvals *Approvals

	c *conn
}

// Standing is the standing-session namespace of a Client
// (client.Standing.List, …): loop.StandingService over REST.
type Standing struct{ c *conn }

// WorkItems is the work-item session namespace of a Client
// (client.WorkItems.List, …): loop.WorkItemService over REST.
type WorkItems struct{ c *conn }

// Approvals is the approvals' namespace of a Client
// (client.Approvals.List, …): loop.ApprovalService over REST.
type Approvals struct{ c *conn }

var (
	_ loop.ApprovalService = (*Approvals)(nil)
	_ loop.StandingService = (*Standing)(nil)
	_ loop.WorkItemService = (*WorkItems)(nil)
)

// Client is the service's event log over REST.
var _ loop.EventLog = (*Client)(nil)

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
		if token, err := ReadTokenFile(o.stateRoot); err == nil {
			o.token = token
		}
	default:
		o.token = os.Getenv(TokenEnvVar)
	}
	if o.http == nil {
		o.http = &http.Client{}
	}
	c := &conn{base: strings.TrimRight(baseURL, "/"), http: o.http, token: o.token}
	return &Client{Standing: &Standing{c: c}, WorkItems: &WorkItems{c: c}, Channels: &Channels{c: c}, Approvals: &Approvals{c: c}, c: c}
}

// URL returns the service's base URL.
func (c *Client) URL() string { return c.c.base }

// Environment returns the running service's view of its own environment
// (GET /api/v1/environment): its PATH, and tmux and each configured harness
// binary as found there — where it spawns every agent.
func (c *Client) Environment(ctx context.Context) (loop.Environment, error) {
	var env loop.Environment
	err := c.c.do(ctx, http.MethodGet, "/api/v1/environment", nil, nil, &env)
	return env, err
}

// Status returns the status report (what `the-loop status --format json`
// prints): the service row, a row per standing session, and whether every
// session `the-loop start` would start is running.
func (c *Client) Status(ctx context.Context) (Report, error) {
	var rep loop.Report
	err := c.c.do(ctx, http.MethodGet, "/api/v1/status", nil, nil, &rep)
	return rep, err
}
