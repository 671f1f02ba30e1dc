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

// login asks for a code with the operator's token and exchanges it, as the
// login page does; it returns the session's secret.
func (f *fixture) login() string {
	f.t.Helper()
	var code DashboardCode
	r := f.post(DashboardCodesPath, "{}")
	if r.status != http.StatusOK {
		f.t.Fatalf("codes: %d %s", r.status, r.body)
	}
	r.decode(f.t, &code)
	var sess DashboardSession
	r = f.request(http.MethodPost, DashboardSessionPath, `{"code":"`+code.Code+`"}`, withoutToken(), withHeader("Content-Type", "application/json"))
	if r.status != http.StatusOK {
		f.t.Fatalf("session: %d %s", r.status, r.body)
	}
	r.decode(f.t, &sess)
	return sess.Secret
}

// withSecret sends a dashboard session's secret instead of the operator's
// token, as the page does.
func withSecret(secret string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) }
}

// withCookie sends a cookie and no Authorization: what a browser sends on
// its own to every port of the host.
func withCookie(ck *http.Cookie) func(*http.Request) {
	return func(r *http.Request) {
		r.Header["Authorization"] = nil
		r.AddCookie(ck)
	}
}

func TestDashboard_PagesLoadWithoutACredentialAndHoldNoData(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	for path, ct := range map[string]string{"/": "text/html", LoginPath: "text/html", "/assets/app.js": "text/javascript",
		"/assets/login.js": "text/javascript", "/assets/app.css": "text/css"} {
		p := f.page(http.MethodGet, path)
		if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), ct) {
			t.Fatalf("%s: %d %q", path, p.status, p.header.Get("Content-Type"))
		}
		csp := p.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "default-src 'none'") {
			t.Fatalf("%s: CSP %q", path, csp)
		}
		if strings.Contains(p.body, "alpha") || p.header.Get("Set-Cookie") != "" {
			t.Fatalf("%s holds session data or sets a cookie: %v %s", path, p.header, p.body)
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
// the route table but health and the code exchange answers 401 to a
// request with no credential, with a made-up secret, and with what a
// browser sends on its own (a cookie holding a live session's secret, the
// service's own Origin), whatever its method.
func TestDashboard_NoRouteReturnsDataWithoutACredential(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	live := f.login()
	ambient := &http.Cookie{Name: "the-loop-" + f.port(), Value: live}
	for _, rt := range f.server.Routes() {
		if rt.Path == healthPath || rt.Path == DashboardSessionPath {
			continue
		}
		for name, mod := range map[string]func(*http.Request){"no credential": withoutToken(), "a made-up secret": withSecret("made-up"),
			"a live secret as a cookie": withCookie(ambient)} {
			p := f.page(rt.Method, rt.Path, mod, withHeader("Content-Type", "application/json"), withHeader("Origin", f.url))
			if p.status != http.StatusUnauthorized {
				t.Errorf("%s %s with %s: %d %s", rt.Method, rt.Path, name, p.status, p.body)
			}
		}
	}
	for _, path := range []string{"/mcp", HooksPath} {
		if p := f.page(http.MethodPost, path, withoutToken(), withHeader("Content-Type", "application/json")); p.status != http.StatusUnauthorized {
			t.Errorf("%s: %d", path, p.status)
		}
		// The dashboard's secret is not a credential there either.
		if p := f.page(http.MethodPost, path, withSecret(live), withHeader("Content-Type", "application/json")); p.status != http.StatusUnauthorized {
			t.Errorf("%s with the dashboard's secret: %d %s", path, p.status, p.body)
		}
	}
}

// TestDashboard_ACookieCarriesNoAuthority is the regression of the cookie
// another user's server on another port of 127.0.0.1 could log and replay:
// with only what the browser sends on its own — the cookie of the previous
// version holding a live secret, an Origin of the service's own — a POST
// creates nothing and the stream tells nothing.
func TestDashboard_ACookieCarriesNoAuthority(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	live := f.login()
	ck := &http.Cookie{Name: "the-loop-" + f.port(), Value: live}
	ambient := []func(*http.Request){withCookie(ck), withHeader("Origin", f.url), withHeader("Content-Type", "application/json")}
	r := f.request(http.MethodPost, "/api/v1/standing-sessions/create", `{"name":"planted","start":false,"harnessArgs":["--x"]}`, ambient...)
	if r.status != http.StatusUnauthorized {
		t.Fatalf("create by cookie: %d %s", r.status, r.body)
	}
	if rows := f.get("/api/v1/standing-sessions"); strings.Contains(string(rows.body), "planted") {
		t.Fatalf("the cookie created a session: %s", rows.body)
	}
	if r := f.request(http.MethodGet, "/api/v1/standing-sessions", "", ambient...); r.status != http.StatusUnauthorized || strings.Contains(string(r.body), "alpha") {
		t.Fatalf("rows by cookie: %d %s", r.status, r.body)
	}
	if s := f.openStream(t, "", withCookie(ck)); s.resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("stream by cookie: %d", s.resp.StatusCode)
	}
	// A page load that brings the old cookie is told to drop it.
	p := f.page(http.MethodGet, "/", withCookie(ck))
	if set := p.header.Get("Set-Cookie"); !strings.Contains(set, ck.Name+"=;") || !strings.Contains(set, "Max-Age=0") {
		t.Fatalf("the old cookie is not dropped: Set-Cookie %q", set)
	}
	// The same secret as Authorization: Bearer is the dashboard's.
	if r := f.request(http.MethodGet, "/api/v1/standing-sessions", "", withSecret(live)); r.status != http.StatusOK || !strings.Contains(string(r.body), "alpha") {
		t.Fatalf("rows by secret: %d %s", r.status, r.body)
	}
}

