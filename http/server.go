package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/redact"
)

// DefaultMaxBodyBytes bounds a request body when the config sets no
// service.maxBodyBytes (decisions D24: a say may carry 128 KiB).
const DefaultMaxBodyBytes = 1 << 20

// Options configures a Server.
type Options struct {
	// Standing runs the standing verbs (lifecycle.StandingVerbs in the
	// service).
	Standing loop.StandingService
	// WorkItems runs the work-item verbs (lifecycle.WorkItemVerbs).
	WorkItems loop.WorkItemService
	// Events answers GET /api/v1/events.
	Events loop.EventLog
	// Recorder appends api.request (nil: not recorded).
	Recorder loop.EventWriter
	// Config returns the config for one request; it is called once per
	// request (config.Holder.Current re-reads a changed file, decisions D3).
	Config func() *config.Config
	// Version is health's and the MCP server info's version (loop.Version).
	Version string
	// Logger receives internal errors, failures to log api.request and
	// refused requests, rate-limited (default: discarded).
	Logger *slog.Logger
	// PID is health's and status's pid (default: this process's).
	PID int
	// Poller runs an inbound poll cycle for POST /api/v1/channels/poll (nil:
	// the route answers that channels are not hosted here).
	Poller Poller
	// URL is the service row's url (default: http://<listener address>,
	// set by Serve).
	URL string
	// Token is the operator's token: every route but the public ones
	// (health) requires it as a bearer token (OperatorToken reads
	// it when the service starts). Empty, with NoAuth false, admits no
	// operator at all.
	Token string
	// TokenSource names where the operator's token lives, for the 401's
	// message (TokenSource of the config: a path, or "$VAR").
	TokenSource string
	// NoAuth is service.auth: none: no credential is asked anywhere.
	NoAuth bool
	// Agents finds the running agent a credential belongs to; such a
	// credential is valid on /mcp and the hook route only. Nil: no agent
	// credential is valid.
	Agents loop.AgentAuthenticator
	// Panes finds the agent whose pane a socket peer runs in: that peer
	// has an agent's rights only. Nil: every socket peer of
	// the service's uid is the operator.
	Panes loop.PaneAgents
	// Hooks applies the payloads of POST /api/v1/hooks; nil:
	// the route answers an internal error.
	Hooks loop.HookSink
	// Approvals lists and decides the approvals and holds the
	// PermissionRequest hooks (hearing.Hearer; nil: those routes answer an
	// internal error).
	Approvals ApprovalDesk
	// Metrics serves GET /metrics and times every request (metrics.Metrics;
	// nil: the route answers 404 and nothing is timed).
	Metrics Metrics
	// StateRoot is the absolute state root whose store the service holds,
	// reported by health so a CLI can tell its own service from another
	// project's (default: the request's config's state root).
	StateRoot string
	// Redactor redacts what the MCP tools answer (nil: the credential
	// shapes only).
	Redactor *redact.Redactor
	// Environment reports the service's own environment for GET
	// /api/v1/environment (nil: the route answers 404).
	Environment func(ctx context.Context) loop.Environment
}

// Metrics is what the service's metrics give the server: the scrape's
// handler (Prometheus's text format) and a timer of each request by its
// route template.
type Metrics interface {
	http.Handler
	// ObserveRequest times one answered request; route is the route
	// template the request matched ("" for none).
	ObserveRequest(method, route string, status int, elapsed time.Duration)
}

// MetricsPath serves the metrics, behind the operator's token.
const MetricsPath = "/metrics"

// Route is one operation of the REST API as registered in code: B2's parity
// test compares these triples with the authored OpenAPI file.
type Route struct {
	Method      string
	Path        string
	OperationID string
}

