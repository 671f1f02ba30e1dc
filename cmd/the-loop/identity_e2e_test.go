package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Which service the CLI talks to: only its own state root's (decisions D3,
// D4), never another project's that happens to answer on the same port,
// and a service that answers but refuses the CLI never strands an agent.

const projectSessions = `
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%, resumeProbeSeconds: 0.5, harnessKillGraceSeconds: 3}}
standingSessions:
  enabled: true
  sessions:
    - {name: %NAME%, cwd: %DIR%}
`

// Another project's service on the same port: B's CLI never talks to it
// (it talks over B's own socket); B's start brings up B's own service,
// degraded (the port is A's), which runs B's sessions; B's stop ends B's
// service and sessions and leaves A's alone.
func TestIdentity_AnotherProjectsServiceOnThePortIsNeverUsed(t *testing.T) {
	a, port := serviceEnv(t, strings.ReplaceAll(projectSessions, "%NAME%", "alpha"))
	a.must(0, "start")
	waitFor(t, "alpha's agent", func() bool { return a.alive("loop-standing-alpha") })
	aPID := a.servicePID()

	// Project B: its own directory and tmux server, the same service.port.
	b := newEnv(t)
	b.config(strings.ReplaceAll(strings.ReplaceAll(projectSessions, "%NAME%", "beta"), "%PORT%", fmt.Sprint(port)))
	t.Cleanup(func() { b.run("stop") })

	r := b.must(0, "start")
	held := fmt.Sprintf("degraded: 127.0.0.1:%d held by uid %d", port, os.Getuid())
	if !regexpMatch(`(?m)^service +started`, r.stdout) || !strings.Contains(r.stdout, held) || strings.Contains(r.stdout, "already-running") {
		t.Fatalf("B's start: %s", r)
	}
	bPID := b.servicePID()
	if bPID == 0 || bPID == aPID {
		t.Fatalf("B's service pid %d (A's %d)", bPID, aPID)
	}
	if !regexpMatch(`(?m)^beta +started`, r.stdout) || !b.alive("loop-standing-beta") {
		t.Fatalf("B's session was not started: %s", r)
	}
	if evs := a.events("--standing", "beta"); len(evs) != 0 {
		t.Fatalf("A's service recorded B's session: %+v", evs)
	}

	// The standing, status and events verbs reach B's own service.
	if rows := b.rows(); len(rows) != 1 || !rows["beta"].Running {
		t.Fatalf("B's list: %+v", rows)
	}
	r = b.must(1, "status")
	if !regexpMatch(`(?m)^service +running \(pid \d+\) \[enabled\]`, r.stdout) || !strings.Contains(r.stdout, held) ||
		!regexpMatch(`(?m)^beta +running`, r.stdout) {
		t.Fatalf("B's status: %s", r)
	}
	if evs := b.events("--type", "standing.started"); len(evs) != 1 || evs[0].Source != "service" {
		t.Fatalf("B's events: %+v", evs)
	}

	// B's stop stops B's agent and service, and leaves A's alone.
	r = b.must(0, "stop")
	if !regexpMatch(`(?m)^beta +stopped`, r.stdout) || !regexpMatch(`(?m)^service +stopped`, r.stdout) {
		t.Fatalf("B's stop: %s", r)
	}
	if b.alive("loop-standing-beta") || b.servicePID() != 0 {
		t.Fatal("B's stop left B's agent or service running")
	}
	if !a.alive("loop-standing-alpha") || a.servicePID() != aPID {
		t.Fatal("B's stop stopped A's agent or service")
	}
}

// Cron, with no token in its environment: the CLI talks over the socket,
// which needs none — status and stop work as from the operator's shell.
func TestIdentity_WithoutTheTokenTheCLIStillWorks(t *testing.T) {
	const token = "e2e-s3cret"
	e, _ := serviceEnv(t, tokenedService)
	e.extraEnv = []string{"THE_LOOP_E2E_TOKEN=" + token}
	e.must(0, "start")
	waitFor(t, "the agent", func() bool { return e.alive("loop-standing-one") })

	e.extraEnv = nil
	r := e.must(0, "status")
	if !regexpMatch(`(?m)^service +running \(pid \d+\) \[enabled\]`, r.stdout) || !regexpMatch(`(?m)^one +running`, r.stdout) {
		t.Fatalf("status without the token: %s", r)
	}
	r = e.must(0, "stop")
	if !regexpMatch(`(?m)^one +stopped`, r.stdout) {
		t.Fatalf("stop without the token: %s", r)
	}
	if e.servicePID() != 0 || e.alive("loop-standing-one") {
		t.Fatal("stop left the service or the agent running")
	}
}

