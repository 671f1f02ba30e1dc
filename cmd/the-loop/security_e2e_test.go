package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The control plane's boundary end to end (decisions D24): the binary as an
// operator runs it.

const tokenedService = `
state: {root: .the-loop}
service: {port: %PORT%, tokenEnv: THE_LOOP_E2E_TOKEN}
routing: {tmux: {socketName: %SOCKET%, resumeProbeSeconds: 0.5, harnessKillGraceSeconds: 3}}
standingSessions:
  enabled: true
  sessions:
    - {name: one, cwd: %DIR%}
`

// rawGet sends GET url with the given Authorization header ("" for none).
func rawGet(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestSecurity_WithATokenTheCLIWorksAndRawRequestsDoNot(t *testing.T) {
	const token = "e2e-s3cret"
	e, port := serviceEnv(t, tokenedService)
	e.extraEnv = []string{"THE_LOOP_E2E_TOKEN=" + token}

	e.must(0, "start")
	if pid := e.servicePID(); pid == 0 {
		t.Fatal("start left no service running")
	}
	if rows := e.rows(); !rows["one"].Running {
		t.Fatalf("standing list: %+v", rows)
	}
	e.must(0, "standing", "list")
	rep, r := e.status()
	if r.code != 0 || !rep.OK || len(rep.Services) != 1 || !rep.Services[0].Running || !rep.Services[0].Healthy {
		t.Fatalf("status: %s", r)
	}

	base := fmt.Sprintf("http://127.0.0.1:%d/api/v1", port)
	if code, body := rawGet(t, base+"/standing-sessions", ""); code != http.StatusUnauthorized || !strings.Contains(body, "THE_LOOP_E2E_TOKEN") {
		t.Fatalf("without the token: %d %s", code, body)
	}
	if code, body := rawGet(t, base+"/standing-sessions", "Bearer not-it"); code != http.StatusUnauthorized {
		t.Fatalf("with a wrong token: %d %s", code, body)
	}
	if code, body := rawGet(t, base+"/health", ""); code != http.StatusOK {
		t.Fatalf("health without the token: %d %s", code, body)
	}
	if code, body := rawGet(t, base+"/standing-sessions", "Bearer "+token); code != http.StatusOK {
		t.Fatalf("with the token: %d %s", code, body)
	}

	// A CLI without the variable still works: it talks over the socket,
	// where the kernel says who it is, and sends no token.
	e.extraEnv = nil
	e.must(0, "standing", "list")
	e.extraEnv = []string{"THE_LOOP_E2E_TOKEN=" + token}
	e.must(0, "stop")
}

func TestSecurity_AnEmptyTokenVariableRefusesToServe(t *testing.T) {
	e, _ := serviceEnv(t, tokenedService)
	for _, env := range [][]string{{"THE_LOOP_E2E_TOKEN="}, nil} {
		e.extraEnv = env
		r := e.must(2, "serve")
		if !strings.Contains(r.stderr, "service.tokenEnv") || !strings.Contains(r.stderr, "THE_LOOP_E2E_TOKEN") {
			t.Fatalf("serve with %v: %s", env, r)
		}
		r = e.must(2, "start")
		if !strings.Contains(r.stderr, "THE_LOOP_E2E_TOKEN") {
			t.Fatalf("start with %v: %s", env, r)
		}
		if pid := e.servicePID(); pid != 0 {
			t.Fatalf("a service (pid %d) was spawned", pid)
		}
	}
}

func TestSecurity_BeyondLoopbackWithoutExposedRefuses(t *testing.T) {
	e, _ := serviceEnv(t, strings.Replace(threeSessions, "service: {port: %PORT%}", "service: {host: 0.0.0.0, port: %PORT%}", 1))
	for _, verb := range []string{"serve", "start", "restart"} {
		r := e.must(2, verb)
		if !strings.Contains(r.stderr, "service.host") || !strings.Contains(r.stderr, "service.exposed") || !strings.Contains(r.stderr, "0.0.0.0") {
			t.Fatalf("%s: %s", verb, r)
		}
	}
	if pid := e.servicePID(); pid != 0 {
		t.Fatalf("a service (pid %d) was spawned", pid)
	}
	if e.alive("loop-standing-one") || len(e.starts()) != 0 {
		t.Fatal("a standing session was started")
	}
}
