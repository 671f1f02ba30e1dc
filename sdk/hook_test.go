package sdk_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/sdk"
)

// TestHookRequest_RoundTrips: what NewHookRequest writes, ReadHookDelivery
// reads back whole — the session (one that needs escaping too), the
// payload, the truncation flag and the id — and the parents never travel.
func TestHookRequest_RoundTrips(t *testing.T) {
	for _, d := range []loop.HookDelivery{
		{Session: "standing:alpha", Payload: []byte(`{"hook_event_name":"Stop","session_id":"abc"}`), Truncated: true, ID: "d-1"},
		{Session: "owner/repo#12 &x=y", Payload: []byte(`{}`)},
	} {
		req, err := sdk.NewHookRequest(context.Background(), "http://the-loop.sock/", loop.HookDelivery{
			Session: d.Session, Payload: d.Payload, Truncated: d.Truncated, ID: d.ID, Parents: []int{42, 7}})
		if err != nil {
			t.Fatal(err)
		}
		if req.Method != http.MethodPost || req.URL.Path != sdk.HooksPath || req.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("request %s %s (Content-Type %q), want POST %s as JSON", req.Method, req.URL, req.Header.Get("Content-Type"), sdk.HooksPath)
		}
		got, err := sdk.ReadHookDelivery(req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Fatalf("read back %+v, want %+v (no parents)", got, d)
		}
	}
}

// TestClient_PostHookSpeaksTheWireFormat: Client.PostHook sends the
// delivery as the route reads it, and a non-2xx answer comes back with
// its status.
func TestClient_PostHookSpeaksTheWireFormat(t *testing.T) {
	var mu sync.Mutex
	var got []loop.HookDelivery
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := sdk.ReadHookDelivery(r)
		if err != nil || r.URL.Path != sdk.HooksPath {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		mu.Lock()
		got = append(got, d)
		code := status
		mu.Unlock()
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	c := sdk.New(srv.URL, sdk.WithToken("t"))
	want := loop.HookDelivery{Session: "standing:alpha", Payload: []byte(`{"hook_event_name":"Stop"}`), Truncated: true, ID: "d-2"}
	if err := c.PostHook(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	status = http.StatusServiceUnavailable
	mu.Unlock()
	err := c.PostHook(context.Background(), want)
	if sdk.HTTPStatus(err) != http.StatusServiceUnavailable {
		t.Fatalf("a 503: got %v (status %d)", err, sdk.HTTPStatus(err))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("the service read %+v, want %+v twice", got, want)
	}
}