func TestConfig_AnExplicitPathThatDoesNotExistIsRefused(t *testing.T) {
	e := newEnv(t)
	missing := filepath.Join(e.dir, "typo.yaml")
	for _, verb := range [][]string{{"status"}, {"stop"}, {"standing", "list"}} {
		r := e.runWith(nil, append([]string{"-c", missing}, verb...)...)
		if r.code != 2 || !strings.Contains(r.stderr, missing) || !strings.Contains(r.stderr, "-c/--config") || !strings.Contains(r.stderr, "does not exist") {
			t.Fatalf("%v with -c %s: %s", verb, missing, r)
		}
		r = e.runWith([]string{"THE_LOOP_CLI_CONFIG=" + missing}, verb...)
		if r.code != 2 || !strings.Contains(r.stderr, missing) || !strings.Contains(r.stderr, "$THE_LOOP_CLI_CONFIG") {
			t.Fatalf("%v with THE_LOOP_CLI_CONFIG=%s: %s", verb, missing, r)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".the-loop")); err == nil {
		t.Fatal("a refused verb created the default state root")
	}
	// Commands that need no config still run.
	if r := e.runWith(nil, "-c", missing, "config", "schema"); r.code != 0 {
		t.Fatalf("config schema: %s", r)
	}
	// Without a path, no file still means the defaults.
	if r := e.runWith(nil, "standing", "list"); r.code != 0 {
		t.Fatalf("implicit defaults: %s", r)
	}
}

// runWith runs the-loop in the work dir without the env's -c, with extra
// environment variables.
func (e *env) runWith(extra []string, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = e.dir
	cmd.Env = append(filterEnv(os.Environ(), "TMUX", "TMUX_PANE", "HOME", "PATH", "CLAUDE_CONFIG_DIR", "THE_LOOP_CLI_CONFIG"),
		"HOME="+e.home, "PATH="+e.path, "GORACE=atexit_sleep_ms=0")
	cmd.Env = append(cmd.Env, extra...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("running the-loop %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

func TestStandingDelete_RefusesAnInvalidConfig(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	e.must(0, "standing", "create", "extra", "--cwd", e.dir, "--no-start")
	e.config(oneSession + "service: {port: not-a-port}\n")
	r := e.must(2, "standing", "delete", "extra")
	if !strings.Contains(r.stderr, "service.port") {
		t.Fatalf("delete with an invalid config: %s", r)
	}
	e.must(0, "standing", "stop") // stop still works (decisions D8)
	e.config(oneSession)
	if _, ok := e.rows()["extra"]; !ok {
		t.Fatal("the refused delete forgot the session")
	}
}

// A service that exits at start (here: a socket path longer than a
// socket address holds) fails the start, which quotes its log: the path,
// its length and service.socket.
func TestStart_AServiceThatFailsQuotesItsLog(t *testing.T) {
	e, _ := serviceEnv(t, threeSessions)
	long := filepath.Join(e.dir, strings.Repeat("s", 100)+".sock")
	e.config(strings.Replace(threeSessions, "service: {port: %PORT%}", fmt.Sprintf("service: {port: %d, socket: %s}", freePort(t), long), 1))
	r := e.must(1, "start")
	if !regexpMatch(`(?m)^service +failed .*service\.log: .*`+regexp.QuoteMeta(long)+` is `+fmt.Sprint(len(long))+` bytes long.*service\.socket`, r.stdout) {
		t.Fatalf("start: %s", r)
	}
	if pid := e.servicePID(); pid != 0 {
		t.Fatalf("a service (pid %d) runs after a failed start", pid)
	}
}

// Something else holds the TCP port: the service runs on its socket
// alone, start says so, status says degraded and exits 1, and the verbs
// work over the socket.
func TestStart_APortSomeoneElseHoldsLeavesTheServiceDegraded(t *testing.T) {
	e, port := serviceEnv(t, threeSessions)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := fmt.Sprintf("127.0.0.1:%d held by uid %d: dashboard and /mcp unavailable", port, os.Getuid())
	r := e.must(0, "start")
	if !strings.Contains(r.stdout, "degraded: "+held) || e.servicePID() == 0 {
		t.Fatalf("start: %s (want the service started, degraded: %s)", r, held)
	}
	r = e.must(1, "status")
	if !strings.Contains(r.stdout, "degraded: "+held) {
		t.Fatalf("status: %s", r)
	}
	if rows := e.rows(); !rows["one"].Running {
		t.Fatalf("standing list over the socket: %+v", rows)
	}
}
