package http

import (
	"errors"
	"github.com/the-loop-dev/the-loop/sdk"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestClient_AgainstTheService(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	c, ctx := f.client, t.Context()

	h, err := c.Health(ctx)
	if err != nil || h.Status != "ok" || h.Version != "test-version" || h.PID == 0 || h.StateRoot != filepath.Join(f.dir, "state") {
		t.Fatalf("health %+v %v", h, err)
	}
	res, err := c.Standing.Control(ctx, loop.StandingControlRequest{Name: "", Verb: "start", AutoOnly: true})
	if err != nil || !res.OK || len(res.Sessions) != 1 || res.Sessions[0].Outcome != loop.OutcomeStarted {
		t.Fatalf("start %+v %v", res, err)
	}
	rows, err := c.Standing.List(ctx)
	if err != nil || len(rows) != 1 || !rows[0].Running {
		t.Fatalf("list %+v %v", rows, err)
	}
	row, err := c.Standing.Get(ctx, "alpha")
	if err != nil || row.Name != "alpha" || row.HarnessSessionID == "" {
		t.Fatalf("get %+v %v", row, err)
	}
	args := []string{}
	created, err := c.Standing.Create(ctx, loop.StandingCreateRequest{Name: "beta", Cwd: f.dir, HarnessArgs: &args, AutoStart: true, Start: false})
	if err != nil || !created.OK || created.Sessions[0].Status != loop.StatusStopped {
		t.Fatalf("create %+v %v", created, err)
	}
	said, err := c.Standing.Say(ctx, loop.StandingSayRequest{Name: "alpha", Text: "status report, please", Actor: "ops"})
	if err != nil || !said.Delivered {
		t.Fatalf("say %+v %v", said, err)
	}
	rep, err := c.Status(ctx)
	if err != nil || len(rep.Services) != 1 || rep.Services[0].URL != f.url || len(rep.StandingSessions) != 2 {
		t.Fatalf("status %+v %v", rep, err)
	}
	deleted, err := c.Standing.Delete(ctx, loop.StandingDeleteRequest{Name: "beta"})
	if err != nil || deleted.Sessions[0].Outcome != loop.OutcomeDeleted {
		t.Fatalf("delete %+v %v", deleted, err)
	}

	evs, err := c.Events(ctx, loop.EventQuery{Types: []string{"standing.*"}, Standing: "alpha"})
	if err != nil || len(evs) < 2 {
		t.Fatalf("events %+v %v", evs, err)
	}
	for i, e := range evs {
		if e.Seq == 0 || (i > 0 && e.Seq <= evs[i-1].Seq) || e.Field("seq") != nil || e.Field("standing") != "alpha" {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	after, err := c.Events(ctx, loop.EventQuery{After: evs[0].Seq, Limit: 1, Types: []string{"standing.*"}, Standing: "alpha"})
	if err != nil || len(after) != 1 || after[0].Seq != evs[len(evs)-1].Seq {
		t.Fatalf("events after/limit: %+v %v", after, err)
	}
	said2, err := c.Events(ctx, loop.EventQuery{WorkItem: "standing:alpha", Level: "info", Since: "1h", Types: []string{"standing.said"}})
	if err != nil || len(said2) != 1 || said2[0].Field("actor") != "ops" {
		t.Fatalf("events by work item: %+v %v", said2, err)
	}

	// Refusals come back typed.
	for _, tc := range []struct {
		call func() error
		code string
	}{
		{func() error { _, err := c.Standing.Get(ctx, "nobody"); return err }, loop.ENOTFOUND},
		{func() error {
			_, err := c.Standing.Control(ctx, loop.StandingControlRequest{Name: "alpha", Verb: "detonate", AutoOnly: false})
			return err
		}, loop.EINVALID},
		{func() error { _, err := c.Standing.Create(ctx, loop.StandingCreateRequest{Name: "alpha"}); return err }, loop.EINVALID},
		{func() error {
			_, err := c.Standing.Say(ctx, loop.StandingSayRequest{Name: "nobody", Text: "hi", Actor: ""})
			return err
		}, loop.ENOTFOUND},
		{func() error { _, err := c.Events(ctx, loop.EventQuery{Level: "loud"}); return err }, loop.EINVALID},
	} {
		err := tc.call()
		var le *loop.Error
		if !errors.As(err, &le) || le.Code != tc.code || le.Message == "" {
			t.Errorf("got %v (%T), want code %s", err, err, tc.code)
		}
	}
}

func TestClient_MapsStatusesToCodes(t *testing.T) {
	var auth string
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		switch r.URL.Query().Get("name") {
		case "404":
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"detail":"no such session"}`))
		case "400":
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"detail":"caller mistake"}`))
		case "422":
			w.WriteHeader(422)
			_, _ = w.Write([]byte(`{"detail":"body.verb: field required"}`))
		case "500":
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`{"detail":"it broke"}`))
		case "502":
			w.WriteHeader(502)
			_, _ = w.Write([]byte(`<html>bad gateway</html>`))
		case "garbage":
			_, _ = w.Write([]byte(`not json`))
		}
	}))
	defer stub.Close()
	c := sdk.New(stub.URL+"/", sdk.WithToken("s3cret"))
	for _, tc := range []struct{ name, code, msg string }{
		{"404", loop.ENOTFOUND, "no such session"},
		{"400", loop.EINVALID, "caller mistake"},
		{"422", loop.EUNPROCESSABLE, "body.verb: field required"},
		{"500", loop.EINTERNAL, "it broke"},
		{"502", loop.EINTERNAL, "502 Bad Gateway: <html>bad gateway</html>"},
		{"garbage", loop.EINTERNAL, "not the expected JSON"},
	} {
		_, err := c.Standing.Get(t.Context(), tc.name)
		var le *loop.Error
		if !errors.As(err, &le) || le.Code != tc.code || !strings.Contains(le.Message, tc.msg) {
			t.Errorf("%s: got %v (%T), want %s %q", tc.name, err, err, tc.code, tc.msg)
		}
		if loop.ExitCode(loop.ErrorCode(err)) == 0 {
			t.Errorf("%s: exit code 0", tc.name)
		}
	}
	if auth != "Bearer s3cret" {
		t.Fatalf("Authorization %q", auth)
	}
}

