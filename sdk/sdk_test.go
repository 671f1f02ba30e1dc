package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/hearing"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/internal/optoken"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
)

// service is the-loop's REST service for one test: a config declaring
// sessions, a real bbolt file, the fake agent as `claude`, a private tmux
// server, on 127.0.0.1:0.
type service struct {
	url   string
	dir   string
	root  string // the state root, whose service.token the client reads
	agent *testkit.Agent
}

func serve(t *testing.T, declared ...string) *service {
	t.Helper()
	s := &service{dir: t.TempDir(), agent: testkit.FakeAgent(t)}
	socket := testkit.Tmux(t)
	var b strings.Builder
	fmt.Fprintf(&b, "state:\n  root: %s\n", filepath.Join(s.dir, "state"))
	fmt.Fprintf(&b, "routing:\n  tmux:\n    socketName: %s\n    resumeProbeSeconds: 0.2\n    harnessKillGraceSeconds: 0.5\n    readySeconds: 10\n    submitDelayMs: 20\n", socket)
	b.WriteString("  harnessTrust:\n    enabled: false\n")
	if len(declared) > 0 {
		b.WriteString("standingSessions:\n  enabled: true\n  sessions:\n")
		for _, n := range declared {
			fmt.Fprintf(&b, "    - name: %s\n      harness: claude\n      cwd: %s\n      autoStart: true\n", n, s.dir)
		}
	}
	cfgPath := filepath.Join(s.dir, "cli-config.yaml")
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(cfg.StateDir(), "the-loop.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tmux := runner.New(runner.Options{Socket: socket, ConfigFile: testkit.TmuxConfig, SubmitDelay: 20 * time.Millisecond, Launcher: testkit.Launcher(t), LockDir: filepath.Join(t.TempDir(), "locks"), LaunchDir: filepath.Join(t.TempDir(), "launch")})
	svc := &lifecycle.Service{
		DB:       db,
		Runner:   func(string) loop.Runner { return tmux },
		Harness:  harness.NewRegistry(harness.ClaudeOptions{Home: s.dir}).Lookup,
		LookPath: func(bin string) (string, error) { return filepath.Join(s.agent.BinDir(), bin), nil },
		Source:   "service",
	}
	svc.Hearing = &hearing.Hearer{DB: db, Events: svc, Harness: svc.Harness, Runner: svc.Runner}
	token, err := optoken.EnsureTokenFile(cfg.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	s.root = cfg.StateDir()
	server := loophttp.NewServer(loophttp.Options{Standing: svc.Standing(func() *config.Config { return cfg }), WorkItems: svc.WorkItems(func() *config.Config { return cfg }), Events: svc, Recorder: svc, Config: func() *config.Config { return cfg },
		Version: "test", Logger: slog.New(slog.DiscardHandler), Token: token, TokenSource: optoken.TokenSource(cfg), Agents: svc.Hearing.(*hearing.Hearer)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- server.Serve(ln) }()
	t.Cleanup(func() {
		if err := server.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-done
		_, _ = svc.StopStanding(context.Background(), cfg, "")
	})
	s.url = "http://" + ln.Addr().String()
	return s
}

func TestStanding_EveryCallAgainstTheService(t *testing.T) {
	s := serve(t, "alpha")
	c, ctx := sdk.New(s.url, sdk.WithStateRoot(s.root)), t.Context()

	h, err := c.Health(ctx)
	if err != nil || h.Status != "ok" || h.Version != "test" {
		t.Fatalf("health %+v %v", h, err)
	}
	res, err := c.Standing.Control(ctx, loop.StandingControlRequest{Verb: loop.VerbStart, AutoOnly: true})
	if err != nil || !res.OK || len(res.Sessions) != 1 || res.Sessions[0].Outcome != loop.OutcomeStarted {
		t.Fatalf("start the auto-starting ones: %+v %v", res, err)
	}
	created, err := c.Standing.Create(ctx, sdk.CreateOptions{Name: "beta", Cwd: s.dir, Description: "made by the SDK", HarnessArgs: []string{}}.Request())
	if err != nil || !created.OK || created.Sessions[0].Outcome != loop.OutcomeStarted || !created.Sessions[0].AutoStart {
		t.Fatalf("create %+v %v", created, err)
	}
	rows, err := c.Standing.List(ctx)
	if err != nil || len(rows) != 2 || rows[0].Name != "alpha" || rows[1].Name != "beta" || !rows[0].Running || !rows[1].Running {
		t.Fatalf("list %+v %v", rows, err)
	}
	row, err := c.Standing.Get(ctx, "beta")
	if err != nil || row.Origin != loop.OriginCreated || row.Description != "made by the SDK" || row.HarnessSessionID == "" {
		t.Fatalf("get %+v %v", row, err)
	}
	said, err := c.Standing.Say(ctx, loop.StandingSayRequest{Name: "alpha", Text: "status report, please", Actor: "sdk"})
	if err != nil || !said.Delivered || said.ExitCode != 0 {
		t.Fatalf("say %+v %v", said, err)
	}
	s.agent.WaitFor(t, func(e testkit.Entry) bool {
		return e.Kind == "message" && strings.Contains(e.Text, "status report, please")
	}, 5*time.Second)
	restarted, err := c.Standing.Control(ctx, loop.StandingControlRequest{Name: "alpha", Verb: loop.VerbRestart})
	if err != nil || !restarted.OK || len(restarted.Stopped) != 1 || restarted.Sessions[0].Outcome != loop.OutcomeResumed {
		t.Fatalf("restart %+v %v", restarted, err)
	}
	rep, err := c.Status(ctx)
	if err != nil || !rep.OK || len(rep.Services) != 1 || rep.Services[0].URL != s.url || len(rep.StandingSessions) != 2 {
		t.Fatalf("status %+v %v", rep, err)
	}
	deleted, err := c.Standing.Delete(ctx, loop.StandingDeleteRequest{Name: "beta"})
	if err != nil || !deleted.OK || deleted.Sessions[0].Outcome != loop.OutcomeDeleted {
		t.Fatalf("delete %+v %v", deleted, err)
	}
	stopped, err := c.Standing.Control(ctx, loop.StandingControlRequest{Name: "", Verb: loop.VerbStop})
	if err != nil || !stopped.OK || stopped.Sessions[0].Outcome != loop.OutcomeStopped {
		t.Fatalf("stop %+v %v", stopped, err)
	}
	evs, err := c.Events(ctx, sdk.EventsQuery{Types: []string{"standing.*"}, Standing: "beta"})
	if err != nil || len(evs) < 3 || evs[0].Event != "standing.created" || evs[len(evs)-1].Event != "standing.deleted" {
		t.Fatalf("events %+v %v", evs, err)
	}
	after, err := c.Events(ctx, sdk.EventsQuery{Types: []string{"standing.*"}, After: evs[len(evs)-1].Seq})
	if err != nil || len(after) != 1 || after[0].Event != "standing.stopped" || after[0].Field("standing") != "alpha" {
		t.Fatalf("events after %d: %+v %v", evs[len(evs)-1].Seq, after, err)
	}
}

// TestErrors_TypedFromTheService: refusals come back as *sdk.Error whose
// kind errors.Is tells apart, with the service's message.
func TestErrors_TypedFromTheService(t *testing.T) {
	s := serve(t, "alpha")
	c, ctx := sdk.New(s.url, sdk.WithStateRoot(s.root)), t.Context()
	cases := []struct {
		name string
		call func() error
		kind error
		msg  string
	}{
		{"get of an unknown name", func() error { _, err := c.Standing.Get(ctx, "nobody"); return err }, sdk.ErrNotFound, "no standing session 'nobody'"},
		{"delete of a name never created", func() error { _, err := c.Standing.Delete(ctx, loop.StandingDeleteRequest{Name: "nobody"}); return err }, sdk.ErrNotFound, "neither declared"},
		{"say to a session not started", func() error {
			_, err := c.Standing.Say(ctx, loop.StandingSayRequest{Name: "alpha", Text: "hi", Actor: ""})
			return err
		}, sdk.ErrNotFound, "has never been started"},
		{"restart of an unknown name", func() error {
			_, err := c.Standing.Control(ctx, loop.StandingControlRequest{Name: "nobody", Verb: loop.VerbRestart})
			return err
		}, sdk.ErrNotFound, "neither declared"},
		{"create of an invalid name", func() error {
			_, err := c.Standing.Create(ctx, sdk.CreateOptions{Name: "Not Valid"}.Request())
			return err
		}, sdk.ErrInvalid, "invalid standing-session name 'Not Valid'"},
		{"create of a declared name", func() error { _, err := c.Standing.Create(ctx, sdk.CreateOptions{Name: "alpha"}.Request()); return err }, sdk.ErrInvalid, "already declared"},
		{"delete of a declared name", func() error { _, err := c.Standing.Delete(ctx, loop.StandingDeleteRequest{Name: "alpha"}); return err }, sdk.ErrInvalid, "is declared"},
		{"an unknown verb", func() error {
			_, err := c.Standing.Control(ctx, loop.StandingControlRequest{Name: "alpha", Verb: "detonate"})
			return err
		}, sdk.ErrInvalid, "unknown verb 'detonate'"},
		{"an empty message", func() error {
			_, err := c.Standing.Say(ctx, loop.StandingSayRequest{Name: "alpha", Text: "  ", Actor: ""})
			return err
		}, sdk.ErrInvalid, "the message is empty"},
		{"an unknown level", func() error { _, err := c.Events(ctx, sdk.EventsQuery{Level: "loud"}); return err }, sdk.ErrInvalid, "invalid level 'loud'"},
		{"a since that is neither a time nor an age", func() error { _, err := c.Events(ctx, sdk.EventsQuery{Since: "yesterday"}); return err }, sdk.ErrInvalid, "invalid since 'yesterday'"},
	}
	kinds := []error{sdk.ErrNotFound, sdk.ErrInvalid, sdk.ErrUnprocessable, sdk.ErrInternal, sdk.ErrNotRunning}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var se *sdk.Error
			if !errors.As(err, &se) || !strings.Contains(se.Message, tc.msg) || err.Error() != se.Message {
				t.Fatalf("got %v (%T), want an *sdk.Error saying %q", err, err, tc.msg)
			}
			for _, k := range kinds {
				if errors.Is(err, k) != (k == tc.kind) {
					t.Errorf("errors.Is(err, %v) = %v", k, errors.Is(err, k))
				}
			}
			var le *loop.Error // the cause stays reachable
			if !errors.As(err, &le) || le.Code != se.Code {
				t.Errorf("cause %v", se.Err)
			}
		})
	}
}