func TestDashboard_LoginExchangesACodeOnceForASecretOfItsOwn(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	var code DashboardCode
	f.post(DashboardCodesPath, "{}").decode(t, &code)
	if code.LoginPath != "/login#code="+code.Code || len(code.Code) < 32 {
		t.Fatalf("code %+v", code)
	}
	if exp, err := time.Parse(time.RFC3339, code.ExpiresAt); err != nil || time.Until(exp) > LoginCodeTTL || time.Until(exp) < LoginCodeTTL-5*time.Second {
		t.Fatalf("expiresAt %q: %v", code.ExpiresAt, err)
	}
	exchange := func(body string) response {
		return f.request(http.MethodPost, DashboardSessionPath, body, withoutToken(), withHeader("Content-Type", "application/json"))
	}
	r := exchange(`{"code":"` + code.Code + `"}`)
	var sess DashboardSession
	r.decode(t, &sess)
	if r.status != http.StatusOK || len(sess.Secret) < 32 || sess.Secret == f.token || sess.Secret == code.Code {
		t.Fatalf("exchange: %d %s", r.status, r.body)
	}
	if exp, err := time.Parse(time.RFC3339, sess.ExpiresAt); err != nil || time.Until(exp) > DashboardSessionTTL || time.Until(exp) < DashboardSessionTTL-time.Minute {
		t.Fatalf("session expiresAt %q: %v", sess.ExpiresAt, err)
	}
	rows := f.request(http.MethodGet, "/api/v1/standing-sessions", "", withSecret(sess.Secret))
	if rows.status != http.StatusOK || !strings.Contains(string(rows.body), `"alpha"`) {
		t.Fatalf("rows by secret: %d %s", rows.status, rows.body)
	}
	// The code is spent; a made-up or empty one is refused too.
	for _, body := range []string{`{"code":"` + code.Code + `"}`, `{"code":"made-up"}`, `{"code":""}`} {
		again := exchange(body)
		if again.status != http.StatusUnauthorized || !strings.Contains(again.detail(t), "used, expired or unknown") {
			t.Fatalf("%s: %d %s", body, again.status, again.body)
		}
	}
	if r := exchange(`{}`); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.detail(t), "code") {
		t.Fatalf("no code: %d %s", r.status, r.body)
	}
	// Sent as a form (what a page of another origin may post without asking).
	if r := f.request(http.MethodPost, DashboardSessionPath, "code=x", withoutToken(), withHeader("Content-Type", "text/plain")); r.status != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain exchange: %d", r.status)
	}
}

func TestDashboard_AnExpiredCodeIsRefused(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	now := time.Now()
	f.server.dash.now = func() time.Time { return now }
	exchange := func(code DashboardCode) int {
		return f.request(http.MethodPost, DashboardSessionPath, `{"code":"`+code.Code+`"}`, withoutToken(), withHeader("Content-Type", "application/json")).status
	}
	var code DashboardCode
	f.post(DashboardCodesPath, "{}").decode(t, &code)
	now = now.Add(LoginCodeTTL)
	if st := exchange(code); st != http.StatusUnauthorized {
		t.Fatalf("expired code: %d", st)
	}
	// Just inside the minute it works.
	f.post(DashboardCodesPath, "{}").decode(t, &code)
	now = now.Add(LoginCodeTTL - time.Millisecond)
	if st := exchange(code); st != http.StatusOK {
		t.Fatalf("fresh code: %d", st)
	}
}

func TestDashboard_ASecretIsRenewedOnUseAndEndsUnused(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	now := time.Now()
	f.server.dash.now = func() time.Time { return now }
	secret := f.login()
	status := func() int { return f.request(http.MethodGet, "/api/v1/status", "", withSecret(secret)).status }
	for i := 0; i < 3; i++ { // 69 h in all, never 24 h unused
		now = now.Add(DashboardSessionTTL - time.Hour)
		if st := status(); st != http.StatusOK {
			t.Fatalf("used after %d × 23 h: %d", i+1, st)
		}
	}
	now = now.Add(DashboardSessionTTL)
	if st := status(); st != http.StatusUnauthorized {
		t.Fatalf("unused for 24 h: %d", st)
	}
}

