package main

import (
	"context"
	"fmt"
	"io"
	nethttp "net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The dashboard in a real browser: headless Chromium (Debian's chromium,
// installed by .ci/run) driven with chromedp against `the-loop serve`
// started by `the-loop start`, with the fake agent in tmux.

const dashboardSessions = `
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%, harnessKillGraceSeconds: 3, resumeProbeSeconds: 1}}
standingSessions:
  enabled: true
  sessions:
    - {name: supervisor, cwd: %DIR%, description: Watches the work items}
    - {name: reviewer, cwd: %DIR%, description: Reviews pull requests}
`

// chromiumPath finds the browser or skips the test.
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (.ci/run installs Debian's chromium): the browser tests need it")
	return ""
}

// newBrowser starts headless Chromium with a fresh profile; it is stopped
// when the test ends. Its profile, crash reports and caches (HOME and the
// XDG dirs) are under the test's temp dir; its TMPDIR is a short directory
// of its own (its singleton socket there must stay within a unix socket
// path's length), removed when the test ends: a Chromium that its close
// had to kill, on a loaded machine, leaves its org.chromium.Chromium.* dir
// there, not in the test process's TMPDIR.
func newBrowser(t testing.TB, width, height int) context.Context {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	tmp, err := os.MkdirTemp("", "c")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(root, "profile")),
		chromedp.Flag("crash-dumps-dir", filepath.Join(root, "crash")),
		chromedp.Env("HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "TMPDIR="+tmp),
		chromedp.WindowSize(width, height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// chromedp.Cancel closes the browser and waits for it: a killed Chromium
	// leaves its org.chromium.Chromium.* dir in TMPDIR.
	t.Cleanup(func() { _ = chromedp.Cancel(ctx); cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// js evaluates expression in the page.
func js[T any](t testing.TB, ctx context.Context, expression string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expression, err)
	}
	return v
}

// clickUntil clicks selector until done (a JavaScript expression) is true,
// 20 s at most: a row the live page re-renders between finding the node and
// clicking it ("Could not find node with given id") is found and clicked
// again.
func clickUntil(t testing.TB, ctx context.Context, what, selector, done string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+done+")")); err == nil && ok {
			return
		}
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(selector)))
		if ok, _ := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+done+")")); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("clicking %s (%s) never gave %s: last click %v", selector, what, done, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitJS polls expression until it is true (20 s at most), failing with
// the page's text otherwise.
func waitJS(t testing.TB, ctx context.Context, what, expression string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expression+")"))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
			t.Fatalf("waiting for %s (%s): err %v; the page says:\n%s", what, expression, err, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func navigate(t testing.TB, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigating to %s: %v", url, err)
	}
}

// dashboardEnv starts the service and its sessions and returns the env and
// the dashboard's base URL (http://127.0.0.1:<port>).
func dashboardEnv(t *testing.T, yaml string) (*env, string) {
	t.Helper()
	e, port := serviceEnv(t, yaml)
	withClaudeDir(e) // the agents write their transcripts where the service reads them
	r := e.must(0, "start")
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if !strings.Contains(r.stdout, "dashboard: "+base+"/ (log in with `the-loop dashboard`)") {
		t.Fatalf("start does not print the dashboard's URL: %s", r)
	}
	if strings.Contains(r.stdout, "code=") || strings.Contains(r.stdout, e.token()) {
		t.Fatalf("start printed a secret: %s", r)
	}
	return e, base
}

// loginLink runs `the-loop dashboard` and returns the link it prints.
func loginLink(t *testing.T, e *env, base string) string {
	t.Helper()
	r := e.must(0, "dashboard")
	link := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(link, base+"/login#code=") || strings.Contains(link, e.token()) {
		t.Fatalf("dashboard printed %q (want %s/login#code=…)", link, base)
	}
	return link
}

// loggedIn opens a browser logged in to the dashboard.
func loggedIn(t *testing.T, e *env, base string, width, height int) context.Context {
	t.Helper()
	ctx := newBrowser(t, width, height)
	navigate(t, ctx, loginLink(t, e, base))
	waitJS(t, ctx, "the overview's rows", `document.querySelector('#standing-rows tr[data-name="supervisor"]')`)
	return ctx
}