func TestClient_NotRunningHintsHowToStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens here now: connection refused
	c := sdk.New(url, sdk.WithToken(""))
	_, err = c.Health(t.Context())
	var nr *sdk.NotRunningError
	if !errors.As(err, &nr) || nr.URL != url {
		t.Fatalf("got %v (%T), want *sdk.NotRunningError", err, err)
	}
	want := "the-loop service is not running at " + url + " — start it with `the-loop start` (or `the-loop serve`)"
	if err.Error() != want {
		t.Fatalf("message %q", err.Error())
	}
	if _, err := c.Standing.Control(t.Context(), loop.StandingControlRequest{Name: "", Verb: "stop", AutoOnly: false}); !errors.As(err, &nr) {
		t.Fatalf("POST: got %v", err)
	}
}

// TestClient_HealthNeverSendsTheToken: whoever answers at the address is
// not known to be the service the token belongs to until its health says
// which state root it holds, so health goes without the token; every other
// call carries it, and a refusal keeps its HTTP status.
func TestClient_HealthNeverSendsTheToken(t *testing.T) {
	auth := map[string]string{}
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth[r.URL.Path] = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/health" {
			_, _ = w.Write([]byte(`{"status":"ok","version":"x","pid":7,"stateRoot":"/elsewhere"}`))
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"detail":"no bearer token"}`))
	}))
	defer stub.Close()
	c := sdk.New(stub.URL, sdk.WithToken("s3cret"))
	h, err := c.Health(t.Context())
	if err != nil || h.StateRoot != "/elsewhere" {
		t.Fatalf("health %+v %v", h, err)
	}
	_, err = c.Standing.List(t.Context())
	if auth["/api/v1/health"] != "" || auth["/api/v1/standing-sessions"] != "Bearer s3cret" {
		t.Fatalf("Authorization sent: %q", auth)
	}
	if sdk.HTTPStatus(err) != http.StatusUnauthorized || loop.ErrorMessage(err) != "no bearer token" {
		t.Fatalf("401: %v (status %d)", err, sdk.HTTPStatus(err))
	}
}
