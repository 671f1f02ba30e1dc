package http

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/proctree"
	"github.com/the-loop-dev/the-loop/sdk"
)

// The control plane's own boundary (decisions D24), for REST and
// /mcp alike. On the service's unix socket (peer.go) the kernel says who
// calls: another uid is refused, a process in an agent's pane has an
// agent's rights (agentMay), anyone else is the operator; no Host, token
// or cookie is looked at there. Over TCP the service can spawn agent
// sessions and type into them, so it answers only
//   - requests whose Host header it knows (403 otherwise: a page that
//     rebinds its own DNS name to 127.0.0.1 still sends its own name),
//   - requests that carry a credential (401 otherwise, naming where the
//     operator's token lives): the operator's token as Authorization:
//     Bearer (an agent's credential is refused with 403). The public
//     routes (health, so `start` can tell the service is up) need none;
//     service.auth: none asks for none anywhere,
//   - state changes sent as application/json (415 otherwise: a web page
//     cannot send that cross-origin without a preflight, which the service
//     never grants),
//   - bodies no larger than service.maxBodyBytes (413 otherwise).
// Each refusal leaves through errorStatus as {"detail": …}, and the
// process that binds the address refuses to start where it would be
// reachable from outside without the operator's say-so (CheckServe).

// healthPath answers without a credential.
const healthPath = "/api/v1/health"

// HooksPath is the agents' hook route: over the socket, a process in an
// agent's pane posts there for its own session only (its wire format is
// sdk's: sdk.NewHookRequest, sdk.ReadHookDelivery).
const HooksPath = sdk.HooksPath

// hookPath reports whether path is one of the agents' hook routes, which
// no api.request records (an agent fires several hooks a turn) and no
// dashboard session may use.
func hookPath(path string) bool { return path == HooksPath || path == PermissionHookPath }

// isPublic reports whether a request needs no credential: health, the
// dashboard's pages, login and assets (they hold no data), and the
// exchange of a login code (the code is the credential).
func isPublic(method, path string) bool {
	if method == http.MethodPost && path == DashboardSessionPath {
		return true
	}
	return (method == http.MethodGet || method == http.MethodHead) && (path == healthPath || webPublic(path))
}

// agentMay reports whether an agent may send a request: what its MCP tools
// do (list, status, read, say framed as itself), /mcp itself and the hook
// route (its own session's only, postHook), nothing else.
func agentMay(method, path string) bool {
	const v1 = "/api/v1"
	switch path {
	case MCPPath, HooksPath, PermissionHookPath:
		return true
	case v1 + "/standing-sessions/say":
		return method == http.MethodPost
	case healthPath, v1 + "/status", v1 + "/standing-sessions", v1 + "/standing-sessions/one",
		v1 + "/standing-sessions/transcript", v1 + "/standing-sessions/peek":
		return method == http.MethodGet || method == http.MethodHead
	}
	return false
}

// peerRefusal refuses a socket request whose peer could not be read or
// runs as another uid (403).
func peerRefusal(r *http.Request, pc peerConn) error {
	if pc.err != nil {
		return echo.NewHTTPError(http.StatusForbidden, describe(r)+" refused: the service could not read the socket peer's credentials ("+pc.err.Error()+")")
	}
	if pc.peer.UID != ownUID {
		return echo.NewHTTPError(http.StatusForbidden, describe(r)+" refused: the socket peer runs as uid "+strconv.Itoa(pc.peer.UID)+
			"; this service answers its own uid ("+strconv.Itoa(ownUID)+") only; run the-loop as the user who started the service")
	}
	return nil
}

