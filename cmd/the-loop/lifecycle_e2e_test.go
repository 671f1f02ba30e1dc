package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// freePort returns a loopback port nothing listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// serviceEnv is an env whose config runs the service on a free port; the
// service is stopped when the test ends.
func serviceEnv(t *testing.T, yaml string) (*env, int) {
	t.Helper()
	e := newEnv(t)
	port := freePort(t)
	e.config(strings.ReplaceAll(yaml, "%PORT%", fmt.Sprint(port)))
	t.Cleanup(func() {
		e.run("stop")
		if pid := e.servicePID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return e, port
}

func (e *env) servicePID() int {
	data, err := os.ReadFile(e.dir + "/.the-loop/local/service.pid")
	if err != nil {
		return 0
	}
	var pid int
	fmt.Sscan(string(data), &pid)
	if pid <= 0 || testkit.ProcessGone(pid) { // a zombie nobody reaps counts as gone
		return 0
	}
	return pid
}

// token is the operator's token the service created in the state root
// (.the-loop/service.token), as `the-loop token` prints it.
func (e *env) token() string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.dir, ".the-loop", "service.token"))
	if err != nil {
		e.t.Fatalf("the operator's token: %v", err)
	}
	return strings.TrimSpace(string(data))
}

func (e *env) status() (loop.Report, result) {
	e.t.Helper()
	r := e.run("status", "--format", "json")
	var rep loop.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		e.t.Fatalf("status json: %v\n%s", err, r)
	}
	return rep, r
}

// threeSessions' resume probe (1 s) leaves room for the launcher's exec
// (every spawn goes through `the-loop internal-exec`) before a
// resume that fails is told from one that lives, on a loaded machine.
const threeSessions = `
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%, resumeProbeSeconds: 1, harnessKillGraceSeconds: 3}}
standingSessions:
  enabled: true
  sessions:
    - {name: one, cwd: %DIR%}
    - {name: two, cwd: %DIR%}
    - {name: idle, cwd: %DIR%, autoStart: false}
`

func TestLifecycle_StartStatusStopRestart(t *testing.T) {
	// The agent this test kills must stay dead for status to report it:
	// no supervisor restarts (supervise_e2e_test.go covers those).
	e, _ := serviceEnv(t, strings.Replace(threeSessions, "  enabled: true\n", "  enabled: true\n  restart: {policy: never}\n", 1))

	r := e.must(0, "start")
	if !regexpMatch(`(?m)^service  started +\[enabled\]`, r.stdout) ||
		!regexpMatch(`(?m)^one +started `, r.stdout) || !regexpMatch(`(?m)^two +started `, r.stdout) ||
		strings.Contains(r.stdout, "idle") {
		t.Fatalf("start: %s", r)
	}
	r = e.must(0, "start")
	if !strings.Contains(r.stdout, "service  already-running") || !regexpMatch(`(?m)^one +already-running`, r.stdout) {
		t.Fatalf("second start: %s", r)
	}
	rep, r := e.status()
	if r.code != 0 || !rep.OK || !rep.Services[0].Running || len(rep.StandingSessions) != 3 {
		t.Fatalf("status: %s", r)
	}
	// The sessions were started by the service (decisions D4).
	for _, ev := range e.events("--type", "standing.started") {
		if ev.Source != "service" {
			t.Fatalf("standing.started from %q", ev.Source)
		}
	}

	// An agent dies: status says so, naming it.
	waitFor(t, "two agents", func() bool { return len(e.starts()) == 2 })
	var one int
	for _, s := range e.starts() {
		if strings.Contains(s.Prompt, "**one**") {
			one = s.Pid
		}
	}
	_ = syscall.Kill(one, syscall.SIGKILL)
	waitFor(t, "status to notice", func() bool { return e.run("status").code == 1 })
	r = e.must(1, "status")
	if !regexpMatch(`(?m)^one +not running \[declared\]`, r.stdout) || !regexpMatch(`(?m)^two +running \[declared\]`, r.stdout) ||
		!regexpMatch(`(?m)^idle +absent \[declared, not auto-started\]`, r.stdout) { // never started: its row's status, as list words it
		t.Fatalf("status text: %s", r)
	}

	// A created autoStart session comes back with restart, like the declared.
	e.must(0, "standing", "create", "extra", "--cwd", e.dir)
	// Its agent runs before the restart stops it, so it has a conversation
	// to flush (a SIGTERM before the agent is up leaves none to resume).
	waitFor(t, "extra's agent", func() bool {
		return slices.ContainsFunc(e.starts(), func(s testkit.Entry) bool { return strings.Contains(s.Prompt, "**extra**") })
	})
	ids := map[string]string{}
	for name, row := range e.rows() {
		ids[name] = row.HarnessSessionID
	}
	r = e.must(0, "restart")
	if !strings.Contains(r.stdout, "stopping:") || !strings.Contains(r.stdout, "starting:") {
		t.Fatalf("restart: %s", r)
	}
	for _, name := range []string{"two", "extra"} {
		if !regexpMatch(`(?m)^`+name+` +resumed `, r.stdout) {
			t.Errorf("%s did not resume: %s", name, r)
		}
	}
	// one was SIGKILLed: its conversation was never flushed, so the resume
	// fails its probe and one starts afresh.
	if !regexpMatch(`(?m)^one +started `, r.stdout) || len(e.events("--standing", "one", "--type", "standing.resume_failed")) != 1 {
		t.Errorf("one did not fall back to a fresh start: %s", r)
	}
	for name, row := range e.rows() {
		if name != "idle" && (row.HarnessSessionID != ids[name]) != (name == "one") || name != "idle" && !row.Running {
			t.Errorf("%s after restart: %+v (was %s)", name, row, ids[name])
		}
	}

	r = e.must(0, "stop")
	if !strings.Contains(r.stdout, "service  stopped") || !regexpMatch(`(?m)^one +stopped`, r.stdout) || !regexpMatch(`(?m)^extra +stopped`, r.stdout) {
		t.Fatalf("stop: %s", r)
	}
	if e.servicePID() != 0 {
		t.Fatal("the service survived stop")
	}
	rep, r = e.status()
	if r.code != 1 || rep.OK || rep.Services[0].Running {
		t.Fatalf("status after stop: %s", r)
	}
	e.must(0, "stop") // idempotent
}

