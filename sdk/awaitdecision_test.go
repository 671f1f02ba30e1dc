package sdk

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// A service that takes the connection but never says it holds the
// request is taken as none: AwaitDecision gives up at heldWithin, on the
// bubble's fake clock, with an error that carries no status (the hook
// then prints nothing).
func TestAwaitDecision_AServiceThatNeverAnswersIsNoneAfterHeldWithin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, server := net.Pipe()
		defer server.Close()
		go func() { // reads the request, answers nothing
			_, _ = http.ReadRequest(bufio.NewReader(server))
			<-t.Context().Done()
		}()
		hc := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return client, nil }}}
		c := New("http://the-loop.sock", WithHTTPClient(hc), WithToken(""))
		began := time.Now()
		_, err := c.AwaitDecision(context.Background(), loop.HookDelivery{Session: "standing:w", Payload: []byte(`{"hook_event_name":"PermissionRequest"}`)}, 2*time.Second)
		if err == nil || HTTPStatus(err) != 0 {
			t.Fatalf("err = %v (status %d), want a transport error", err, HTTPStatus(err))
		}
		if waited := time.Since(began); waited != 2*time.Second {
			t.Errorf("gave up after %s, want 2s", waited)
		}
	})
}

// Once the service says it holds the request, the wait is unbounded by
// heldWithin: a decision that comes later is the answer.
func TestAwaitDecision_AHeldRequestWaitsPastHeldWithin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, server := net.Pipe()
		defer server.Close()
		go func() {
			r := bufio.NewReader(server)
			if _, err := http.ReadRequest(r); err != nil {
				return
			}
			_, _ = server.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"))
			time.Sleep(time.Minute) // the decider takes a minute
			body := `{"id":"a1","behavior":"allow"}`
			_, _ = server.Write([]byte("1e\r\n" + body + "\r\n0\r\n\r\n"))
		}()
		hc := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return client, nil }}}
		c := New("http://the-loop.sock", WithHTTPClient(hc), WithToken(""))
		a, err := c.AwaitDecision(context.Background(), loop.HookDelivery{Session: "standing:w", Payload: []byte(`{"hook_event_name":"PermissionRequest"}`)}, 2*time.Second)
		if err != nil || a.Behavior != loop.DecisionAllow {
			t.Fatalf("AwaitDecision = %+v, %v; want the allow", a, err)
		}
	})
}