func TestDashboard_ASecretPOSTNeedsJSONAndAKnownHost(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	secret := f.login()
	body := `{"name":"fresh","start":false}`
	// No Origin needed: a browser sends Authorization only where the page's
	// own script puts it.
	if r := f.request(http.MethodPost, "/api/v1/standing-sessions/create", body, withSecret(secret), withHeader("Content-Type", "application/json")); r.status != http.StatusOK {
		t.Fatalf("create by secret: %d %s", r.status, r.body)
	}
	if r := f.request(http.MethodPost, "/api/v1/standing-sessions/create", body, withSecret(secret), withHeader("Content-Type", "text/plain")); r.status != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain by secret: %d", r.status)
	}
	if r := f.request(http.MethodGet, "/api/v1/standing-sessions", "", withSecret(secret), withHeader("Host", "evil.example:80")); r.status != http.StatusForbidden {
		t.Fatalf("foreign Host: %d", r.status)
	}
}

func TestDashboard_LogoutEndsThisBrowsersSessionOnly(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	mine, other := f.login(), f.login()
	logout := func(mods ...func(*http.Request)) response {
		return f.request(http.MethodPost, DashboardLogoutPath, "{}", append(mods, withHeader("Content-Type", "application/json"))...)
	}
	var res struct{ Revoked int }
	r := logout(withSecret(mine))
	r.decode(t, &res)
	if r.status != http.StatusOK || res.Revoked != 1 {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	if st := f.request(http.MethodGet, "/api/v1/status", "", withSecret(mine)).status; st != http.StatusUnauthorized {
		t.Fatalf("after logout: %d", st)
	}
	if st := f.request(http.MethodGet, "/api/v1/status", "", withSecret(other)).status; st != http.StatusOK {
		t.Fatalf("the other browser after my logout: %d", st)
	}
	// Again: nothing to end, and the ended secret is no credential.
	if r := logout(withSecret(mine)); r.status != http.StatusUnauthorized {
		t.Fatalf("second logout: %d %s", r.status, r.body)
	}
	r = logout()
	res.Revoked = -1
	r.decode(t, &res)
	if r.status != http.StatusOK || res.Revoked != 0 {
		t.Fatalf("logout with the operator's token: %d %s", r.status, r.body)
	}
}

func TestDashboard_SessionsAreHandedOutAndEndedByTheTokenOnly(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	first := f.login()
	second := f.login()
	json := []func(*http.Request){withSecret(first), withHeader("Content-Type", "application/json")}
	if r := f.request(http.MethodPost, DashboardCodesPath, "{}", json...); r.status != http.StatusForbidden {
		t.Fatalf("a code by secret: %d %s", r.status, r.body)
	}
	if r := f.request(http.MethodPost, DashboardLogoutAllPath, "{}", json...); r.status != http.StatusForbidden {
		t.Fatalf("logout-all by secret: %d", r.status)
	}
	var res struct{ Revoked int }
	r := f.post(DashboardLogoutAllPath, "{}")
	r.decode(t, &res)
	if r.status != http.StatusOK || res.Revoked != 2 {
		t.Fatalf("logout-all: %d %s", r.status, r.body)
	}
	for _, secret := range []string{first, second} {
		if r := f.request(http.MethodGet, "/api/v1/status", "", withSecret(secret)); r.status != http.StatusUnauthorized {
			t.Fatalf("after logout-all: %d", r.status)
		}
	}
}

// TestDashboard_LogoutEndsTheStreamsItHeldOpen: a stream the dashboard's
// secret opened ends with the session — its own logout, or logout-all —
// while the operator's stream goes on.
func TestDashboard_LogoutEndsTheStreamsItHeldOpen(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	mine, other := f.login(), f.login()
	streams := map[string]*sse{"mine": f.openStream(t, "", withSecret(mine)), "other": f.openStream(t, "", withSecret(other)),
		"operator's": f.openStream(t, "")}
	for name, s := range streams {
		if m := s.next(t); m.event != "ready" {
			t.Fatalf("%s stream: %+v", name, m)
		}
	}
	ended := func(s *sse) bool {
		_, err := io.Copy(io.Discard, s.rd) // returns once the service ends the stream
		return err == nil
	}
	if r := f.request(http.MethodPost, DashboardLogoutPath, "{}", withSecret(mine), withHeader("Content-Type", "application/json")); r.status != http.StatusOK {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	if !ended(streams["mine"]) {
		t.Fatal("my stream did not end cleanly at my logout")
	}
	if r := f.post(DashboardLogoutAllPath, "{}"); r.status != http.StatusOK {
		t.Fatalf("logout-all: %d %s", r.status, r.body)
	}
	if !ended(streams["other"]) {
		t.Fatal("the other browser's stream did not end at logout-all")
	}
	emit(t, f, "test.after_logout")
	for {
		if m := streams["operator's"].next(t); strings.Contains(m.data, "test.after_logout") {
			break
		}
	}
}

// TestDashboard_ASessionListsAndDecidesApprovals: the page's secret, sent
// as Authorization: Bearer, lists a pending approval and denies it with a
// message — decided by the operator, whose dashboard it is, and the waiting
// hook gets the deny framed with that name — while the same secret as a
// cookie with the service's Origin neither reads nor decides it.
func TestDashboard_ASessionListsAndDecidesApprovals(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"worker"}})
	if res, err := f.local.Standing.Control(t.Context(), loop.StandingControlRequest{Name: "worker", Verb: "start"}); err != nil || !res.OK {
		t.Fatalf("start worker: %+v %v", res, err)
	}
	answer := f.awaitPermission(t, "worker", "make deploy")
	secret := f.login()
	ambient := []func(*http.Request){withCookie(&http.Cookie{Name: "the-loop-" + f.port(), Value: secret}), withHeader("Origin", f.url),
		withHeader("Content-Type", "application/json")}
	if r := f.request(http.MethodGet, "/api/v1/approvals", "", ambient...); r.status != http.StatusUnauthorized || strings.Contains(string(r.body), "make deploy") {
		t.Fatalf("approvals by cookie: %d %s", r.status, r.body)
	}
	var list []loop.Approval
	r := f.request(http.MethodGet, "/api/v1/approvals", "", withSecret(secret))
	r.decode(t, &list)
	if r.status != http.StatusOK || len(list) != 1 || list[0].Status != loop.ApprovalPending || !strings.Contains(string(list[0].Input), "make deploy") {
		t.Fatalf("approvals by secret: %d %s", r.status, r.body)
	}
	id := list[0].ID
	deny := `{"decision":"deny","message":"not on a Friday","session":"worker"}`
	if r := f.request(http.MethodPost, "/api/v1/approvals/"+id, deny, ambient...); r.status != http.StatusUnauthorized {
		t.Fatalf("a deny by cookie: %d %s", r.status, r.body)
	}
	var decided loop.Approval
	r = f.request(http.MethodPost, "/api/v1/approvals/"+id, deny, withSecret(secret), withHeader("Content-Type", "application/json"))
	r.decode(t, &decided)
	if r.status != http.StatusOK || decided.Status != loop.ApprovalDenied || decided.By != "operator" || decided.Message != "not on a Friday" {
		t.Fatalf("a deny by secret: %d %s", r.status, r.body)
	}
	if a := <-answer; a.Behavior != loop.DecisionDeny || !strings.Contains(a.Message, "Denied by operator") || !strings.Contains(a.Message, "not on a Friday") {
		t.Errorf("the hook got %+v", a)
	}
	if r := f.request(http.MethodPost, "/api/v1/approvals/"+id, `{"decision":"allow"}`, withSecret(secret), withHeader("Content-Type", "application/json")); r.status != http.StatusConflict {
		t.Errorf("deciding it again by secret: %d %s, want 409", r.status, r.body)
	}
}

