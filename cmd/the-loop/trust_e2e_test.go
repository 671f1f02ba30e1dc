package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// The trust boundary's acceptance: another uid holding the
// service's port gets no credential; a CLI verb in an agent's pane has an
// agent's rights.

// The environment of the test binary re-run as the port's other holder.
const (
	foreignListenEnv = "THE_LOOP_TEST_FOREIGN_LISTEN"
	foreignRootEnv   = "THE_LOOP_TEST_FOREIGN_ROOT"
)

// foreignListener is another user's server on addr that passes itself off
// as the service of stateRoot (health names it): it prints "listening",
// then one line per request it gets — the method, the path and the
// Authorization header — and never exits by itself.
func foreignListener(addr, stateRoot string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	fmt.Println("listening")
	var mu sync.Mutex
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fmt.Printf("%s %s auth=%q\n", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "version": "x", "pid": 1, "stateRoot": stateRoot})
	}))
	return 0
}

// foreign is the running foreign listener: what it printed.
type foreign struct {
	mu    sync.Mutex
	lines []string
}

func (f *foreign) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lines...)
}

// startForeign runs this test binary as uid 65534 (nobody), listening on
// 127.0.0.1:port as the service of stateRoot, until the test ends.
func startForeign(t *testing.T, port int, stateRoot string) *foreign {
	t.Helper()
	dir := testkit.ShortDir(t) // a copy nobody may run: the test binary's own directory is private
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "foreign")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = "/"
	cmd.Env = []string{foreignListenEnv + "=" + fmt.Sprintf("127.0.0.1:%d", port), foreignRootEnv + "=" + stateRoot, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}, Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	f := &foreign{}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		first := true
		for sc.Scan() {
			if first {
				ready <- sc.Text()
				first = false
				continue
			}
			f.mu.Lock()
			f.lines = append(f.lines, sc.Text())
			f.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	if line := testkit.Await(t, ready, "the foreign listener to start"); line != "listening" {
		t.Fatalf("the foreign listener as uid 65534: %s", line)
	}
	return f
}

// TestTrust_AnotherUIDOnThePortGetsNoCredential: the service is SIGKILLed
// and another uid binds its port, answering health as if it were this
// state root's service. No CLI verb and no hook sends it a credential
// (they talk over the socket); `start` brings up a real service on the
// socket and `status` says it is degraded, naming the holder's uid.
func TestTrust_AnotherUIDOnThePortGetsNoCredential(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the port's other holder as uid 65534 (nobody)")
	}
	e, port := serviceEnv(t, threeSessions)
	e.must(0, "start")
	root := filepath.Join(e.dir, ".the-loop")
	pid := e.servicePID()
	if pid == 0 {
		t.Fatal("no service after start")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed service to be gone", func() bool { return e.servicePID() == 0 })
	f := startForeign(t, port, root)

	if rows := e.rows(); len(rows) == 0 {
		t.Fatal("standing list with the service killed: no rows")
	}
	e.run("status")
	e.run("doctor")
	id := e.rows()["one"].HarnessSessionID
	hookRun(t, e, "standing:one", notification(id, "while the port is another user's"))

	r := e.must(0, "start")
	if !strings.Contains(r.stdout, "held by uid 65534") || e.servicePID() == 0 {
		t.Fatalf("start with the port held by uid 65534: %s", r)
	}
	r = e.must(1, "status")
	if !strings.Contains(r.stdout, fmt.Sprintf("degraded: 127.0.0.1:%d held by uid 65534: dashboard and /mcp unavailable", port)) {
		t.Fatalf("status: %s", r)
	}
	if rows := e.rows(); !rows["one"].Running {
		t.Fatalf("standing list over the socket: %+v", rows)
	}
	hookRun(t, e, "standing:one", notification(id, "with the service degraded"))
	waitFor(t, "the hooks heard", func() bool {
		n := 0
		for _, ev := range e.events("--type", "standing.attention") {
			if strings.Contains(fmt.Sprint(ev.Field("message")), "port") || strings.Contains(fmt.Sprint(ev.Field("message")), "degraded") {
				n++
			}
		}
		return n == 2
	})
	for _, req := range f.requests() {
		if !strings.HasSuffix(req, `auth=""`) {
			t.Fatalf("the other uid's listener got a credential: %s (all: %q)", req, f.requests())
		}
	}
	if reqs := f.requests(); len(reqs) != 0 {
		t.Fatalf("the other uid's listener was asked %q; the-loop's own clients talk over the socket", reqs)
	}
}

