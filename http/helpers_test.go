package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/hearing"
	"github.com/the-loop-dev/the-loop/internal/optoken"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/metrics"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
)

// fixture is the service as it runs for real: a config file behind a
// config.Holder, a bbolt file held open, a lifecycle.Service on a private
// tmux server with liveness cached, and the REST service on 127.0.0.1:0.
type fixture struct {
	t       testing.TB
	dir     string // the working dir: config, state and session cwds
	cfgPath string
	socket  string
	svc     *lifecycle.Service
	hear    *hearing.Hearer
	server  *Server
	url     string
	client  *sdk.Client
	// sock is the service's unix socket (the owner's channel) and local
	// the typed client over it (no token).
	sock  string
	local *sdk.Client
	// http checks every exchange against openapi.yaml (contractTransport);
	// plain does not, for benchmarks that measure the service alone.
	http  *http.Client
	plain *http.Client
	agent *testkit.Agent // nil when fixtureOptions.agentBin was given
	token string         // the operator's token
}

// fixtureOptions shape a fixture.
type fixtureOptions struct {
	// sessions are declared in standingSessions (autoStart true).
	sessions []string
	// extra is appended to the config file (e.g. a service block).
	extra string
	// agentBin is the directory whose `claude` is the harness binary
	// (default: the fake agent's wrapper).
	agentBin string
	// token is the operator's token the service requires (Options.Token;
	// default a fresh one). The fixture's client and requests send it.
	token string
	// logger is the service's log (default: discarded).
	logger *slog.Logger
	// meter, when set, is wired as the service wires its metrics: it hears
	// the store's commits, counts the says, the sessions and the requests.
	meter *metrics.Metrics
	// maxEventBytes bounds the store's event log (store.Options.MaxBytes;
	// default the store's).
	maxEventBytes int64
	// environment answers GET /api/v1/environment (Options.Environment).
	environment func(context.Context) loop.Environment
}

// configYAML renders the fixture's config.
func (f *fixture) configYAML(o fixtureOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state:\n  root: %s\n", filepath.Join(f.dir, "state"))
	fmt.Fprintf(&b, "routing:\n  tmux:\n    socketName: %s\n    resumeProbeSeconds: 0.2\n    harnessKillGraceSeconds: 0.5\n    readySeconds: 10\n    submitDelayMs: 20\n", f.socket)
	b.WriteString("  harnessTrust:\n    enabled: false\n")
	if len(o.sessions) > 0 {
		b.WriteString("standingSessions:\n  enabled: true\n  sessions:\n")
		for _, n := range o.sessions {
			fmt.Fprintf(&b, "    - name: %s\n      harness: claude\n      cwd: %s\n      autoStart: true\n", n, f.dir)
		}
	}
	b.WriteString(o.extra)
	return b.String()
}

// writeConfig replaces the config file, moving its mtime on so the holder
// sees the change even within the file system's timestamp granularity.
func (f *fixture) writeConfig(body string) {
	f.t.Helper()
	if err := os.WriteFile(f.cfgPath, []byte(body), 0o600); err != nil {
		f.t.Fatal(err)
	}
	fi, err := os.Stat(f.cfgPath)
	if err != nil {
		f.t.Fatal(err)
	}
	at := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(f.cfgPath, at, at); err != nil {
		f.t.Fatal(err)
	}
}