func TestDashboardBrowser_LoginFlow(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	ctx := newBrowser(t, 1280, 800)

	// Logged out: the page loads, shows the login hint and no data.
	navigate(t, ctx, base+"/")
	waitJS(t, ctx, "the login hint", `!document.getElementById('login-hint').hidden`)
	if text := js[string](t, ctx, "document.body.innerText"); strings.Contains(text, "supervisor") || !strings.Contains(text, "the-loop dashboard") {
		t.Fatalf("logged out, the page shows:\n%s", text)
	}

	link := loginLink(t, e, base)
	navigate(t, ctx, link)
	waitJS(t, ctx, "the overview's rows", `document.querySelector('#standing-rows tr[data-name="supervisor"]')`)
	if got := js[string](t, ctx, "location.href"); got != base+"/" {
		t.Fatalf("after login the page is at %s (the code must leave the address bar)", got)
	}
	if hidden := js[bool](t, ctx, "document.getElementById('login-hint').hidden"); !hidden {
		t.Fatal("logged in, the login hint still shows")
	}
	waitJS(t, ctx, "the stream", `document.getElementById('conn').dataset.state === 'live'`)

	// A used code is refused, in another browser; so are a made-up one and none.
	other := newBrowser(t, 1280, 800)
	for _, url := range []string{link, base + "/login#code=made-up", base + "/login"} {
		navigate(t, other, url)
		waitJS(t, other, "the refusal of "+url, `!document.getElementById('refused').hidden`)
	}
	navigate(t, other, base+"/")
	waitJS(t, other, "the login hint", `!document.getElementById('login-hint').hidden`)

	// --logout-all ends the first browser's session: its open stream ends,
	// and the page, reconnecting, learns it is logged out.
	if r := e.must(0, "dashboard", "--logout-all"); !strings.Contains(r.stdout, "ended 1 dashboard session") {
		t.Fatalf("logout-all: %s", r)
	}
	waitJS(t, ctx, "the open page logged out by logout-all", `!document.getElementById('login-hint').hidden && document.getElementById('conn').dataset.state === 'offline'`)
	navigate(t, ctx, base+"/")
	waitJS(t, ctx, "the login hint after logout-all", `!document.getElementById('login-hint').hidden`)
}