// Server is the-loop's REST service: echo routes over the root package's
// services,
// one error mapping for every failure (decisions D7), and an api.request
// event for every request that is not a read and that guard let through
// (decisions D4; refused ones go to the log, rate-limited).
type Server struct {
	opt    Options
	log    *slog.Logger
	echo   *echo.Echo
	http   *http.Server
	routes []Route

	mu   sync.Mutex
	url  string
	addr string // the listener's address, once Serve has one

	refused refusalLog // rate-limits the log lines of refused requests

	degraded string // why the service serves less than it should ("": it does not)

	dash *dashboard // the dashboard's login codes and sessions
	hub  *streamHub // GET /api/v1/stream's tailer and subscribers
}

// route is a Route with its handler.
type route struct {
	Route
	handler echo.HandlerFunc
}

// NewServer builds the service and registers its routes.
func NewServer(opt Options) *Server {
	if opt.PID == 0 {
		opt.PID = os.Getpid()
	}
	if opt.Config == nil {
		opt.Config = config.Default
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opt: opt, log: log, url: opt.URL, dash: newDashboard()}
	if opt.Events != nil {
		s.hub = newStreamHub(opt.Events)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.writeError
	e.Use(s.perRequest, s.guard)
	for _, r := range s.table() {
		e.Add(r.Method, echoPath(r.Path), r.handler).Name = r.OperationID
		s.routes = append(s.routes, r.Route)
	}
	// /mcp is not a REST operation: it is left out of Routes (and of the
	// OpenAPI contract) but goes through the same middleware.
	e.Any(MCPPath, s.mcp(s.newMCPHandler()))
	// The dashboard's pages, not REST operations either.
	s.registerPages(e)
	s.echo = e
	s.http = &http.Server{
		Handler:           e,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnContext:       connContext,
	}
	if s.hub != nil {
		s.http.RegisterOnShutdown(s.hub.close) // open streams end, or Shutdown would wait for them
	}
	return s
}

// table is the route table (original §8.2 plus decisions D4's additions).
func (s *Server) table() []route {
	const v1 = "/api/v1"
	routes := []route{
		{Route{http.MethodGet, v1 + "/health", "getHealth"}, s.health},
		{Route{http.MethodGet, v1 + "/status", "getStatus"}, s.status},
		{Route{http.MethodGet, v1 + "/environment", "getEnvironment"}, s.environment},
		{Route{http.MethodGet, v1 + "/events", "listEvents"}, s.events},
		{Route{http.MethodGet, v1 + "/standing-sessions", "listStandingSessions"}, s.listStanding},
		{Route{http.MethodGet, v1 + "/standing-sessions/one", "getStandingSession"}, s.getStanding},
		{Route{http.MethodPost, v1 + "/standing-sessions/create", "createStandingSession"}, s.createStanding},
		{Route{http.MethodPost, v1 + "/standing-sessions/delete", "deleteStandingSession"}, s.deleteStanding},
		{Route{http.MethodPost, v1 + "/standing-sessions/control", "controlStandingSession"}, s.controlStanding},
		{Route{http.MethodPost, v1 + "/standing-sessions/say", "sayToStandingSession"}, s.sayToStanding},
		{Route{http.MethodGet, v1 + "/standing-sessions/transcript", "getStandingSessionTranscript"}, s.transcriptStanding},
		{Route{http.MethodGet, v1 + "/standing-sessions/peek", "peekStandingSession"}, s.peekStanding},
		{Route{http.MethodGet, v1 + "/openapi.yaml", "getOpenAPI"}, s.openAPI},
		{Route{http.MethodPost, HooksPath, "postHook"}, s.postHook},
		{Route{http.MethodGet, MetricsPath, "getMetrics"}, s.metrics},
	}
	routes = append(routes, s.sessionRoutes(v1)...)
	routes = append(routes, s.channelRoutes(v1)...)
	routes = append(routes, s.dashboardRoutes(v1)...)
	routes = append(routes, s.approvalRoutes(v1)...)
	return routes
}

// echoPath is a contract path in echo's syntax: each {param} as :param.
func echoPath(p string) string {
	out := []byte(nil)
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '{':
			out = append(out, ':')
		case '}':
		default:
			out = append(out, p[i])
		}
	}
	return string(out)
}