func TestLifecycle_DisabledBlockAndMisconfigured(t *testing.T) {
	e, _ := serviceEnv(t, strings.Replace(threeSessions, "enabled: true", "enabled: false", 1))
	r := e.must(0, "start")
	if !strings.Contains(r.stdout, "standing sessions: disabled (standingSessions.enabled is false)") {
		t.Fatalf("start: %s", r)
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("%d agents started with the block disabled", n)
	}
	e.must(0, "status")
	e.must(0, "standing", "start", "one") // by hand, it still starts
	waitFor(t, "the agent", func() bool { return len(e.starts()) == 1 })

	e.config(strings.Replace(strings.ReplaceAll(threeSessions, "%PORT%", fmt.Sprint(freePortOf(t, e))), "- {name: idle", "- {name: Idle", 1))
	// One verdict on a config: a problem inside standingSessions refuses
	// start (exit 2) before anything runs, as one outside it does.
	r = e.must(2, "start")
	if !strings.Contains(r.stderr, "standingSessions.sessions[2].name") || !strings.Contains(r.stderr, "nothing was started") {
		t.Fatalf("start with a malformed block: %s", r)
	}
	r = e.must(1, "status")
	if !strings.Contains(r.stdout, "misconfigured") {
		t.Fatalf("status: %s", r)
	}
	r = e.must(0, "stop")
	if !regexpMatch(`(?m)^one +stopped`, r.stdout) || e.alive("loop-standing-one") {
		t.Fatalf("stop with a malformed block: %s", r)
	}
}

// freePortOf keeps the env's current service port.
func freePortOf(t *testing.T, e *env) int {
	data, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var port int
	if i := strings.Index(string(data), "port: "); i >= 0 {
		fmt.Sscan(string(data)[i+len("port: "):], &port)
	}
	return port
}