// TestDashboardBrowser_NoCookieCarriesTheSession is the regression of the
// cookie a browser sends to every port of 127.0.0.1 (another user's server
// on another port logged it and replayed it with the service's Origin): a
// login leaves no cookie at all, the secret lives in localStorage, and that
// secret sent the way a browser sends on its own — as a cookie, with the
// service's own Origin — reads nothing and creates nothing. The page's
// Log out ends its secret at the service.
func TestDashboardBrowser_NoCookieCarriesTheSession(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	ctx := loggedIn(t, e, base, 1280, 800)
	got, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) ([]*network.Cookie, error) {
		res, err := cdp.Call(ctx, t, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/", base + "/api/v1/stream"}})
		return res.Cookies, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("the login left %d cookie(s), the first %s=…", len(got), got[0].Name)
	}
	secret := js[string](t, ctx, "localStorage.getItem('the-loop-session') || ''")
	if len(secret) < 32 || secret == e.token() {
		t.Fatalf("localStorage holds %q", secret)
	}
	port := strings.TrimPrefix(base, "http://127.0.0.1:")
	ambient := func(method, path, body string) (int, string) {
		req, _ := nethttp.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Cookie", "the-loop-"+port+"="+secret)
		req.Header.Set("Origin", base)
		req.Header.Set("Content-Type", "application/json")
		resp, err := nethttp.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	if st, body := ambient(nethttp.MethodPost, "/api/v1/standing-sessions/create", `{"name":"planted","start":false}`); st != nethttp.StatusUnauthorized {
		t.Fatalf("create with the secret as a cookie: %d %s", st, body)
	}
	if _, ok := e.rows()["planted"]; ok {
		t.Fatal("the cookie created a session")
	}
	if st, body := ambient(nethttp.MethodGet, "/api/v1/standing-sessions", ""); st != nethttp.StatusUnauthorized || strings.Contains(body, "supervisor") {
		t.Fatalf("rows with the secret as a cookie: %d %s", st, body)
	}

	// Log out: the page shows the hint and the secret is no credential.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#logout"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the login hint after logout", `!document.getElementById('login-hint').hidden && !localStorage.getItem('the-loop-session')`)
	req, _ := nethttp.NewRequest(nethttp.MethodGet, base+"/api/v1/standing-sessions", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := nethttp.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != nethttp.StatusUnauthorized {
		t.Fatalf("the secret after Log out: %d", resp.StatusCode)
	}
}

func TestDashboardBrowser_OverviewUpdatesWhenASessionStops(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	ctx := loggedIn(t, e, base, 1280, 800)
	waitJS(t, ctx, "both running", `document.querySelectorAll('#standing-rows tr[data-status="running"]').length === 2`)
	waitJS(t, ctx, "the stream", `document.getElementById('conn').dataset.state === 'live'`)

	e.must(0, "standing", "stop", "reviewer")
	waitJS(t, ctx, "reviewer stopped on the page", `(() => { const r = document.querySelector('#standing-rows tr[data-name="reviewer"]'); return r && r.dataset.status !== 'running' && r.querySelector('.live.no'); })()`)
	// The work-item tab is a tab of its own.
	navigate(t, ctx, base+"/#/work")
	waitJS(t, ctx, "the work-item tab", `document.getElementById('tab-work').getAttribute('aria-selected') === 'true' && !document.getElementById('standing-rows')`)
}

func TestDashboardBrowser_SayReachesTheAgentAndItsOutcomeShows(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	waitFor(t, "the agent's prompt", func() bool {
		screen, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-supervisor:")
		return strings.Contains(screen, "❯")
	})
	ctx := loggedIn(t, e, base, 1280, 800)
	navigate(t, ctx, base+"/#/s/supervisor")
	waitJS(t, ctx, "the say box, enabled for a live pane", `!document.getElementById('say-text').disabled`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#say-text"), "hello from the browser"),
		chromedp.Click(chromedp.CSS("#say-send")),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the say's outcome", `document.querySelector('#say-result .outcome')`)
	waitFor(t, "the message at the agent", func() bool {
		for _, m := range e.agent.Messages() {
			if strings.Contains(m, "hello from the browser") {
				return true
			}
		}
		return false
	})
	text := js[string](t, ctx, "document.getElementById('say-result').innerText")
	if !strings.Contains(text, "Outcome:") || strings.Contains(text, "not delivered") {
		t.Fatalf("say result: %q", text)
	}
	// The page's say waits for the answer (wait: true): that message's own
	// answer shows under the outcome.
	waitJS(t, ctx, "the say's answer", `!!document.getElementById('say-reply')`)
	if reply := js[string](t, ctx, "document.getElementById('say-reply').innerText"); !strings.Contains(reply, "fake answer to: ") || !strings.Contains(reply, "hello from the browser") {
		t.Fatalf("say answer: %q", reply)
	}
	// The pane (the peek's lines) shows the agent's prompt, and the
	// transcript the say and its answer.
	waitJS(t, ctx, "the pane", `document.getElementById('peek').textContent.includes('❯') && document.getElementById('peek-note').hidden`)
	waitJS(t, ctx, "the say in the transcript", `[...document.querySelectorAll('#transcript li.t-user .text')].some((el) => el.textContent.includes('hello from the browser'))`)
	waitJS(t, ctx, "its answer in the transcript", `[...document.querySelectorAll('#transcript li.t-assistant .text')].some((el) => el.textContent.startsWith('fake answer to: ') && el.textContent.includes('hello from the browser'))`)
	// The session's events list the say.
	waitJS(t, ctx, "standing.said in the events", `document.querySelector('#session-events tr[data-event="standing.said"]')`)
}

func TestDashboardBrowser_StopFromThePageStopsTheSession(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	ctx := loggedIn(t, e, base, 1280, 800)
	navigate(t, ctx, base+"/#/s/reviewer")
	waitJS(t, ctx, "Stop, enabled for a running session", `document.getElementById('btn-stop') && !document.getElementById('btn-stop').disabled`)
	// Stop asks first: cancelling leaves the session running.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#btn-stop"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the confirmation", `document.getElementById('confirm').open`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#confirm-cancel"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dialog closed", `!document.getElementById('confirm').open`)
	if !e.rows()["reviewer"].Running {
		t.Fatal("cancelled stop stopped the session")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#btn-stop"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the confirmation", `document.getElementById('confirm').open`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#confirm-ok"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the stop's result", `/stop: (stopped|not-running)/.test(document.getElementById('control-result').textContent)`)
	if e.rows()["reviewer"].Running || e.alive("loop-standing-reviewer") {
		t.Fatal("the session still runs after stop from the page")
	}
	if !e.rows()["supervisor"].Running {
		t.Fatal("stop from reviewer's page stopped supervisor")
	}
	// The pane is gone (peek is 404): the panel says so instead of the lines.
	waitJS(t, ctx, "the pane's absence", `document.getElementById('peek').hidden && /no tmux pane/.test(document.getElementById('peek-note').textContent)`)
}

func TestDashboardBrowser_CreateThenDelete(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	ctx := loggedIn(t, e, base, 1280, 800)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("details.panel > summary")),
		chromedp.SendKeys(chromedp.CSS("#create-name"), "scratch"),
		chromedp.SendKeys(chromedp.CSS(`#create-form input[name="description"]`), "made in the browser"),
		chromedp.Click(chromedp.CSS(`#create-form input[name="start"]`)), // record it, do not start it
		chromedp.Click(chromedp.CSS(`#create-form button[type="submit"]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the new row", `document.querySelector('#standing-rows tr[data-name="scratch"]')`)
	if row, ok := e.rows()["scratch"]; !ok || row.Declared || row.Description != "made in the browser" {
		t.Fatalf("scratch after create: %+v %v", row, ok)
	}
	clickUntil(t, ctx, "the confirmation", `#standing-rows tr[data-name="scratch"] button.danger`, `document.getElementById('confirm').open`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#confirm-ok"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the row gone", `document.getElementById('standing-rows') && !document.querySelector('#standing-rows tr[data-name="scratch"]')`)
	if _, ok := e.rows()["scratch"]; ok {
		t.Fatal("scratch is still there after delete from the page")
	}
}

func TestDashboardBrowser_FallsBackToPollingWithoutTheStream(t *testing.T) {
	e, base := dashboardEnv(t, strings.Replace(dashboardSessions, "service: {port: %PORT%}",
		"service: {port: %PORT%, stream: {enabled: false}}", 1))
	ctx := loggedIn(t, e, base, 1280, 800)
	waitJS(t, ctx, "polling", `document.getElementById('conn').dataset.state === 'polling'`)
	e.must(0, "standing", "stop", "reviewer")
	waitJS(t, ctx, "reviewer stopped on the page", `(() => { const r = document.querySelector('#standing-rows tr[data-name="reviewer"]'); return r && r.dataset.status !== 'running'; })()`)
}

func TestDashboardBrowser_OneStreamPerBrowser(t *testing.T) {
	// With room for one stream only, a second tab that opened its own would
	// be refused (503) and fall back to polling after 3 s.
	e, base := dashboardEnv(t, strings.Replace(dashboardSessions, "service: {port: %PORT%}",
		"service: {port: %PORT%, stream: {maxSubscribers: 1}}", 1))
	ctx := loggedIn(t, e, base, 1280, 800)
	waitJS(t, ctx, "the stream", `document.getElementById('conn').dataset.state === 'live'`)
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	navigate(t, tab, base+"/")
	waitJS(t, tab, "the second tab live", `document.getElementById('conn').dataset.state === 'live'`)
	e.must(0, "standing", "stop", "reviewer")
	waitJS(t, tab, "the second tab updated", `(() => { const r = document.querySelector('#standing-rows tr[data-name="reviewer"]'); return r && r.dataset.status !== 'running'; })()`)
	// Past the 3 s a refused stream would take to fall back, both are live still.
	time.Sleep(3500 * time.Millisecond)
	for i, c := range []context.Context{ctx, tab} {
		if state := js[string](t, c, "document.getElementById('conn').dataset.state"); state != "live" {
			t.Fatalf("tab %d is %s: it did not share the stream", i+1, state)
		}
	}
}

// holdStream pauses every request the page makes for the event stream:
// it never answers, as a stream still being opened.
func holdStream(t *testing.T, ctx context.Context) {
	t.Helper()
	_, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (cdp.Empty, error) {
		return cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/v1/stream*"}}})
	})
	if err != nil {
		t.Fatalf("holding the stream: %v", err)
	}
}

// TestDashboardBrowser_ConnectingUntilTheStreamAnswers: with the stream
// not answering yet, the page shows the rows it read and says
// "connecting", never "offline" over live data.
func TestDashboardBrowser_ConnectingUntilTheStreamAnswers(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	ctx := newBrowser(t, 1280, 800)
	holdStream(t, ctx)
	navigate(t, ctx, loginLink(t, e, base))
	waitJS(t, ctx, "the overview's rows", `document.querySelector('#standing-rows tr[data-name="supervisor"]')`)
	conn := js[string](t, ctx, "document.getElementById('conn').dataset.state + ' ' + document.getElementById('conn').textContent")
	if conn != "connecting connecting" {
		t.Fatalf("with the stream not answered yet and the rows shown, the page says %q (want connecting)", conn)
	}
}

// TestDashboardBrowser_ASubmittedSayIsNotRed: a say the agent took (and
// answered) shows its outcome and its lines in no failure colour.
func TestDashboardBrowser_ASubmittedSayIsNotRed(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	waitFor(t, "the agent's prompt", func() bool {
		screen, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-supervisor:")
		return strings.Contains(screen, "❯")
	})
	ctx := loggedIn(t, e, base, 1280, 800)
	navigate(t, ctx, base+"/#/s/supervisor")
	waitJS(t, ctx, "the say box enabled", `!document.getElementById('say-send').disabled`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#say-text"), "colour check"),
		chromedp.Click(chromedp.CSS("#say-send")),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the say's answer", `document.getElementById('say-reply')`)
	outcome := js[string](t, ctx, "document.querySelector('#say-result .outcome .badge').textContent")
	if outcome != "submitted" && outcome != "delivered" && outcome != "queued" {
		t.Fatalf("outcome %q", outcome)
	}
	// The service's failure colour, as the stylesheet gives .error.
	red := `(() => { const p = document.createElement('span'); p.className = 'error'; document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; })()`
	lines := js[[]string](t, ctx, `[...document.querySelectorAll('#say-result .outcome .badge, #say-result > div')].filter((el) => getComputedStyle(el).color === `+red+`).map((el) => el.textContent)`)
	if len(lines) != 0 {
		t.Fatalf("a %s say shows in red: %q", outcome, lines)
	}
	if n := js[int](t, ctx, `document.querySelectorAll('#say-result > div').length`); n == 0 {
		t.Fatal("the say's lines are not shown")
	}
}

// sessionButtons reads the session page's controls: for each, "hidden",
// "disabled", "primary" or "enabled".
const sessionButtons = `Object.fromEntries(['btn-start', 'btn-stop', 'btn-restart', 'btn-delete', 'say-send'].map((id) => {
  const b = document.getElementById(id);
  const panel = b.closest('[hidden]');
  return [id, b.hidden || panel ? 'hidden' : b.disabled ? 'disabled' : b.classList.contains('primary') && id === 'btn-start' ? 'primary' : 'enabled'];
}))`

// TestDashboardBrowser_ButtonsFollowTheSessionsState: a running session
// offers Stop, Restart and Say and a Start that is neither primary nor
// enabled; a stopped one the primary Start; an absent one only Start.
func TestDashboardBrowser_ButtonsFollowTheSessionsState(t *testing.T) {
	e, base := dashboardEnv(t, strings.Replace(dashboardSessions, "  sessions:\n",
		"  sessions:\n    - {name: idle, cwd: %DIR%, description: Never started, autoStart: false}\n", 1))
	ctx := loggedIn(t, e, base, 1280, 800)
	want := func(page, what string, buttons map[string]string) {
		t.Helper()
		navigate(t, ctx, base+"/#/s/"+page)
		expr := sessionButtons + `[%q] === %q`
		for id, state := range buttons {
			waitJS(t, ctx, fmt.Sprintf("%s: %s %s", what, id, state), fmt.Sprintf(expr, id, state))
		}
	}
	want("reviewer", "running", map[string]string{"btn-start": "disabled", "btn-stop": "enabled", "btn-restart": "enabled", "btn-delete": "hidden", "say-send": "enabled"})
	e.must(0, "standing", "stop", "reviewer")
	want("reviewer", "stopped", map[string]string{"btn-start": "primary", "btn-stop": "disabled", "btn-restart": "disabled", "say-send": "disabled"})
	want("idle", "absent", map[string]string{"btn-start": "primary", "btn-stop": "hidden", "btn-restart": "hidden", "say-send": "hidden"})
	if got := js[string](t, ctx, `document.getElementById('session-status').textContent`); !strings.Contains(got, "absent") {
		t.Fatalf("idle's status: %q", got)
	}
}

// TestDashboardBrowser_PaneAndTranscriptOpenAtTheLatest: a pane and a
// transcript longer than their panels open scrolled to their ends.
func TestDashboardBrowser_PaneAndTranscriptOpenAtTheLatest(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	waitFor(t, "the agent's prompt", func() bool {
		screen, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-supervisor:")
		return strings.Contains(screen, "❯")
	})
	for i := 1; i <= 3; i++ {
		e.must(0, "standing", "say", "supervisor", "--wait", "--text", fmt.Sprintf("message %d of a long conversation", i))
	}
	ctx := loggedIn(t, e, base, 1280, 800)
	navigate(t, ctx, base+"/#/s/supervisor")
	atEnd := func(id string) string {
		return fmt.Sprintf(`(() => { const el = document.getElementById(%q); return el.scrollHeight > el.clientHeight + 40 && el.scrollTop + el.clientHeight >= el.scrollHeight - 2; })()`, id)
	}
	waitJS(t, ctx, "the transcript's last answer", `[...document.querySelectorAll('#transcript li .text')].some((el) => el.textContent.includes('message 3 of'))`)
	waitJS(t, ctx, "the transcript at its end", atEnd("transcript"))
	waitJS(t, ctx, "the pane's lines", `document.getElementById('peek').textContent.includes('message 3 of')`)
	waitJS(t, ctx, "the pane at its end", atEnd("peek"))
}

// TestDashboardBrowser_DebugRowsAndLongDetails: the event log leaves debug
// rows (api.request) out until asked; a long detail is cut with an
// expander; the column of the session is "Session" and holds its name.
func TestDashboardBrowser_DebugRowsAndLongDetails(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	waitFor(t, "the agent's prompt", func() bool {
		screen, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-supervisor:")
		return strings.Contains(screen, "❯")
	})
	long := "ops-" + strings.Repeat("/usr/local/very/long/path/bin:", 20)
	e.must(0, "standing", "say", "supervisor", "--text", "a say from a long actor", "--actor", long)
	ctx := loggedIn(t, e, base, 1280, 800)
	navigate(t, ctx, base+"/#/events")
	waitJS(t, ctx, "standing.said", `document.querySelector('#event-rows tr[data-event="standing.said"]')`)
	if n := js[int](t, ctx, `document.querySelectorAll('#event-rows tr[data-event="api.request"]').length`); n != 0 {
		t.Fatalf("%d api.request rows shown by default", n)
	}
	heads := js[[]string](t, ctx, `[...document.querySelectorAll('#event-rows th')].map((th) => th.textContent)`)
	if !strings.Contains(strings.Join(heads, "|"), "Session") || strings.Contains(strings.Join(heads, "|"), "Work item") {
		t.Fatalf("the event log's columns: %q", heads)
	}
	if cell := js[string](t, ctx, `document.querySelector('#event-rows tr[data-event="standing.said"] td[data-label="Session"]').textContent`); cell != "supervisor" {
		t.Fatalf("the Session cell of standing.said: %q", cell)
	}
	// The long detail is folded: its row shows a cut of it and an expander.
	said := `document.querySelector('#event-rows tr[data-event="standing.said"] td.details')`
	if shown := js[string](t, ctx, said+`.innerText`); strings.Contains(shown, long) || len(shown) > 300 {
		t.Fatalf("the long detail shows whole (%d characters): %q", len(shown), shown)
	}
	clickUntil(t, ctx, "the whole detail", `#event-rows tr[data-event="standing.said"] td.details summary`,
		`document.querySelector('#event-rows tr[data-event="standing.said"] td.details')?.innerText.includes(`+fmt.Sprintf("%q", long)+`)`)
	// Asked for, the debug rows show.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.debug-toggle input`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "api.request rows", `document.querySelector('#event-rows tr[data-event="api.request"]')`)
}

// TestDashboard_Screenshots saves a PNG of each page at 1280×800 and at
// 390×844 into $THE_LOOP_SCREENSHOTS (`just screenshots`: docs/img).
func TestDashboard_Screenshots(t *testing.T) {
	dir := os.Getenv("THE_LOOP_SCREENSHOTS")
	if dir == "" {
		t.Skip("THE_LOOP_SCREENSHOTS is not set (`just screenshots` sets it)")
	}
	e, base := dashboardEnv(t, strings.Replace(dashboardSessions, "  sessions:\n",
		"  sessions:\n    - {name: triage, cwd: %DIR%, description: Sorts new issues, autoStart: false}\n", 1))
	waitFor(t, "the agent's prompt", func() bool {
		screen, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-supervisor:")
		return strings.Contains(screen, "❯")
	})
	e.must(0, "standing", "say", "supervisor", "--text", "What is the state of the release?", "--actor", "ops")
	for _, size := range []struct {
		name          string
		width, height int
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		ctx := loggedIn(t, e, base, size.width, size.height)
		waitJS(t, ctx, "the stream", `document.getElementById('conn').dataset.state === 'live'`)
		shots := []struct{ page, hash, ready string }{
			{"overview", "#/", `document.querySelector('#standing-rows tr[data-name="triage"]')`},
			{"session", "#/s/supervisor", `document.querySelector('#session-events tr') && document.getElementById('peek').textContent.length > 0`},
			{"events", "#/events", `document.querySelector('#event-rows tr')`},
		}
		for _, s := range shots {
			navigate(t, ctx, base+"/"+s.hash)
			waitJS(t, ctx, s.page, s.ready)
			time.Sleep(300 * time.Millisecond) // let the layout settle after the last fetch
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, fmt.Sprintf("dashboard-%s-%s.png", s.page, size.name))
			if err := os.WriteFile(path, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", path)
		}
	}
}

func TestDashboardCmd_NeedsTheRunningService(t *testing.T) {
	e, _ := serviceEnv(t, dashboardSessions)
	r := e.run("dashboard")
	if r.code != 1 || !strings.Contains(r.stderr, "not running") || strings.Contains(r.stdout, "code=") {
		t.Fatalf("dashboard without the service: %s", r)
	}
	e.config(strings.Replace(dashboardSessions, "service: {port: %PORT%}", "service: {port: 1, web: {enabled: false}}", 1))
	if r := e.run("dashboard"); r.code != 2 || !strings.Contains(r.stderr, "service.web.enabled") {
		t.Fatalf("dashboard turned off: %s", r)
	}
}

func TestServe_LogsTheDashboardsURLWithoutASecret(t *testing.T) {
	e, port := serviceEnv(t, dashboardSessions)
	e.must(0, "start")
	logs, err := os.ReadFile(filepath.Join(e.dir, ".the-loop", "logs", "service.log"))
	if err != nil {
		t.Fatalf("the service's log: %v", err)
	}
	want := fmt.Sprintf("url=http://127.0.0.1:%d/", port)
	if !strings.Contains(string(logs), "the dashboard") || !strings.Contains(string(logs), want) ||
		strings.Contains(string(logs), "code=") || strings.Contains(string(logs), e.token()) {
		t.Fatalf("the service's log:\n%s", logs)
	}
}