// Routes returns the registered operations, in registration order.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// Handler returns the service as an http.Handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.echo }

// URL returns the url the service row reports ("" before Serve when
// Options.URL was not set).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Serve answers on ln until Shutdown; it returns nil after a Shutdown.
// A unix listener is the owner's channel (peer.go); Serve may run on
// one of each at once.
func (s *Server) Serve(ln net.Listener) error {
	if _, unix := ln.(*net.UnixListener); !unix {
		s.mu.Lock()
		s.addr = ln.Addr().String()
		if s.url == "" {
			s.url = "http://" + s.addr
		}
		s.mu.Unlock()
	}
	if err := s.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// SetDegraded records why the service serves less than it should (its TCP
// port held by another process): status reports the service degraded and
// not ok. "" clears it.
func (s *Server) SetDegraded(reason string) {
	s.mu.Lock()
	s.degraded = reason
	s.mu.Unlock()
}

// Degraded is the reason SetDegraded recorded.
func (s *Server) Degraded() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.degraded
}

// Shutdown stops accepting requests and waits (until ctx ends) for the ones
// in flight — a start or stop runs to its end.
func (s *Server) Shutdown(ctx context.Context) error { return s.http.Shutdown(ctx) }

// configKey is where perRequest keeps the request's config.
const configKey = "the-loop.config"

// configOf returns the config perRequest chose for this request.
func configOf(c echo.Context) *config.Config {
	if cfg, ok := c.Get(configKey).(*config.Config); ok {
		return cfg
	}
	return config.Default()
}

// isRead reports whether a request only reads (not logged, decisions D4).
func isRead(method string) bool { return method == http.MethodGet || method == http.MethodHead }

// admittedKey marks a request guard let through.
const admittedKey = "the-loop.admitted"

// admitted reports whether guard let the request through (Host, token,
// content type and size all passed).
func admitted(c echo.Context) bool {
	ok, _ := c.Get(admittedKey).(bool)
	return ok
}

// perRequest wraps every request, unknown routes included: it picks the
// config once, runs the rest (guard, then the handler), turns a panic or an
// error into the {"detail": …} response, then logs api.request, with the
// status actually sent, for anything but a read that guard let through. A
// request guard refused (401, 403, 413, 415) goes to the service's log
// only, rate-limited: whoever can make a browser send text/plain POSTs must
// not be able to prune the event log with them.
func (s *Server) perRequest(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		began := time.Now()
		c.Set(configKey, s.opt.Config())
		if err := s.run(next, c); err != nil {
			c.Error(err)
		}
		if s.opt.Metrics != nil {
			s.opt.Metrics.ObserveRequest(c.Request().Method, c.Path(), c.Response().Status, time.Since(began))
		}
		switch {
		case !admitted(c):
			s.logRefused(c)
		case !isRead(c.Request().Method) && !hookPath(c.Request().URL.Path):
			s.logRequest(c) // not per hook: an agent fires several a turn
		}
		return nil
	}
}

// refusalLogEvery is how often at most a refused request is logged; the
// ones in between are counted in the next line.
const refusalLogEvery = 10 * time.Second

// refusalLog rate-limits the log lines of refused requests.
type refusalLog struct {
	mu         sync.Mutex
	next       time.Time // when the next line may be written
	suppressed int       // refusals not logged since the last line
}

// allow reports whether a refusal at now may be logged and how many were
// left out before it.
func (r *refusalLog) allow(now time.Time) (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Before(r.next) {
		r.suppressed++
		return false, 0
	}
	n := r.suppressed
	r.next, r.suppressed = now.Add(refusalLogEvery), 0
	return true, n
}

