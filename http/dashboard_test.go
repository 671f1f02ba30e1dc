package http

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// page is one raw answer of a dashboard page (not JSON, not in the
// contract), fetched with no credential unless mods add one; redirects are
// not followed.
type page struct {
	status int
	header http.Header
	body   string
}

func (f *fixture) page(method, path string, mods ...func(*http.Request)) page {
	f.t.Helper()
	req, err := http.NewRequest(method, f.url+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, mod := range mods {
		mod(req)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, resp.Header, string(data)}
}

// login asks for a code with the operator's token and exchanges it; it
// returns the session cookie.
func (f *fixture) login() *http.Cookie {
	f.t.Helper()
	var code DashboardCode
	r := f.post(DashboardCodesPath, "{}")
	if r.status != http.StatusOK {
		f.t.Fatalf("codes: %d %s", r.status, r.body)
	}
	r.decode(f.t, &code)
	p := f.page(http.MethodGet, code.LoginPath)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/" {
		f.t.Fatalf("login: %d %v %s", p.status, p.header, p.body)
	}
	cookies := (&http.Response{Header: p.header}).Cookies()
	if len(cookies) != 1 {
		f.t.Fatalf("login set %d cookies: %v", len(cookies), p.header)
	}
	return cookies[0]
}

func withCookie(ck *http.Cookie) func(*http.Request) {
	return func(r *http.Request) {
		r.Header["Authorization"] = nil
		r.AddCookie(ck)
	}
}

func TestDashboard_PagesLoadWithoutACredentialAndHoldNoData(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	for path, ct := range map[string]string{"/": "text/html", "/assets/app.js": "text/javascript", "/assets/app.css": "text/css"} {
		p := f.page(http.MethodGet, path)
		if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), ct) {
			t.Fatalf("%s: %d %q", path, p.status, p.header.Get("Content-Type"))
		}
		csp := p.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "default-src 'none'") {
			t.Fatalf("%s: CSP %q", path, csp)
		}
		if strings.Contains(p.body, "alpha") {
			t.Fatalf("%s holds session data: %s", path, p.body)
		}
	}
	if p := f.page(http.MethodGet, "/assets/nope.js"); p.status != http.StatusNotFound {
		t.Fatalf("missing asset: %d", p.status)
	}
	if p := f.page(http.MethodGet, "/assets/../api/v1/standing-sessions"); p.status == http.StatusOK && strings.Contains(p.body, "alpha") {
		t.Fatalf("a path under /assets/ reached the API: %s", p.body)
	}
}

// TestDashboard_NoRouteReturnsDataWithoutACredential: every operation of
// the route table but health answers 401 to a request with no credential
// (and to a made-up cookie), whatever its method.
func TestDashboard_NoRouteReturnsDataWithoutACredential(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	fake := &http.Cookie{Name: CookieName(f.port()), Value: "made-up"}
	for _, rt := range f.server.Routes() {
		if rt.Path == healthPath {
			continue
		}
		for name, mod := range map[string]func(*http.Request){"no credential": withoutToken(), "a made-up cookie": withCookie(fake)} {
			p := f.page(rt.Method, rt.Path, mod, withHeader("Content-Type", "application/json"), withHeader("Origin", f.url))
			if p.status != http.StatusUnauthorized {
				t.Errorf("%s %s with %s: %d %s", rt.Method, rt.Path, name, p.status, p.body)
			}
		}
	}
	if p := f.page(http.MethodPost, "/mcp", withoutToken(), withHeader("Content-Type", "application/json")); p.status != http.StatusUnauthorized {
		t.Errorf("/mcp: %d", p.status)
	}
}

