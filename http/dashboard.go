package http

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/web"
)

// The dashboard (issue 20): the service serves the web package's pages at
// / and /assets/ when service.web.enabled, without a credential — they hold
// no data and show a login hint until the browser has a session. A session
// begins at GET /login?code=…: `the-loop dashboard` asks the service (with
// the operator's token) for a code that works once, within 60 s, and prints
// the link. The service exchanges the code for a cookie named for its port
// (the-loop-<port>: browsers do not keep cookies apart by port) holding a
// session secret of the service's own — never the operator's token —
// HttpOnly, SameSite=Strict, Path=/. Sessions live in the service's memory:
// a restart, or `the-loop dashboard --logout-all`, ends them all.
//
// A request the cookie authenticates is the operator's, with one more
// check: a state change must come with an Origin equal to the service's own
// (scheme, host and port; guard already asks for JSON and a known Host).

// Dashboard paths.
const (
	// LoginPath exchanges a login code for a session cookie.
	LoginPath = "/login"
	// assetsPrefix is where the stylesheet and the modules are served.
	assetsPrefix = "/assets/"
	// DashboardCodesPath is where `the-loop dashboard` asks for a login code.
	DashboardCodesPath = "/api/v1/dashboard/codes"
	// DashboardLogoutAllPath ends every dashboard session.
	DashboardLogoutAllPath = "/api/v1/dashboard/logout-all"
)

// Lifetimes of the dashboard's secrets.
const (
	// LoginCodeTTL is how long a login code is valid.
	LoginCodeTTL = 60 * time.Second
	// DashboardSessionTTL is how long a dashboard session lasts.
	DashboardSessionTTL = 24 * time.Hour
	// maxLoginCodes and maxDashboardSessions bound what the service holds;
	// beyond them the oldest give way.
	maxLoginCodes        = 64
	maxDashboardSessions = 256
)

// contentSecurityPolicy is sent with every page and asset: scripts and
// styles from the service alone, no inline script, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// webPublic reports whether path is one of the dashboard's pages or assets,
// which load without a credential (they hold no data).
func webPublic(path string) bool {
	return path == "/" || path == LoginPath || strings.HasPrefix(path, assetsPrefix)
}

// dashboard holds the login codes and the sessions, by the SHA-256 of their
// secret (a leak of the service's memory gives neither away).
type dashboard struct {
	now func() time.Time

	mu       sync.Mutex
	codes    map[[32]byte]time.Time // code digest → expiry
	sessions map[[32]byte]time.Time // session digest → expiry
}

func newDashboard() *dashboard {
	return &dashboard{now: time.Now, codes: map[[32]byte]time.Time{}, sessions: map[[32]byte]time.Time{}}
}

// newOpaqueSecret is 32 random bytes, base64url: a login code or a session.
func newOpaqueSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func digest(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

// prune drops the expired entries of m and, beyond limit, the ones that
// expire first. Called with d.mu held.
func prune(m map[[32]byte]time.Time, now time.Time, limit int) {
	for k, exp := range m {
		if !now.Before(exp) {
			delete(m, k)
		}
	}
	for len(m) >= limit {
		var oldest [32]byte
		var at time.Time
		for k, exp := range m {
			if at.IsZero() || exp.Before(at) {
				oldest, at = k, exp
			}
		}
		delete(m, oldest)
	}
}

// newCode makes a login code valid for LoginCodeTTL.
func (d *dashboard) newCode() (string, time.Time) {
	code := newOpaqueSecret()
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	prune(d.codes, now, maxLoginCodes)
	exp := now.Add(LoginCodeTTL)
	d.codes[digest(code)] = exp
	return code, exp
}

// redeem uses a code up (whether or not it was still valid) and, when it
// was, returns a new session's secret.
func (d *dashboard) redeem(code string) (string, bool) {
	if code == "" {
		return "", false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := digest(code)
	exp, ok := d.codes[k]
	delete(d.codes, k)
	now := d.now()
	if !ok || !now.Before(exp) {
		return "", false
	}
	prune(d.sessions, now, maxDashboardSessions)
	secret := newOpaqueSecret()
	d.sessions[digest(secret)] = now.Add(DashboardSessionTTL)
	return secret, true
}

// valid reports whether secret is a live session's.
func (d *dashboard) valid(secret string) bool {
	if secret == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	exp, ok := d.sessions[digest(secret)]
	return ok && d.now().Before(exp)
}

// endAll ends every session and every outstanding code, and counts the
// live sessions.
func (d *dashboard) endAll() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	now := d.now()
	for _, exp := range d.sessions {
		if now.Before(exp) {
			n++
		}
	}
	clear(d.sessions)
	clear(d.codes)
	return n
}

// CookieName is the dashboard's session cookie on a port: the-loop-<port>.
func CookieName(port string) string { return "the-loop-" + port }

// cookieName is this service's cookie: named for the port it listens on
// (the configured one before Serve).
func (s *Server) cookieName(c echo.Context) string {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	if _, port, err := net.SplitHostPort(addr); err == nil {
		return CookieName(port)
	}
	return CookieName(strconv.Itoa(configOf(c).Service.Port))
}

// cookieSession reports whether the request carries a live dashboard
// session's cookie.
func (s *Server) cookieSession(c echo.Context) bool {
	ck, err := c.Request().Cookie(s.cookieName(c))
	return err == nil && s.dash.valid(ck.Value)
}

// checkCookieOrigin is guard's extra check for a request the cookie
// authenticated: a state change needs an Origin equal to the service's own
// — http://<the Host it was sent to>, port included; guard has checked
// that Host against the allow-list already.
func checkCookieOrigin(c echo.Context, caller Caller) error {
	req := c.Request()
	if !caller.Cookie || !changesState(req.Method) {
		return nil
	}
	origin := req.Header.Get(echo.HeaderOrigin)
	if want := "http://" + req.Host; !strings.EqualFold(origin, want) {
		got := origin
		if got == "" {
			got = "none"
		}
		return echo.NewHTTPError(http.StatusForbidden, describe(req)+" refused: a request the dashboard's cookie authenticates must come from the dashboard itself (Origin "+
			want+", got "+got+"); scripts and other clients send Authorization: Bearer <the operator's token> instead")
	}
	return nil
}

// dashboardRoutes are the REST operations of the dashboard (in the route
// table and the contract); the pages themselves are registered apart.
func (s *Server) dashboardRoutes(v1 string) []route {
	return []route{
		{Route{http.MethodPost, v1 + "/dashboard/codes", "createDashboardCode"}, s.createDashboardCode},
		{Route{http.MethodPost, v1 + "/dashboard/logout-all", "logoutAllDashboards"}, s.logoutAllDashboards},
		{Route{http.MethodGet, v1 + "/stream", "streamEvents"}, s.stream},
	}
}

// registerPages mounts the dashboard's pages and assets (not REST
// operations: left out of Routes and the contract, like /mcp).
func (s *Server) registerPages(e *echo.Echo) {
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		e.Add(m, "/", s.page("index.html"))
		e.Add(m, assetsPrefix+"*", s.asset)
	}
	// GET only: a HEAD (a link checker's) must not use the code up.
	e.GET(LoginPath, s.login)
}