func TestDashboard_WebDisabledAnswers404(t *testing.T) {
	f := newFixture(t, fixtureOptions{extra: "service:\n  web:\n    enabled: false\n"})
	for _, path := range []string{"/", "/assets/app.js", LoginPath} {
		if p := f.page(http.MethodGet, path); p.status != http.StatusNotFound || strings.Contains(p.body, "<html") {
			t.Errorf("%s: %d", path, p.status)
		}
	}
	if r := f.post(DashboardCodesPath, "{}"); r.status != http.StatusNotFound || !strings.Contains(string(r.body), "service.web.enabled") {
		t.Fatalf("codes: %d %s", r.status, r.body)
	}
	if r := f.request(http.MethodPost, DashboardSessionPath, `{"code":"x"}`, withoutToken(), withHeader("Content-Type", "application/json")); r.status != http.StatusNotFound {
		t.Fatalf("session: %d %s", r.status, r.body)
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

func TestStream_NeedsACredentialAndTakesTheDashboardsSecret(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	if s := f.openStream(t, "", withoutToken()); s.resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no credential: %d", s.resp.StatusCode)
	}
	s := f.openStream(t, "", withSecret(f.login()))
	if s.resp.StatusCode != http.StatusOK {
		t.Fatalf("secret: %d", s.resp.StatusCode)
	}
	if m := s.next(t); m.event != "ready" {
		t.Fatalf("%+v", m)
	}
}