// TestErrors_UnprocessableIsInvalid: a 422 is both ErrUnprocessable and
// ErrInvalid (a caller's mistake, as the CLI's exit 2); a 500 is internal.
func TestErrors_UnprocessableIsInvalid(t *testing.T) {
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/status" {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, `{"detail":"it broke"}`)
			return
		}
		w.WriteHeader(422)
		_, _ = io.WriteString(w, `{"detail":"body.verb: field required"}`)
	}))
	defer stub.Close()
	c := sdk.New(stub.URL)
	_, err := c.Standing.Control(t.Context(), loop.StandingControlRequest{Name: "alpha", Verb: loop.VerbStart})
	if !errors.Is(err, sdk.ErrUnprocessable) || !errors.Is(err, sdk.ErrInvalid) || errors.Is(err, sdk.ErrNotFound) || err.Error() != "body.verb: field required" {
		t.Fatalf("422: %v", err)
	}
	_, err = c.Status(t.Context())
	if !errors.Is(err, sdk.ErrInternal) || errors.Is(err, sdk.ErrInvalid) || err.Error() != "it broke" {
		t.Fatalf("500: %v", err)
	}
}

// TestErrors_UnauthorizedAndForbidden: a 401 (no or a wrong token) and a
// 403 (a Host the service refuses) are kinds of their own, not internal.
func TestErrors_UnauthorizedAndForbidden(t *testing.T) {
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/status" {
			w.WriteHeader(403)
			_, _ = io.WriteString(w, `{"detail":"the-loop does not answer to Host"}`)
			return
		}
		w.WriteHeader(401)
		_, _ = io.WriteString(w, `{"detail":"no bearer token"}`)
	}))
	defer stub.Close()
	c := sdk.New(stub.URL)
	_, err := c.Standing.List(t.Context())
	if !errors.Is(err, sdk.ErrUnauthorized) || errors.Is(err, sdk.ErrInternal) || errors.Is(err, sdk.ErrForbidden) || err.Error() != "no bearer token" {
		t.Fatalf("401: %v", err)
	}
	_, err = c.Status(t.Context())
	if !errors.Is(err, sdk.ErrForbidden) || errors.Is(err, sdk.ErrInternal) || errors.Is(err, sdk.ErrUnauthorized) {
		t.Fatalf("403: %v", err)
	}
}