// webOff is the answer of the dashboard's routes with service.web.enabled
// false.
func webOff() error {
	return loop.Errorf(loop.ENOTFOUND, "the dashboard is turned off (service.web.enabled: false); set it to true to serve it")
}

// bearerOnly refuses a request the dashboard's cookie authenticated: the
// routes that hand out and end sessions take the operator's token.
func bearerOnly(c echo.Context) error {
	if caller, ok := CallerFrom(c.Request().Context()); ok && caller.Cookie {
		return echo.NewHTTPError(http.StatusForbidden, describe(c.Request())+
			" refused: this route takes the operator's token (Authorization: Bearer), not the dashboard's cookie")
	}
	return nil
}

// DashboardCode is what POST /api/v1/dashboard/codes returns.
type DashboardCode struct {
	// Code works once, until ExpiresAt.
	Code string `json:"code"`
	// LoginPath is the path to open on the service: /login?code=<code>.
	LoginPath string `json:"loginPath"`
	// ExpiresAt is when the code stops working (UTC, RFC 3339).
	ExpiresAt string `json:"expiresAt"`
}

// createDashboardCode answers POST /api/v1/dashboard/codes: a login code.
func (s *Server) createDashboardCode(c echo.Context) error {
	if !configOf(c).Service.WebEnabled {
		return webOff()
	}
	if err := bearerOnly(c); err != nil {
		return err
	}
	code, exp := s.dash.newCode()
	return writeJSON(c, http.StatusOK, DashboardCode{Code: code, LoginPath: LoginPath + "?code=" + code,
		ExpiresAt: exp.UTC().Format(time.RFC3339)})
}

// logoutAllDashboards answers POST /api/v1/dashboard/logout-all: every
// session and outstanding code ends.
func (s *Server) logoutAllDashboards(c echo.Context) error {
	if err := bearerOnly(c); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]int{"revoked": s.dash.endAll()})
}

// pageHeaders are sent with every page and asset.
func pageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}

// page serves one of the dashboard's HTML files.
func (s *Server) page(name string) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !configOf(c).Service.WebEnabled {
			return webOff()
		}
		return serveAsset(c, name, http.StatusOK)
	}
}

// asset serves /assets/<file>.
func (s *Server) asset(c echo.Context) error {
	if !configOf(c).Service.WebEnabled {
		return webOff()
	}
	name := strings.TrimPrefix(c.Request().URL.Path, "/")
	if !fs.ValidPath(name) || path.Clean(name) != name {
		return loop.Errorf(loop.ENOTFOUND, "no asset %s in the dashboard", c.Request().URL.Path)
	}
	return serveAsset(c, name, http.StatusOK)
}

// serveAsset writes an embedded file with the page headers.
func serveAsset(c echo.Context, name string, status int) error {
	data, err := fs.ReadFile(web.Assets(), name)
	if err != nil {
		return loop.Errorf(loop.ENOTFOUND, "no asset /%s in the dashboard", name)
	}
	ct := "application/octet-stream"
	switch path.Ext(name) {
	case ".html":
		ct = "text/html; charset=utf-8"
	case ".js":
		ct = "text/javascript; charset=utf-8"
	case ".css":
		ct = "text/css; charset=utf-8"
	}
	h := c.Response().Header()
	pageHeaders(h)
	h.Set(echo.HeaderContentType, ct)
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(data)))
	c.Response().WriteHeader(status)
	if c.Request().Method == http.MethodHead {
		return nil
	}
	_, err = c.Response().Write(data)
	return err
}

// login answers GET /login?code=: a valid code becomes a session cookie and
// a redirect to /; a used, expired or unknown one is 401 with a page that
// says so.
func (s *Server) login(c echo.Context) error {
	if !configOf(c).Service.WebEnabled {
		return webOff()
	}
	secret, ok := s.dash.redeem(c.QueryParam("code"))
	if !ok {
		return serveAsset(c, "login.html", http.StatusUnauthorized)
	}
	http.SetCookie(c.Response(), &http.Cookie{
		Name:     s.cookieName(c),
		Value:    secret,
		Path:     "/",
		MaxAge:   int(DashboardSessionTTL / time.Second),
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
	})
	pageHeaders(c.Response().Header())
	return c.Redirect(http.StatusSeeOther, "/")
}
