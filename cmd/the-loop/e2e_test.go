package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// binary is the-loop built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	if addr := os.Getenv(foreignListenEnv); addr != "" { // a helper run as another uid (trust_e2e_test.go)
		os.Exit(foreignListener(addr, os.Getenv(foreignRootEnv)))
	}
	dir, err := os.MkdirTemp("", "the-loop-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "the-loop")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	// The CLI without the service, and beside it the service's program and
	// the hook program, as installed (decisions D37).
	cli := append(append([]string{}, args...), "-tags", "loop_omit_service", ".")
	daemon := append([]string{"build", "-o", filepath.Join(dir, "the-loopd")}, args[3:]...)
	builds := [][]string{cli, append(daemon, "."), {"build", "-o", filepath.Join(dir, "the-loop-hook"), "../the-loop-hook"},
		{"build", "-o", filepath.Join(dir, "peakrss"), "../../internal/testkit/peakrss"}} // what the benchmarks read a run's peak RSS through
	for _, b := range builds {
		build := exec.Command("go", b...)
		if !raceEnabled { // the binaries `just build` makes (and the benchmarks time)
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", b[len(b)-1]+":", err)
			os.Exit(1)
		}
	}
	code := testkit.Main(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// daemonBinary is the service's program the tests built beside binary
// (the-loopd, decisions D37): what `the-loop start` runs.
func daemonBinary() string { return filepath.Join(filepath.Dir(binary), "the-loopd") }

// env is one end-to-end test's world: a work dir holding the config and the
// state root, a private tmux server, and the fake agent on PATH as claude.
type env struct {
	t      testing.TB
	dir    string
	home   string
	socket string
	agent  *testkit.Agent
	path   string // PATH for the-loop
	cfg    string
	// extraEnv is added to the-loop's environment (KEY=value).
	extraEnv []string
	port     int // service.port, where a test set it
}

func newEnv(t testing.TB, opts ...testkit.AgentOption) *env {
	t.Helper()
	e := &env{t: t, dir: testkit.ShortDir(t), home: t.TempDir(), socket: testkit.Tmux(t), agent: testkit.FakeAgent(t, opts...)}
	e.path = e.agent.BinDir() + string(os.PathListSeparator) + os.Getenv("PATH")
	e.cfg = filepath.Join(e.dir, "cli-config.yaml")
	return e
}

// config writes the CLI config; %SOCKET% and %DIR% are filled in, a
// config without a service block gets one on a free port (ownPort), and a
// config whose service would listen on the default port fails the test
// (refuseDefaultPort).
func (e *env) config(yaml string) {
	e.t.Helper()
	yaml = strings.ReplaceAll(yaml, "%SOCKET%", e.socket)
	yaml = strings.ReplaceAll(yaml, "%DIR%", e.dir)
	if err := os.WriteFile(e.cfg, []byte(ownPort(e.t, yaml)), 0o644); err != nil {
		e.t.Fatal(err)
	}
	refuseDefaultPort(e.t, e.cfg)
}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run runs the-loop in the work dir with the given stdin.
func (e *env) runIn(stdin string, args ...string) result {
	e.t.Helper()
	cmd := e.command(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
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

func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.runIn("", args...)
}

func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, append([]string{"-c", e.cfg}, args...)...)
	cmd.Dir = e.dir
	cmd.Env = append(filterEnv(os.Environ(), "TMUX", "TMUX_PANE", "HOME", "PATH", "CLAUDE_CONFIG_DIR", "THE_LOOP_CLI_CONFIG"),
		"HOME="+e.home, "PATH="+e.path, "GORACE=atexit_sleep_ms=0")
	cmd.Env = append(cmd.Env, e.extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func filterEnv(env []string, drop ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, d := range drop {
			if strings.HasPrefix(kv, d+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// must runs the-loop and fails the test unless it exits with code.
func (e *env) must(code int, args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != code {
		e.t.Fatalf("the-loop %s: want exit %d, got %s", strings.Join(args, " "), code, r)
	}
	return r
}

// rows is `standing list --json`.
func (e *env) rows() map[string]loop.StandingRow {
	e.t.Helper()
	r := e.must(0, "standing", "list", "--json")
	var rows []loop.StandingRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		e.t.Fatalf("list json: %v\n%s", err, r)
	}
	out := map[string]loop.StandingRow{}
	for _, row := range rows {
		out[row.Name] = row
	}
	return out
}

// events is `events --format jsonl --limit 0` with extra filters.
func (e *env) events(filters ...string) []loop.Event {
	e.t.Helper()
	r := e.run(append([]string{"events", "--format", "jsonl", "--limit", "0"}, filters...)...)
	if r.code != 0 {
		e.t.Fatalf("events: %s", r)
	}
	var out []loop.Event
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var ev loop.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			e.t.Fatalf("event line %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// heard reports whether an event is one the agent's hooks made
// rather than a lifecycle transition.
func heard(name string) bool {
	_, what, _ := strings.Cut(name, ".")
	switch what {
	case "turn_started", "turn_ended", "attention", "exited", "conversation_changed":
		return true
	}
	return false
}

// transitions drops the events the agent's hooks made.
func transitions(evs []loop.Event) []loop.Event {
	var out []loop.Event
	for _, ev := range evs {
		if !heard(ev.Event) {
			out = append(out, ev)
		}
	}
	return out
}

func eventNames(evs []loop.Event) []string {
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Event)
	}
	return names
}

// tmux runs a command on the test's private server.
func (e *env) tmux(args ...string) (string, error) { return testkit.TmuxRun(e.socket, args...) }

// alive reports whether tmux session target exists with a live pane.
func (e *env) alive(target string) bool {
	out, err := e.tmux("list-panes", "-t", "="+target+":", "-F", "#{pane_dead}")
	return err == nil && strings.Contains(out, "0")
}

// starts are the fake agent's start entries.
func (e *env) starts() []testkit.Entry { return e.agent.Entries("start") }

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, cond, 15*time.Second, "%s", what)
}

const oneSession = `
state: {root: .the-loop}
routing:
  tmux: {socketName: %SOCKET%, harnessKillGraceSeconds: 3, resumeProbeSeconds: 1}
standingSessions:
  enabled: true
  sessions:
    - name: supervisor
      cwd: %DIR%
      prompt: Watch the work items.
`

func mustCompile(re string) *regexp.Regexp { return regexp.MustCompile(re) }