// socketCaller is who sent a socket request of the operator's uid: the
// agent whose pane the peer runs in (its pid's ancestry, read when it
// connected, reaches one of a session's panes), limited to agentMay, else
// the operator. Health looks no further.
func (s *Server) socketCaller(r *http.Request, pc peerConn) (Caller, error) {
	if isPublic(r.Method, r.URL.Path) {
		return Caller{Kind: CallerPublic, Socket: true, Peer: pc.peer}, nil
	}
	caller := Caller{Kind: CallerOperator, Socket: true, Peer: pc.peer, chain: proctree.PIDs(pc.procs)}
	if s.opt.Panes == nil || !proctree.UnderTmux(pc.procs) {
		return caller, nil
	}
	id, ok := s.opt.Panes.AgentOfProcess(r.Context(), caller.chain)
	if !ok {
		return caller, nil
	}
	caller.Kind, caller.Agent = CallerAgent, id
	if !agentMay(r.Method, r.URL.Path) {
		return Caller{}, echo.NewHTTPError(http.StatusForbidden, describe(r)+" refused: this process runs in "+id.String()+
			"'s agent pane, which has an agent's rights only (list, status, read, say); run this from the operator's shell")
	}
	return caller, nil
}

// Caller kinds.
const (
	CallerPublic   = "public"   // a public route, no credential looked at
	CallerOperator = "operator" // the operator's token (or service.auth: none)
	CallerAgent    = "agent"    // one agent's own credential
)

// Caller is who sent a request guard let through.
type Caller struct {
	// Kind is CallerPublic, CallerOperator or CallerAgent.
	Kind string
	// Agent names the agent when Kind is CallerAgent.
	Agent loop.AgentIdentity
	// Dashboard is true when a dashboard session's secret, not the
	// operator's token, made the caller the operator.
	Dashboard bool
	// Socket is true when the request came in on the service's socket:
	// Peer is then who sent it, as the kernel says.
	Socket bool
	Peer   Peer
	// chain is the socket peer's pid and its ancestors, nearest first.
	chain []int
}

// callerKey is the request context's key of the Caller.
type callerKey struct{}

// CallerFrom returns the caller guard admitted (ok false outside a request
// guard let through).
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// guard enforces decisions D24 on every request, unknown routes included: Host, then
// credential, then content type, then the body's size — a caller who may
// not talk to the service learns nothing else about its request.
func (s *Server) guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		cfg := configOf(c)
		req := c.Request()
		pc, onSocket := peerOfRequest(req.Context())
		if onSocket {
			if err := peerRefusal(req, pc); err != nil {
				return err
			}
		} else if !s.hostAllowed(req.Host, cfg) {
			return echo.NewHTTPError(http.StatusForbidden, hostRefusal(req.Host))
		}
		var caller Caller
		var err error
		if onSocket {
			caller, err = s.socketCaller(req, pc)
		} else {
			caller, err = s.authenticate(c)
		}
		if err != nil {
			return err
		}
		req = req.WithContext(context.WithValue(req.Context(), callerKey{}, caller))
		c.SetRequest(req)
		if changesState(req.Method) && !isJSON(req.Header.Get(echo.HeaderContentType)) {
			return echo.NewHTTPError(http.StatusUnsupportedMediaType, contentTypeRefusal(req))
		}
		limit := cfg.Service.MaxBodyBytes
		if limit <= 0 {
			limit = DefaultMaxBodyBytes
		}
		if req.ContentLength > limit {
			return &http.MaxBytesError{Limit: limit}
		}
		req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
		c.Set(admittedKey, true)
		return next(c)
	}
}