func TestErrors_NotRunning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = sdk.New(url).Standing.List(t.Context())
	var nr *sdk.NotRunningError
	if !errors.Is(err, sdk.ErrNotRunning) || errors.Is(err, sdk.ErrInternal) || !errors.As(err, &nr) || !strings.Contains(err.Error(), "the-loop start") {
		t.Fatalf("got %v (%T)", err, err)
	}
}

// TestOptions_SentAsAsked: the token and HTTP client options are used, and
// CreateOptions' zero values are the service's defaults (autoStart and
// start true, harnessArgs inherited).
func TestOptions_SentAsAsked(t *testing.T) {
	var auth []string
	var bodies []map[string]any
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		bodies = append(bodies, m)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"sessions":[],"ok":true}`)
	}))
	defer stub.Close()
	used := false
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used = true
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := sdk.New(stub.URL, sdk.WithToken("s3cret"), sdk.WithHTTPClient(hc))
	ctx := t.Context()
	if _, err := c.Standing.Create(ctx, sdk.CreateOptions{Name: "a"}.Request()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Standing.Create(ctx, sdk.CreateOptions{Name: "b", HarnessArgs: []string{}, NoAutoStart: true, NoStart: true}.Request()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Standing.Control(ctx, loop.StandingControlRequest{Name: "", Verb: loop.VerbStop}); err != nil {
		t.Fatal(err)
	}
	if !used || len(auth) != 3 || auth[0] != "Bearer s3cret" {
		t.Fatalf("client used %v, Authorization %q", used, auth)
	}
	a, b, stop := bodies[0], bodies[1], bodies[2]
	if a["autoStart"] != true || a["start"] != true || a["harnessArgs"] != nil || a["name"] != "a" {
		t.Errorf("create with defaults sent %v", a)
	}
	if b["autoStart"] != false || b["start"] != false || fmt.Sprint(b["harnessArgs"]) != "[]" {
		t.Errorf("create with options sent %v", b)
	}
	if stop["verb"] != "stop" || stop["name"] != "" || stop["autoOnly"] != false {
		t.Errorf("control sent %v", stop)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestToken_FromTheStateRootTheEnvOrTheOption: the SDK finds the
// operator's token without the CLI config — WithStateRoot's file,
// $THE_LOOP_TOKEN, WithToken — and without one gets ErrUnauthorized
// naming the file.
func TestToken_FromTheStateRootTheEnvOrTheOption(t *testing.T) {
	s := serve(t)
	ctx := t.Context()
	token, err := sdk.ReadTokenFile(s.root)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(sdk.TokenEnvVar, "")
	_, err = sdk.New(s.url).Standing.List(ctx)
	if !errors.Is(err, sdk.ErrUnauthorized) || !strings.Contains(err.Error(), sdk.TokenPath(s.root)) || strings.Contains(err.Error(), token) {
		t.Fatalf("without a token: %v", err)
	}
	for name, c := range map[string]*sdk.Client{
		"WithStateRoot": sdk.New(s.url, sdk.WithStateRoot(s.root)),
		"WithToken":     sdk.New(s.url, sdk.WithToken(token)),
	} {
		if _, err := c.Standing.List(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	t.Setenv(sdk.TokenEnvVar, token)
	if _, err := sdk.New(s.url).Standing.List(ctx); err != nil {
		t.Fatalf("$THE_LOOP_TOKEN: %v", err)
	}
	if _, err := sdk.New(s.url, sdk.WithToken("not-it")).Standing.List(ctx); !errors.Is(err, sdk.ErrUnauthorized) {
		t.Fatalf("a wrong WithToken beats the env: %v", err)
	}
}
