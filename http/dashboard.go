package http

import (
	"context"
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

// The dashboard: the service serves the web package's pages at / and
// /assets/ when service.web.enabled, without a credential — they hold no
// data and show a login hint until the browser has a session. A session
// begins at a login link, /login#code=…: `the-loop dashboard` asks the
// service (with the operator's token) for a code that works once, within
// 60 s, and prints the link; the code rides in the fragment, which the
// browser never sends, and the login page exchanges it with POST
// /api/v1/dashboard/session for a session secret of the service's own —
// never the operator's token. The page keeps the secret in localStorage,
// which is the origin's alone (scheme, host and port), and sends it as
// Authorization: Bearer; each use renews it for DashboardSessionTTL.
//
// No cookie carries authority: browsers send a host's
// cookies to every port of it, so a page another user serves on another
// port of 127.0.0.1 would be handed them. A browser sends an Authorization
// header only where a script of the page's own origin puts it. Sessions
// live in the service's memory: a restart, POST /api/v1/dashboard/logout
// (this browser's) or `the-loop dashboard --logout-all` ends them.

// Dashboard paths.
const (
	// LoginPath is the login page: it exchanges the code in its fragment
	// (/login#code=…) for a session secret.
	LoginPath = "/login"
	// assetsPrefix is where the stylesheet and the modules are served.
	assetsPrefix = "/assets/"
	// DashboardCodesPath is where `the-loop dashboard` asks for a login code.
	DashboardCodesPath = "/api/v1/dashboard/codes"
	// DashboardSessionPath exchanges a login code for a session secret.
	DashboardSessionPath = "/api/v1/dashboard/session"
	// DashboardLogoutPath ends the session whose secret the request carries.
	DashboardLogoutPath = "/api/v1/dashboard/logout"
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
	// ended is closed, and replaced, whenever sessions may have ended:
	// the requests a session holds open (the stream) look again.
	ended chan struct{}
}

func newDashboard() *dashboard {
	return &dashboard{now: time.Now, codes: map[[32]byte]time.Time{}, sessions: map[[32]byte]time.Time{}, ended: make(chan struct{})}
}

// tellEnded wakes the requests held open by sessions. Called with d.mu held.
func (d *dashboard) tellEnded() {
	close(d.ended)
	d.ended = make(chan struct{})
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
// was, returns a new session's secret and when it expires unless used.
func (d *dashboard) redeem(code string) (string, time.Time, bool) {
	if code == "" {
		return "", time.Time{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := digest(code)
	exp, ok := d.codes[k]
	delete(d.codes, k)
	now := d.now()
	if !ok || !now.Before(exp) {
		return "", time.Time{}, false
	}
	prune(d.sessions, now, maxDashboardSessions)
	d.tellEnded() // pruning may have ended some
	secret := newOpaqueSecret()
	exp = now.Add(DashboardSessionTTL)
	d.sessions[digest(secret)] = exp
	return secret, exp, true
}

// use reports whether secret is a live session's and, when it is, renews
// it for DashboardSessionTTL from now.
func (d *dashboard) use(secret string) bool {
	if secret == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := digest(secret)
	exp, ok := d.sessions[k]
	now := d.now()
	if !ok || !now.Before(exp) {
		delete(d.sessions, k)
		return false
	}
	d.sessions[k] = now.Add(DashboardSessionTTL)
	return true
}

// end ends one session and reports whether it was live.
func (d *dashboard) end(secret string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := digest(secret)
	exp, ok := d.sessions[k]
	delete(d.sessions, k)
	d.tellEnded()
	return ok && d.now().Before(exp)
}

// hold returns a context of parent's that is cancelled once the session
// whose secret it is has ended (logout, --logout-all, or pushed out by
// newer ones); stop releases it.
func (d *dashboard) hold(parent context.Context, secret string) (ctx context.Context, stop context.CancelFunc) {
	ctx, stop = context.WithCancel(parent)
	k := digest(secret)
	go func() {
		for {
			d.mu.Lock()
			_, live := d.sessions[k]
			ended := d.ended
			d.mu.Unlock()
			if !live {
				stop()
				return
			}
			select {
			case <-ended:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx, stop
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
	d.tellEnded()
	return n
}

// legacyCookieName is the cookie the previous version's dashboard logged
// in with (the-loop-<port>, for the port the service listens on: the
// configured one before Serve). It carries nothing now; a page load that
// brings it is told to drop it.
func (s *Server) legacyCookieName(c echo.Context) string {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	if _, port, err := net.SplitHostPort(addr); err == nil {
		return "the-loop-" + port
	}
	return "the-loop-" + strconv.Itoa(configOf(c).Service.Port)
}

// dropLegacyCookie expires the previous version's session cookie when the
// request brings it.
func (s *Server) dropLegacyCookie(c echo.Context) {
	name := s.legacyCookieName(c)
	if _, err := c.Request().Cookie(name); err != nil {
		return
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// dashboardSession reports whether the request carries a live dashboard
// session's secret as Authorization: Bearer, and renews it when it does.
// Only the REST routes take it: never /mcp, the hooks or /metrics.
func (s *Server) dashboardSession(req *http.Request) bool {
	if p := req.URL.Path; hookPath(p) || !strings.HasPrefix(p, "/api/") {
		return false
	}
	token, ok := bearer(req.Header.Get(echo.HeaderAuthorization))
	return ok && s.dash.use(token)
}

// dashboardRoutes are the REST operations of the dashboard (in the route
// table and the contract); the pages themselves are registered apart.
func (s *Server) dashboardRoutes(v1 string) []route {
	return []route{
		{Route{http.MethodPost, v1 + "/dashboard/codes", "createDashboardCode"}, s.createDashboardCode},
		{Route{http.MethodPost, v1 + "/dashboard/session", "createDashboardSession"}, s.createDashboardSession},
		{Route{http.MethodPost, v1 + "/dashboard/logout", "logoutDashboard"}, s.logoutDashboard},
		{Route{http.MethodPost, v1 + "/dashboard/logout-all", "logoutAllDashboards"}, s.logoutAllDashboards},
		{Route{http.MethodGet, v1 + "/stream", "streamEvents"}, s.endsWithSession(s.stream)},
	}
}

// endsWithSession runs next with a request context that ends when the
// dashboard session that authenticated the request ends: a browser that
// logged out (or every one, after --logout-all) is told nothing more over
// a stream it had open. Other callers' requests run as they are.
func (s *Server) endsWithSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if caller, ok := CallerFrom(req.Context()); !ok || !caller.Dashboard {
			return next(c)
		}
		token, _ := bearer(req.Header.Get(echo.HeaderAuthorization))
		ctx, stop := s.dash.hold(req.Context(), token)
		defer stop()
		c.SetRequest(req.WithContext(ctx))
		return next(c)
	}
}

// registerPages mounts the dashboard's pages and assets (not REST
// operations: left out of Routes and the contract, like /mcp).
func (s *Server) registerPages(e *echo.Echo) {
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		e.Add(m, "/", s.page("index.html"))
		e.Add(m, assetsPrefix+"*", s.asset)
	}
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		e.Add(m, LoginPath, s.page("login.html"))
	}
}

// webOff is the answer of the dashboard's routes with service.web.enabled
// false.
func webOff() error {
	return loop.Errorf(loop.ENOTFOUND, "the dashboard is turned off (service.web.enabled: false); set it to true to serve it")
}

// operatorTokenOnly refuses a request the dashboard's session secret
// authenticated: the routes that hand out codes and end every session take
// the operator's token.
func operatorTokenOnly(c echo.Context) error {
	if caller, ok := CallerFrom(c.Request().Context()); ok && caller.Dashboard {
		return echo.NewHTTPError(http.StatusForbidden, describe(c.Request())+
			" refused: this route takes the operator's token (Authorization: Bearer <service.token>), not a dashboard session's secret; run `the-loop dashboard` from the operator's shell")
	}
	return nil
}

// DashboardCode is what POST /api/v1/dashboard/codes returns.
type DashboardCode struct {
	// Code works once, until ExpiresAt.
	Code string `json:"code"`
	// LoginPath is the path to open on the service: /login#code=<code>
	// (in the fragment, which the browser keeps to itself).
	LoginPath string `json:"loginPath"`
	// ExpiresAt is when the code stops working (UTC, RFC 3339).
	ExpiresAt string `json:"expiresAt"`
}

// createDashboardCode answers POST /api/v1/dashboard/codes: a login code.
func (s *Server) createDashboardCode(c echo.Context) error {
	if !configOf(c).Service.WebEnabled {
		return webOff()
	}
	if err := operatorTokenOnly(c); err != nil {
		return err
	}
	code, exp := s.dash.newCode()
	return writeJSON(c, http.StatusOK, DashboardCode{Code: code, LoginPath: LoginPath + "#code=" + code,
		ExpiresAt: exp.UTC().Format(time.RFC3339)})
}

// logoutAllDashboards answers POST /api/v1/dashboard/logout-all: every
// session and outstanding code ends.
func (s *Server) logoutAllDashboards(c echo.Context) error {
	if err := operatorTokenOnly(c); err != nil {
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
		s.dropLegacyCookie(c)
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

// DashboardSession is what POST /api/v1/dashboard/session returns.
type DashboardSession struct {
	// Secret is sent as Authorization: Bearer <secret> by the page.
	Secret string `json:"secret"`
	// ExpiresAt is when the session ends unless used (UTC, RFC 3339); each
	// request it authenticates moves it DashboardSessionTTL on.
	ExpiresAt string `json:"expiresAt"`
}

// createDashboardSession answers POST /api/v1/dashboard/session {code}:
// the login page exchanges a code (once) for a session secret. It takes no
// credential — the code is one; a used, expired or unknown code is 401.
func (s *Server) createDashboardSession(c echo.Context) error {
	if !configOf(c).Service.WebEnabled {
		return webOff()
	}
	o, err := readObject(c)
	if err != nil {
		return err
	}
	code := o.str("code", true, "")
	if err := o.err(); err != nil {
		return err
	}
	secret, exp, ok := s.dash.redeem(code)
	if !ok {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="the-loop"`)
		return echo.NewHTTPError(http.StatusUnauthorized, "code: this login code is used, expired or unknown — each link from `the-loop dashboard` works once, within 60 s; run it again and open the new link")
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return writeJSON(c, http.StatusOK, DashboardSession{Secret: secret, ExpiresAt: exp.UTC().Format(time.RFC3339)})
}

// logoutDashboard answers POST /api/v1/dashboard/logout: the session whose
// secret the request carries ends (this browser's logout). With the
// operator's token there is no session to end: revoked is 0.
func (s *Server) logoutDashboard(c echo.Context) error {
	n := 0
	if caller, ok := CallerFrom(c.Request().Context()); ok && caller.Dashboard {
		if token, _ := bearer(c.Request().Header.Get(echo.HeaderAuthorization)); s.dash.end(token) {
			n = 1
		}
	}
	return writeJSON(c, http.StatusOK, map[string]int{"revoked": n})
}