func TestDashboard_LoginExchangesACodeOnceForACookieOfItsOwn(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	var code DashboardCode
	f.post(DashboardCodesPath, "{}").decode(t, &code)
	if code.LoginPath != "/login?code="+code.Code || len(code.Code) < 32 {
		t.Fatalf("code %+v", code)
	}
	if exp, err := time.Parse(time.RFC3339, code.ExpiresAt); err != nil || time.Until(exp) > LoginCodeTTL || time.Until(exp) < LoginCodeTTL-5*time.Second {
		t.Fatalf("expiresAt %q: %v", code.ExpiresAt, err)
	}
	if p := f.page(http.MethodHead, code.LoginPath); p.status == http.StatusSeeOther || p.header.Get("Set-Cookie") != "" {
		t.Fatalf("HEAD used the code up: %d", p.status)
	}
	p := f.page(http.MethodGet, code.LoginPath)
	if p.status != http.StatusSeeOther {
		t.Fatalf("login: %d %s", p.status, p.body)
	}
	set := p.header.Get("Set-Cookie")
	for _, want := range []string{"the-loop-" + f.port() + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(set, want) {
			t.Fatalf("Set-Cookie %q lacks %q", set, want)
		}
	}
	if strings.Contains(set, f.token) || strings.Contains(set, code.Code) {
		t.Fatalf("the cookie holds the operator's token or the code: %q", set)
	}
	ck := (&http.Response{Header: p.header}).Cookies()[0]
	r := f.request(http.MethodGet, "/api/v1/standing-sessions", "", withCookie(ck))
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"alpha"`) {
		t.Fatalf("rows by cookie: %d %s", r.status, r.body)
	}
	// The code is spent.
	again := f.page(http.MethodGet, code.LoginPath)
	if again.status != http.StatusUnauthorized || again.header.Get("Set-Cookie") != "" || !strings.Contains(again.body, "used or expired") {
		t.Fatalf("second use: %d %v %s", again.status, again.header, again.body)
	}
	for _, bad := range []string{"/login", "/login?code=", "/login?code=made-up"} {
		if p := f.page(http.MethodGet, bad); p.status != http.StatusUnauthorized || p.header.Get("Set-Cookie") != "" {
			t.Fatalf("%s: %d", bad, p.status)
		}
	}
	// A cookie for another port's service is not this one's.
	other := &http.Cookie{Name: "the-loop-1", Value: ck.Value}
	if r := f.request(http.MethodGet, "/api/v1/standing-sessions", "", withCookie(other)); r.status != http.StatusUnauthorized {
		t.Fatalf("another port's cookie: %d", r.status)
	}
}

func TestDashboard_AnExpiredCodeIsRefused(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	now := time.Now()
	f.server.dash.now = func() time.Time { return now }
	var code DashboardCode
	f.post(DashboardCodesPath, "{}").decode(t, &code)
	now = now.Add(LoginCodeTTL)
	if p := f.page(http.MethodGet, code.LoginPath); p.status != http.StatusUnauthorized || p.header.Get("Set-Cookie") != "" {
		t.Fatalf("expired code: %d %v", p.status, p.header)
	}
	// Just inside the minute it works.
	f.post(DashboardCodesPath, "{}").decode(t, &code)
	now = now.Add(LoginCodeTTL - time.Millisecond)
	if p := f.page(http.MethodGet, code.LoginPath); p.status != http.StatusSeeOther {
		t.Fatalf("fresh code: %d", p.status)
	}
}

func TestDashboard_ACookiePOSTNeedsTheServicesOwnOriginAndJSON(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ck := f.login()
	body := `{"name":"fresh","start":false}`
	for origin, want := range map[string]int{
		"":                     http.StatusForbidden,
		"http://evil.example":  http.StatusForbidden,
		"http://127.0.0.1:1":   http.StatusForbidden, // another port
		"https://" + f.url[7:]: http.StatusForbidden, // another scheme
		"null":                 http.StatusForbidden,
		f.url:                  http.StatusOK,
		strings.ToUpper(f.url): http.StatusOK,
	} {
		mods := []func(*http.Request){withCookie(ck), withHeader("Content-Type", "application/json")}
		if origin != "" {
			mods = append(mods, withHeader("Origin", origin))
		}
		r := f.request(http.MethodPost, "/api/v1/standing-sessions/create", body, mods...)
		if r.status != want {
			t.Errorf("Origin %q: %d %s", origin, r.status, r.body)
		}
		if r.status == http.StatusOK {
			f.request(http.MethodPost, "/api/v1/standing-sessions/delete", `{"name":"fresh"}`, append(mods[:2:2], withHeader("Origin", f.url))...)
		}
	}
	r := f.request(http.MethodPost, "/api/v1/standing-sessions/create", body, withCookie(ck), withHeader("Origin", f.url), withHeader("Content-Type", "text/plain"))
	if r.status != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain by cookie: %d", r.status)
	}
	// The bearer token needs no Origin (the CLI sends none).
	if r := f.post("/api/v1/standing-sessions/create", body); r.status != http.StatusOK {
		t.Fatalf("bearer: %d %s", r.status, r.body)
	}
	// The Host allow-list still holds for the cookie.
	if r := f.request(http.MethodGet, "/api/v1/standing-sessions", "", withCookie(ck), withHeader("Host", "evil.example:80")); r.status != http.StatusForbidden {
		t.Fatalf("foreign Host: %d", r.status)
	}
}

func TestDashboard_SessionsAreHandedOutAndEndedByTheTokenOnly(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ck := f.login()
	second := f.login()
	cookieJSON := []func(*http.Request){withCookie(ck), withHeader("Content-Type", "application/json"), withHeader("Origin", f.url)}
	if r := f.request(http.MethodPost, DashboardCodesPath, "{}", cookieJSON...); r.status != http.StatusForbidden {
		t.Fatalf("a code by cookie: %d %s", r.status, r.body)
	}
	if r := f.request(http.MethodPost, DashboardLogoutAllPath, "{}", cookieJSON...); r.status != http.StatusForbidden {
		t.Fatalf("logout-all by cookie: %d", r.status)
	}
	var res struct{ Revoked int }
	r := f.post(DashboardLogoutAllPath, "{}")
	r.decode(t, &res)
	if r.status != http.StatusOK || res.Revoked != 2 {
		t.Fatalf("logout-all: %d %s", r.status, r.body)
	}
	for _, c := range []*http.Cookie{ck, second} {
		if r := f.request(http.MethodGet, "/api/v1/status", "", withCookie(c)); r.status != http.StatusUnauthorized {
			t.Fatalf("after logout-all: %d", r.status)
		}
	}
}

func TestDashboard_WebDisabledAnswers404(t *testing.T) {
	f := newFixture(t, fixtureOptions{extra: "service:\n  web:\n    enabled: false\n"})
	for _, path := range []string{"/", "/assets/app.js", "/login?code=x"} {
		if p := f.page(http.MethodGet, path); p.status != http.StatusNotFound || strings.Contains(p.body, "<html") {
			t.Errorf("%s: %d", path, p.status)
		}
	}
	if r := f.post(DashboardCodesPath, "{}"); r.status != http.StatusNotFound || !strings.Contains(string(r.body), "service.web.enabled") {
		t.Fatalf("codes: %d %s", r.status, r.body)
	}
}

// sse is one open stream, read message by message.
type sse struct {
	resp *http.Response
	rd   *bufio.Reader
}

type sseMessage struct {
	id, event, data string
	comment         bool
}

func (f *fixture) openStream(t testing.TB, query string, mods ...func(*http.Request)) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+"/api/v1/stream"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		m(req)
	}
	resp, err := f.plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sse{resp: resp, rd: bufio.NewReader(resp.Body)}
}

// next reads one message (a comment counts as one).
func (s *sse) next(t testing.TB) sseMessage {
	t.Helper()
	var m sseMessage
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if m.event != "" || m.data != "" || m.comment {
				return m
			}
		case strings.HasPrefix(line, ":"):
			m.comment = true
		case strings.HasPrefix(line, "id: "):
			m.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			m.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			m.data += line[6:]
		}
	}
}

// validateAgainst checks data against a schema of the contract's components.
func validateAgainst(t testing.TB, schema, data string) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("%s data %q: %v", schema, data, err)
	}
	s := mustContract(t).doc.Components.Schemas[schema].Value
	if err := s.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Fatalf("%s does not validate: %v\n%s", schema, err, data)
	}
}

func emit(t testing.TB, f *fixture, name string, fields ...loop.Field) {
	t.Helper()
	if err := f.svc.Emit(loop.Event{TS: time.Now().UTC(), Source: "test", Event: name, Level: loop.LevelInfo, PID: 1, Fields: fields}); err != nil {
		t.Fatal(err)
	}
}

func TestStream_SendsEachEventTheLogRecordsAsTheContractSays(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	emit(t, f, "test.before")
	s := f.openStream(t, "")
	if s.resp.StatusCode != http.StatusOK || !strings.HasPrefix(s.resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %v", s.resp.StatusCode, s.resp.Header)
	}
	ready := s.next(t)
	if ready.event != "ready" {
		t.Fatalf("first message %+v", ready)
	}
	validateAgainst(t, "StreamReady", ready.data)
	var r StreamReady
	_ = json.Unmarshal([]byte(ready.data), &r)
	last := f.events(store.EventQuery{})
	if r.Seq != last[len(last)-1].Seq {
		t.Fatalf("ready seq %d, log ends at %d", r.Seq, last[len(last)-1].Seq)
	}
	emit(t, f, "test.one", loop.F("standing", "alpha"))
	emit(t, f, "test.two", loop.F("n", 2))
	for i, want := range []string{"test.one", "test.two"} {
		m := s.next(t)
		if m.event != "event" || m.id != fmt.Sprint(r.Seq+uint64(i)+1) {
			t.Fatalf("message %+v", m)
		}
		validateAgainst(t, "EventEnvelope", m.data)
		if !strings.Contains(m.data, `"event":"`+want+`"`) {
			t.Fatalf("got %s, want %s", m.data, want)
		}
	}
	// A real change (a stop through the API) reaches the stream too.
	f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"stop"}`)
	for {
		m := s.next(t)
		if m.event == "event" {
			validateAgainst(t, "EventEnvelope", m.data)
			if strings.Contains(m.data, `"event":"api.request"`) {
				break
			}
		}
	}
}