func TestLifecycle_StandingVerbsGoThroughTheService(t *testing.T) {
	e, port := serviceEnv(t, threeSessions)
	e.must(0, "start")
	e.settle() // compare rows once the agents' hooks have stopped changing them
	viaService := e.must(0, "standing", "list", "--json").stdout
	e.must(0, "standing", "create", "svc", "--cwd", e.dir, "--no-start")
	if ev := e.events("--type", "standing.created"); len(ev) != 1 || ev[0].Source != "service" {
		t.Fatalf("create did not go through the service: %+v", ev)
	}

	// REST codes, from the running binary.
	base := fmt.Sprintf("http://127.0.0.1:%d/api/v1", port)
	codes := []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/standing-sessions/one?name=nobody", "", 404},
		{"POST", "/standing-sessions/control", `{"name":"one","verb":"detonate"}`, 400},
		{"POST", "/standing-sessions/say", `{"name":"one","text":"  "}`, 400},
		{"POST", "/standing-sessions/create", `{"name":"one"}`, 400},
		{"POST", "/standing-sessions/delete", `{"name":"one"}`, 400},
		{"POST", "/standing-sessions/delete", `{"name":"nobody"}`, 404},
		{"POST", "/standing-sessions/control", `{"name":"one"}`, 422},
	}
	for _, c := range codes {
		req, _ := nethttp.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.token())
		resp, err := nethttp.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var detail struct {
			Detail *string `json:"detail"`
		}
		if resp.StatusCode != c.want || json.Unmarshal(body, &detail) != nil || detail.Detail == nil {
			t.Errorf("%s %s: %d %s, want %d with a detail", c.method, c.path, resp.StatusCode, body, c.want)
		}
	}

	// The service goes away; the same verbs run in-process and agree.
	_ = syscall.Kill(e.servicePID(), syscall.SIGTERM)
	waitFor(t, "the service to exit", func() bool { return e.servicePID() == 0 })
	inProcess := e.must(0, "standing", "list", "--json").stdout
	var a, b []loop.StandingRow
	_ = json.Unmarshal([]byte(viaService), &a)
	_ = json.Unmarshal([]byte(inProcess), &b)
	b = slices.DeleteFunc(b, func(r loop.StandingRow) bool { return r.Name == "svc" })
	// Only `supervised` differs: the answering service supervises, a CLI
	// process does not.
	for i := range a {
		if !a[i].Supervised || i < len(b) && b[i].Supervised {
			t.Fatalf("supervised: service %+v, in-process %+v", a[i], b)
		}
		a[i].Supervised = false
	}
	if !slices.Equal(a, b) {
		t.Fatalf("rows differ:\nservice:    %+v\nin-process: %+v", a, b)
	}
	e.must(0, "standing", "create", "local", "--cwd", e.dir, "--no-start")
	if ev := e.events("--standing", "local"); len(ev) != 1 || ev[0].Source != "cli" {
		t.Fatalf("in-process create: %+v", ev)
	}
}

func TestStatus_UnderCronEnvironment(t *testing.T) {
	e, _ := serviceEnv(t, threeSessions)
	e.must(0, "start")
	for _, format := range []string{"text", "json"} {
		cmd := exec.Command(binary, "-c", e.cfg, "status", "--format", format)
		cmd.Dir = e.dir
		cmd.Env = []string{"HOME=" + e.home, "PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"}
		out, err := cmd.Output() // no TTY: stdin is /dev/null, stdout a pipe
		if err != nil {
			t.Fatalf("status --format %s under cron: %v\n%s", format, err, out)
		}
		if strings.Contains(string(out), "\x1b[") {
			t.Fatalf("colour in cron output: %q", out)
		}
		if format == "json" {
			var raw struct {
				StandingSessions []map[string]any `json:"standingSessions"`
			}
			if err := json.Unmarshal(out, &raw); err != nil {
				t.Fatal(err)
			}
			keys := []string{"name", "declared", "description", "autoStart", "harness", "cwd", "tmuxTarget", "ref",
				"status", "running", "harnessSessionId", "slackChannel", "slackThread", "startedAt", "lastMessageAt"}
			for _, row := range raw.StandingSessions {
				for _, k := range keys {
					if _, ok := row[k]; !ok {
						t.Errorf("row %v lacks %q", row["name"], k)
					}
				}
			}
		}
	}
}

func regexpMatch(re, s string) bool { return mustCompile(re).MatchString(s) }

func TestLifecycle_StopEndsAServiceThatDoesNotAnswer(t *testing.T) {
	e, _ := serviceEnv(t, threeSessions)
	e.must(0, "start")
	waitFor(t, "two agents", func() bool { return len(e.starts()) == 2 })
	pid := e.servicePID()
	// The service holds the store but answers nothing.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	r := e.must(0, "stop")
	if !strings.Contains(r.stdout, fmt.Sprintf("pid %d did not answer; ended it", pid)) ||
		!regexpMatch(`(?m)^one +stopped`, r.stdout) || !regexpMatch(`(?m)^two +stopped`, r.stdout) {
		t.Fatalf("stop: %s", r)
	}
	if e.servicePID() != 0 || e.alive("loop-standing-one") || e.alive("loop-standing-two") {
		t.Fatal("stop left the service or an agent running")
	}
}