// TestTrust_ACLIVerbInAnAgentsPaneHasAnAgentsRights: the-loop run in a
// pane of a running standing session (its credential variable removed, so
// only the service's own look at the process tree can tell) lists and
// reads, but a stop exits 1 with "run this from the operator's shell" and
// stops nothing; with the variable (an agent's own environment) the CLI
// refuses before it asks anyone.
func TestTrust_ACLIVerbInAnAgentsPaneHasAnAgentsRights(t *testing.T) {
	e, _ := serviceEnv(t, threeSessions)
	e.must(0, "start")
	waitFor(t, "one to run", func() bool { return e.rows()["one"].Running })
	target := loop.TmuxTargetFor("one")
	run := func(env, args string) (string, int) { t.Helper(); return inAgentPane(t, e, target, env, args) }
	const noCred = "env -u THE_LOOP_AGENT_TOKEN"
	if out, code := run(noCred, "standing list"); code != 0 || !strings.Contains(out, "one") {
		t.Fatalf("standing list in one's pane: exit %d\n%s", code, out)
	}
	out, code := run(noCred, "standing stop two")
	if code != 1 || !strings.Contains(out, "run this from the operator's shell") || !strings.Contains(out, "standing:one") {
		t.Fatalf("standing stop in one's pane: exit %d\n%s", code, out)
	}
	if out, code := run("", "standing stop two"); code != 1 || !strings.Contains(out, "run this from the operator's shell") {
		t.Fatalf("standing stop in one's pane with its credential: exit %d\n%s", code, out)
	}
	if rows := e.rows(); !rows["two"].Running {
		t.Fatalf("two after the refused stops: %+v", rows["two"])
	}
	e.must(0, "standing", "stop", "two") // the operator's shell may
}

// TestTrust_ACLIVerbInAnAgentsPaneHasAnAgentsRightsWithoutTheService: with
// no service the verb runs in this process, which asks tmux itself
// whether its process tree reaches a running session's pane.
func TestTrust_ACLIVerbInAnAgentsPaneHasAnAgentsRightsWithoutTheService(t *testing.T) {
	e := newEnv(t)
	e.config(strings.Replace(oneSession, "state: {root: .the-loop}\n", "state: {root: .the-loop}\nservice: {enabled: false}\n", 1))
	e.must(0, "standing", "start", "supervisor")
	t.Cleanup(func() { e.run("standing", "stop") })
	target := loop.TmuxTargetFor("supervisor")
	const noCred = "env -u THE_LOOP_AGENT_TOKEN"
	if out, code := inAgentPane(t, e, target, noCred, "standing list"); code != 0 || !strings.Contains(out, "supervisor") {
		t.Fatalf("standing list in the pane: exit %d\n%s", code, out)
	}
	out, code := inAgentPane(t, e, target, noCred, "standing stop supervisor")
	if code != 1 || !strings.Contains(out, "run this from the operator's shell") || !strings.Contains(out, "standing:supervisor") {
		t.Fatalf("standing stop in the pane: exit %d\n%s", code, out)
	}
	if !e.rows()["supervisor"].Running {
		t.Fatal("the refused stop stopped the session")
	}
}

// inAgentPane runs `env the-loop -c <config> args` in a new window of the
// tmux session target and returns what it wrote and its exit status.
func inAgentPane(t *testing.T, e *env, target, env, args string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	out, code := filepath.Join(dir, "out"), filepath.Join(dir, "code")
	script := fmt.Sprintf("cd %s && %s %s -c %s %s > %s 2>&1; echo $? > %s", e.dir, env, binary, e.cfg, args, out, code)
	if _, err := e.tmux("new-window", "-d", "-t", "="+target+":", "sh", "-c", script); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the-loop "+args+" in "+target+"'s pane", func() bool {
		data, err := os.ReadFile(code)
		return err == nil && strings.HasSuffix(string(data), "\n")
	})
	data, _ := os.ReadFile(out)
	c, _ := os.ReadFile(code)
	var n int
	fmt.Sscan(string(c), &n)
	return string(data), n
}