// logRefused writes a refused request to the service's log, at most one
// line per refusalLogEvery.
func (s *Server) logRefused(c echo.Context) {
	ok, suppressed := s.refused.allow(time.Now())
	if !ok {
		return
	}
	req := c.Request()
	s.log.Warn("refused a request", "method", req.Method, "path", req.URL.Path, "status", c.Response().Status,
		"host", req.Host, "remote", req.RemoteAddr, "refusals_not_logged", suppressed)
}

// run calls the handler, turning a panic into an internal error.
func (s *Server) run(h echo.HandlerFunc, c echo.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			err = loop.Internal("the-loop service failed on %s %s: %v", c.Request().Method, c.Request().URL.Path, p)
		}
	}()
	return h(c)
}

// logRequest appends api.request (original §5.13: method, path, status),
// at debug level: one per state change, it would crowd the events table.
func (s *Server) logRequest(c echo.Context) {
	w := s.opt.Recorder
	if w == nil {
		return
	}
	req := c.Request()
	ev := w.NewEvent("api.request", loop.LevelDebug,
		loop.F("method", req.Method), loop.F("path", req.URL.Path), loop.F("status", c.Response().Status))
	if ev.Source == "" {
		ev.Source = "service"
	}
	ev.TS, ev.PID = ev.TS.UTC(), s.opt.PID
	if err := w.Emit(ev); err != nil {
		s.log.Warn("could not log api.request", "method", req.Method, "path", req.URL.Path, "error", err)
	}
}

// writeJSON sends v as JSON, with <, > and & left as they are (as the
// original's bodies).
func writeJSON(c echo.Context, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return loop.Internal("encoding the response: %w", err)
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	c.Response().WriteHeader(status)
	_, err := c.Response().Write(buf.Bytes())
	return err
}

// health answers GET /api/v1/health: over TCP only "ok" and the version;
// over the socket also the pid and the state root, so the CLI can tell its
// own service from another.
func (s *Server) health(c echo.Context) error {
	root := s.opt.StateRoot
	if root == "" {
		root = configOf(c).StateDir()
	}
	h := loop.Health{Status: "ok", Version: s.opt.Version}
	if _, socket := peerOfRequest(c.Request().Context()); socket {
		h.PID, h.StateRoot, h.Degraded = s.opt.PID, root, s.Degraded() // only the owner learns where and who
	}
	return writeJSON(c, http.StatusOK, h)
}

// status answers GET /api/v1/status: the service row (it answers, so it
// runs) and the standing rows (decisions D6).
func (s *Server) status(c echo.Context) error {
	cfg := configOf(c)
	rows, ok, err := s.opt.Standing.Status(c.Request().Context())
	if err != nil {
		return err
	}
	if rows == nil {
		rows = []loop.StandingRow{}
	}
	svc := loop.ServiceRow{
		Service: "service",
		Enabled: cfg.Service.Enabled,
		Running: true,
		PID:     s.opt.PID,
		URL:     s.URL(),
		Healthy: true,
		MCP:     &loop.MCPSummary{Enabled: cfg.Service.MCPEnabled, Path: "/mcp"},
		// Whether the service, not the CLI asking, can read Slack.
		SlackTokenPresent: new(strings.TrimSpace(os.Getenv(cfg.Slack.BotTokenEnv)) != ""),
	}
	if svc.Degraded = s.Degraded(); svc.Degraded != "" {
		svc.Healthy, ok = false, false
	}
	return writeJSON(c, http.StatusOK, loop.Report{Services: []loop.ServiceRow{svc}, StandingSessions: rows, OK: ok})
}

// metrics answers GET /metrics: the service's series in Prometheus's text
// format (the metrics package lists them).
func (s *Server) metrics(c echo.Context) error {
	if s.opt.Metrics == nil {
		return loop.NotFound("this service serves no metrics")
	}
	s.opt.Metrics.ServeHTTP(c.Response(), c.Request())
	return nil
}

// describe names a request for messages: "POST /api/v1/…".
func describe(r *http.Request) string { return fmt.Sprintf("%s %s", r.Method, r.URL.Path) }
