package http

import (
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
)

// The control plane's own boundary (decisions D24), for REST and /mcp
// alike. The service can spawn agent sessions and type into them, so it
// answers only
//   - requests whose Host header it knows (403 otherwise: a page that
//     rebinds its own DNS name to 127.0.0.1 still sends its own name),
//   - state changes sent as application/json (415 otherwise: a web page
//     cannot send that cross-origin without a preflight, which the service
//     never grants),
//   - with service.tokenEnv set, requests that carry its bearer token
//     (401 otherwise; health is exempt, so `start` can tell the service is
//     up),
//   - bodies no larger than service.maxBodyBytes (413 otherwise).
// Each refusal leaves through errorStatus as {"detail": …}, and the
// process that binds the address refuses to start where it would be
// reachable from outside without the operator's say-so (CheckServe).

// healthPath answers without a token.
const healthPath = "/api/v1/health"

// guard enforces decisions D24 on every request, unknown routes included: Host, then
// token, then content type, then the body's size — a caller who may not
// talk to the service learns nothing else about its request.
func (s *Server) guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		cfg := configOf(c)
		req := c.Request()
		if !s.hostAllowed(req.Host, cfg) {
			return echo.NewHTTPError(http.StatusForbidden, hostRefusal(req.Host))
		}
		if s.opt.Token != "" && req.URL.Path != healthPath && !tokenMatches(req.Header.Get(echo.HeaderAuthorization), s.opt.Token) {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="the-loop"`)
			return echo.NewHTTPError(http.StatusUnauthorized, tokenRefusal(req, cfg.Service.TokenEnv))
		}
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

// tokenMatches compares the Authorization header's bearer token with want
// in constant time (over digests, so the length does not leak either).
func tokenMatches(header, want string) bool {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	exp := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(got[:], exp[:]) == 1
}

func tokenRefusal(r *http.Request, env string) string {
	what := "no bearer token"
	if r.Header.Get(echo.HeaderAuthorization) != "" {
		what = "the bearer token is wrong"
	}
	from := "the token service.tokenEnv names"
	if env != "" {
		from = "the value of $" + env + " (service.tokenEnv)"
	}
	return describe(r) + " refused: " + what + "; send Authorization: Bearer <" + from + ">"
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

// CheckServe is what the process that binds service.host:service.port
// (`the-loop serve`, and `the-loop start` before it spawns one) refuses
// (decisions D24; exit 2): a host beyond loopback without service.exposed,
// and a service.tokenEnv whose variable getenv finds empty. It returns the
// bearer token ("" when service.tokenEnv is not set).
func CheckServe(svc config.Service, getenv func(string) string) (string, error) {
	if !isLoopback(svc.Host) && !svc.Exposed {
		return "", loop.Invalid("refusing to bind service.host %s beyond loopback without service.exposed: true; "+
			"set service.host to 127.0.0.1, or set service.exposed: true and protect the API (service.tokenEnv, or an auth-terminating gateway): it can spawn agent sessions", svc.Host)
	}
	if svc.TokenEnv == "" {
		return "", nil
	}
	token := getenv(svc.TokenEnv)
	if token == "" {
		return "", loop.Invalid("service.tokenEnv names %s, but that variable is empty or unset; export the token or remove service.tokenEnv", svc.TokenEnv)
	}
	return token, nil
}

// isLoopback reports whether host names this machine only.
func isLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