func newFixture(t testing.TB, o fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), socket: testkit.Tmux(t)}
	if o.agentBin == "" {
		f.agent = testkit.FakeAgent(t)
		o.agentBin = f.agent.BinDir()
	}
	f.cfgPath = filepath.Join(f.dir, "cli-config.yaml")
	f.writeConfig(f.configYAML(o))
	holder, err := config.NewHolder(f.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	holder.Logger = slog.New(slog.DiscardHandler)
	cfg := holder.Current()
	var committed func([]loop.Event)
	if o.meter != nil {
		committed = o.meter.Observe
	}
	db, err := store.Open(filepath.Join(cfg.StateDir(), "the-loop.db"), store.Options{Committed: committed, MaxBytes: o.maxEventBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	adapters := harness.NewRegistry(harness.ClaudeOptions{Home: f.dir})
	var mu sync.Mutex
	runners := map[string]loop.Runner{}
	f.svc = &lifecycle.Service{
		DB: db,
		Runner: func(socket string) loop.Runner {
			mu.Lock()
			defer mu.Unlock()
			if r, ok := runners[socket]; ok {
				return r
			}
			r := runner.NewCache(runner.New(runner.Options{
				Socket: socket, ConfigFile: testkit.TmuxConfig, SubmitDelay: 20 * time.Millisecond,
				Launcher: testkit.Launcher(t), LockDir: filepath.Join(t.TempDir(), "locks"), LaunchDir: filepath.Join(t.TempDir(), "launch"),
			}), runner.DefaultLivenessTTL)
			runners[socket] = r
			return r
		},
		Harness:   adapters.Lookup,
		LookPath:  func(bin string) (string, error) { return filepath.Join(o.agentBin, bin), nil },
		Source:    "service",
		ProcStart: runner.ProcessStart,
	}
	f.hear = &hearing.Hearer{DB: db, Events: f.svc, Harness: f.svc.Harness, Runner: f.svc.Runner, Ended: f.svc.SessionEnded}
	f.svc.Hearing = f.hear
	if o.token == "" {
		o.token = optoken.NewSecret()
	}
	f.token = o.token
	opt := Options{Standing: f.svc.Standing(holder.Current), WorkItems: f.svc.WorkItems(holder.Current),
		Events: f.svc, Recorder: f.svc, Config: holder.Current, Version: "test-version", Token: o.token, Logger: o.logger,
		TokenSource: optoken.TokenSource(cfg), Agents: f.hear, Hooks: f.hear, Panes: f.hear, Approvals: f.hear, Environment: o.environment}
	if o.meter != nil {
		o.meter.CountSessions(metrics.Rows{Standing: opt.Standing, WorkItems: opt.WorkItems})
		opt.Standing, opt.Metrics = o.meter.Standing(opt.Standing), o.meter
	}
	f.server = NewServer(opt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.sock = filepath.Join(testkit.ShortDir(t), "s.sock")
	sln, err := net.Listen("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- f.server.Serve(ln) }()
	go func() { done <- f.server.Serve(sln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.server.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		}
		// Stop whatever the test left running before its tmux server goes.
		_, _ = f.svc.StopStanding(context.Background(), config.LoadTolerant(f.cfgPath), "")
	})
	f.url = "http://" + ln.Addr().String()
	f.http = &http.Client{Transport: tokenTransport{next: validatedClient(t, &http.Transport{MaxIdleConnsPerHost: 64}).Transport, token: o.token}}
	f.plain = &http.Client{Transport: tokenTransport{next: &http.Transport{MaxIdleConnsPerHost: 64}, token: o.token}}
	f.client = sdk.New(f.url, sdk.WithHTTPClient(f.http), sdk.WithToken(o.token))
	f.local = sdk.Socket(f.sock)
	return f
}

// response is one raw answer.
type response struct {
	status int
	body   []byte
}

// decode unmarshals the body into v, failing the test when it does not.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
}

// detail returns the error body's detail, failing unless the body is
// exactly {"detail": "<non-empty>"}.
func (r response) detail(t testing.TB) string {
	t.Helper()
	var m map[string]any
	r.decode(t, &m)
	d, ok := m["detail"].(string)
	if !ok || d == "" || len(m) != 1 {
		t.Fatalf("error body %s is not {\"detail\": …}", r.body)
	}
	return d
}

// get sends a GET.
func (f *fixture) get(path string) response { return f.send(http.MethodGet, path, "") }

// post sends a POST with a raw body.
func (f *fixture) post(path, body string) response { return f.send(http.MethodPost, path, body) }

// send sends a request as the typed client does: a body, and any POST even
// without one, goes as application/json.
func (f *fixture) send(method, path, body string) response {
	f.t.Helper()
	if body == "" && !changesState(method) {
		return f.request(method, path, body)
	}
	return f.request(method, path, body, withHeader("Content-Type", "application/json"))
}

// withHeader sets a request header ("Host" sets the Host the request names).
func withHeader(key, value string) func(*http.Request) {
	return func(r *http.Request) {
		if key == "Host" {
			r.Host = value
			return
		}
		r.Header.Set(key, value)
	}
}

// withoutToken sends the request without the operator's token (the
// fixture's clients add it to any request that has no Authorization key).
func withoutToken() func(*http.Request) {
	return func(r *http.Request) { r.Header["Authorization"] = nil }
}

// tokenTransport sends the operator's token with every request whose
// header has no Authorization key at all (withoutToken leaves a nil one),
// as the CLI, the SDK and an MCP client configured with the header do.
type tokenTransport struct {
	next  http.RoundTripper
	token string
}

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, set := r.Header["Authorization"]; !set {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.token)
	} else if r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
	}
	return t.next.RoundTrip(r)
}

// request sends a request shaped by mods, through the contract-checking
// client, with the operator's token unless a mod removes or replaces it.
func (f *fixture) request(method, path, body string, mods ...func(*http.Request)) response {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.url+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, mod := range mods {
		mod(req)
	}
	resp, err := f.http.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		f.t.Errorf("%s %s: content type %q", method, path, ct)
	}
	return response{status: resp.StatusCode, body: bytes.TrimSpace(data)}
}

// events reads the event log straight from the store.
func (f *fixture) events(q store.EventQuery) []loop.Event {
	f.t.Helper()
	var evs []loop.Event
	if err := f.svc.DB.View(func(tx *store.Tx) error {
		var err error
		evs, err = tx.Events(q)
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
	return evs
}

// mustJSON marshals v.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