// authenticate finds who sent the request: 401 without a credential it
// knows (public routes aside), 403 for an agent credential off the agent
// routes. Tokens are compared in constant time.
func (s *Server) authenticate(c echo.Context) (Caller, error) {
	req := c.Request()
	if s.opt.NoAuth {
		return Caller{Kind: CallerOperator}, nil
	}
	if isPublic(req.Method, req.URL.Path) {
		return Caller{Kind: CallerPublic}, nil
	}
	token, ok := bearer(req.Header.Get(echo.HeaderAuthorization))
	if ok && s.opt.Token != "" && secretEqual(token, s.opt.Token) {
		return Caller{Kind: CallerOperator}, nil
	}
	if ok && s.opt.Agents != nil {
		if _, found := s.opt.Agents.AgentFor(req.Context(), token); found {
			return Caller{}, echo.NewHTTPError(http.StatusForbidden, describe(req)+
				" refused: an agent credential (THE_LOOP_AGENT_TOKEN) is not valid over TCP; agents reach the service over its socket (`the-loop mcp`, `the-loop hook`), and TCP takes the operator's token")
		}
	}
	if ok && s.dashboardSession(req) {
		return Caller{Kind: CallerOperator, Dashboard: true}, nil
	}
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="the-loop"`)
	return Caller{}, echo.NewHTTPError(http.StatusUnauthorized, tokenRefusal(req, s.opt.TokenSource))
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// secretEqual compares two secrets in constant time (over digests, so the
// length does not leak either).
func secretEqual(got, want string) bool {
	g := sha256.Sum256([]byte(got))
	w := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// hostAllowed reports whether host (the request's Host header) is one the
// service answers to: the address it listens on and the loopback names on
// its port (decisions D24's defaults — what the CLI and a local MCP client send), plus
// every service.allowedHosts entry. A Host without a port means port 80.
func (s *Server) hostAllowed(host string, cfg *config.Config) bool {
	host = normaliseHost(host)
	if host == "" {
		return false
	}
	for _, h := range s.defaultHosts(cfg) {
		if host == h {
			return true
		}
	}
	for _, h := range cfg.Service.AllowedHosts {
		if host == normaliseHost(h) {
			return true
		}
	}
	return false
}

// defaultHosts are decisions D24's defaults: service.host:service.port as configured
// (what the CLI dials) and, for the address the service listens on (the
// configured one before Serve), that address and the loopback names on its
// port.
func (s *Server) defaultHosts(cfg *config.Config) []string {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	if addr == "" {
		addr = cfg.Service.Addr()
	}
	hosts := []string{normaliseHost(cfg.Service.Addr())}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return hosts
	}
	return append(hosts,
		normaliseHost(net.JoinHostPort(host, port)),
		"localhost:"+port,
		"127.0.0.1:"+port,
		"[::1]:"+port,
	)
}

// normaliseHost lower-cases a Host value and gives it a port (80 when it
// has none), so "LOCALHOST:4114" and "localhost:4114" are one host.
func normaliseHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if h == "" {
		return ""
	}
	if _, _, err := net.SplitHostPort(h); err == nil {
		return h
	}
	return net.JoinHostPort(strings.Trim(h, "[]"), "80")
}

func hostRefusal(host string) string {
	return "the-loop does not answer to Host " + strconv.Quote(host) +
		" (a DNS-rebinding guard); reach it as localhost or 127.0.0.1 on its port, or add the name (host:port) to service.allowedHosts"
}

// tokenRefusal words a 401: what was wrong and where the operator's token
// lives (from: a path or "$VAR (service.tokenEnv)"), never a token.
func tokenRefusal(r *http.Request, from string) string {
	what := "no bearer token"
	if r.Header.Get(echo.HeaderAuthorization) != "" {
		what = "the bearer token is wrong"
	}
	if from == "" {
		from = "the file <state.root>/" + sdk.TokenFile + ", or the variable service.tokenEnv names"
	}
	return describe(r) + " refused: " + what + "; send Authorization: Bearer <the operator's token>, which lives in " + from +
		" (`the-loop token` prints it)"
}

// changesState reports whether a request may change state and so must be
// JSON: anything but GET, HEAD and OPTIONS.
func changesState(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// isJSON reports whether a Content-Type is application/json (parameters
// such as charset allowed).
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == echo.MIMEApplicationJSON
}

func contentTypeRefusal(r *http.Request) string {
	ct := r.Header.Get(echo.HeaderContentType)
	if ct == "" {
		ct = "none"
	}
	return describe(r) + " refused: the body must be sent as Content-Type: application/json (got " + ct + ")"
}