func TestStream_AReconnectingClientGetsWhatItMissed(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	emit(t, f, "test.a")
	emit(t, f, "test.b")
	emit(t, f, "test.c")
	evs := f.events(store.EventQuery{})
	first := evs[len(evs)-3].Seq
	s := f.openStream(t, "", withHeader("Last-Event-ID", fmt.Sprint(first)))
	if m := s.next(t); m.event != "ready" {
		t.Fatalf("%+v", m)
	}
	for _, want := range []string{"test.b", "test.c"} {
		if m := s.next(t); !strings.Contains(m.data, want) {
			t.Fatalf("replay: %+v, want %s", m, want)
		}
	}
	q := f.openStream(t, fmt.Sprintf("?after=%d", first+1))
	q.next(t)
	if m := q.next(t); !strings.Contains(m.data, "test.c") {
		t.Fatalf("after=: %+v", m)
	}
	if bad := f.openStream(t, "?after=x"); bad.resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("after=x: %d", bad.resp.StatusCode)
	}
}

func TestStream_HasACapKeepAlivesAndCanBeTurnedOff(t *testing.T) {
	f := newFixture(t, fixtureOptions{extra: "service:\n  stream:\n    maxSubscribers: 2\n    keepAliveSeconds: 1\n"})
	a := f.openStream(t, "")
	a.next(t)
	b := f.openStream(t, "")
	b.next(t)
	c := f.openStream(t, "")
	if c.resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third subscriber: %d", c.resp.StatusCode)
	}
	body, _ := io.ReadAll(c.resp.Body)
	if !strings.Contains(string(body), "service.stream.maxSubscribers") {
		t.Fatalf("503 body %s", body)
	}
	if m := a.next(t); !m.comment {
		t.Fatalf("keep-alive: %+v", m)
	}
	// A closed stream frees its place.
	b.resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for f.server.hub.subscribers() > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("subscribers: %d", f.server.hub.subscribers())
		}
		a.next(t) // the keep-alive write finds the closed one; wait a beat
	}
	d := f.openStream(t, "")
	if d.resp.StatusCode != http.StatusOK {
		t.Fatalf("after a close: %d", d.resp.StatusCode)
	}

	off := newFixture(t, fixtureOptions{extra: "service:\n  stream:\n    enabled: false\n"})
	if s := off.openStream(t, ""); s.resp.StatusCode != http.StatusNotFound {
		t.Fatalf("disabled stream: %d", s.resp.StatusCode)
	}
}

func TestStream_NeedsACredentialAndTakesTheCookie(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	if s := f.openStream(t, "", withoutToken()); s.resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no credential: %d", s.resp.StatusCode)
	}
	ck := f.login()
	s := f.openStream(t, "", withCookie(ck))
	if s.resp.StatusCode != http.StatusOK {
		t.Fatalf("cookie: %d", s.resp.StatusCode)
	}
	if m := s.next(t); m.event != "ready" {
		t.Fatalf("%+v", m)
	}
}
