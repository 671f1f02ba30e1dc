package sdk

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

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
	c := New(stub.URL+"/", WithToken("s3cret"))
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
	c := New(url, WithToken(""))
	_, err = c.Health(t.Context())
	var nr *NotRunningError
	if !errors.As(err, &nr) || nr.URL != url {
		t.Fatalf("got %v (%T), want *NotRunningError", err, err)
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
	c := New(stub.URL, WithToken("s3cret"))
	h, err := c.Health(t.Context())
	if err != nil || h.StateRoot != "/elsewhere" {
		t.Fatalf("health %+v %v", h, err)
	}
	_, err = c.Standing.List(t.Context())
	if auth["/api/v1/health"] != "" || auth["/api/v1/standing-sessions"] != "Bearer s3cret" {
		t.Fatalf("Authorization sent: %q", auth)
	}
	if HTTPStatus(err) != http.StatusUnauthorized || loop.ErrorMessage(err) != "no bearer token" {
		t.Fatalf("401: %v (status %d)", err, HTTPStatus(err))
	}
}
