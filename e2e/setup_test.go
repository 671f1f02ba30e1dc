package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// theLoop is the-loop's binary, built once per test binary (with -race when
// the tests run with it).
var theLoop struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if theLoop.dir != "" {
		_ = os.RemoveAll(theLoop.dir)
	}
	os.Exit(code)
}

// binary builds the-loop on first use.
func binary(t testing.TB) string {
	t.Helper()
	theLoop.once.Do(func() {
		dir, err := os.MkdirTemp("", "the-loop-e2e-bin-")
		if err != nil {
			theLoop.err = err
			return
		}
		theLoop.dir = dir
		out := filepath.Join(dir, "the-loop")
		args := []string{"build", "-buildvcs=false", "-o", out}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "-tags", "loop_omit_service", "github.com/the-loop-dev/the-loop/cmd/the-loop")...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			theLoop.err = fmt.Errorf("go build the-loop: %w\n%s", err, msg)
			return
		}
		// the service's program and the hook program beside it, as
		// installed (decisions D37)
		daemon := append([]string{"build", "-buildvcs=false", "-o", filepath.Join(dir, "the-loopd")}, args[4:]...)
		cmd = exec.Command("go", append(daemon, "github.com/the-loop-dev/the-loop/cmd/the-loop")...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			theLoop.err = fmt.Errorf("go build the-loopd: %w\n%s", err, msg)
			return
		}
		cmd = exec.Command("go", "build", "-buildvcs=false", "-o", filepath.Join(dir, "the-loop-hook"), "github.com/the-loop-dev/the-loop/cmd/the-loop-hook")
		if msg, err := cmd.CombinedOutput(); err != nil {
			theLoop.err = fmt.Errorf("go build the-loop-hook: %w\n%s", err, msg)
			return
		}
		theLoop.path = out
	})
	if theLoop.err != nil {
		t.Fatal(theLoop.err)
	}
	return theLoop.path
}

// world is one end-to-end test's setting: the-loop's work dir (config and
// state root), the standing session's cwd, a private tmux server, the fake
// Messages API and the real Claude Code on PATH, offline, in a HOME of the
// test's own.
type world struct {
	t      testing.TB
	dir    string // the-loop's work dir: config, state root
	cwd    string // the standing session's cwd
	socket string
	cfg    string
	api    *fakeapi.Server
	claude *testkit.OfflineClaude
	env    []string
	spy    string // where the operator's own hook (spyHook) appends every payload
}

// session is the standing session the world's config declares.
const session = "supervisor"

// target is its tmux session.
var target = loop.TmuxTargetFor(session)

// bootBrief is the operator's brief in the session's boot prompt.
const bootBrief = "Say hello, then wait for messages."

// worldConfig keeps the default harnessKillGraceSeconds on purpose: a stop
// then ends Claude Code as an operator's stop would (docs/claude-code.md:
// it outlives that grace after SIGTERM, so it is killed).
const worldConfig = `
state: {root: .the-loop}
service: {port: %PORT%, socket: %SERVICE_SOCKET%}
routing:
  tmux: {socketName: %SOCKET%, resumeProbeSeconds: 1}
standingSessions:
  enabled: true
  sessions:
    - name: supervisor
      harness: claude
      cwd: %CWD%
      prompt: ` + bootBrief + `
      harnessArgs: [--settings, %SPY_SETTINGS%]
`

// spyHook is the command of the operator's own hooks (a --settings file in
// harnessArgs, kept beside the-loop's): it appends each payload, one line,
// to FILE, so a test reads what the real Claude Code sent.
const spyHook = `p=$(cat); printf '%s\n' "$p" >> FILE`

// setup builds the world: it skips (or, with THE_LOOP_E2E=1, fails) when
// Claude Code is not installed. The-loop is stopped and the tmux server
// killed when the test ends.
func setup(t *testing.T) *world {
	t.Helper()
	api := fakeapi.Start(t)
	w := &world{t: t, dir: t.TempDir(), cwd: t.TempDir(), api: api}
	w.claude = testkit.Claude(t, api.URL, w.cwd)
	binary(t)
	w.socket = testkit.Tmux(t)
	w.cfg = filepath.Join(w.dir, "cli-config.yaml")
	w.spy = filepath.Join(w.dir, "spy-hooks.jsonl")
	spyHooks := map[string]any{}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop", "Notification", "PostToolUse", "SessionEnd"} {
		spyHooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
			"command": strings.ReplaceAll(spyHook, "FILE", "'"+w.spy+"'")}}}}
	}
	spySettings := filepath.Join(w.dir, "operator-settings.json")
	data, _ := json.Marshal(map[string]any{"hooks": spyHooks})
	if err := os.WriteFile(spySettings, data, 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := strings.NewReplacer("%SOCKET%", w.socket, "%CWD%", w.cwd, "%PORT%", fmt.Sprint(freePort(t)), "%SERVICE_SOCKET%", filepath.Join(testkit.ShortDir(t), "service.sock"),
		"%SPY_SETTINGS%", spySettings).Replace(worldConfig)
	if err := os.WriteFile(w.cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	w.env = append(filterEnv(os.Environ(), "TMUX", "TMUX_PANE", "HOME", "PATH", "CLAUDE_CONFIG_DIR", "THE_LOOP_CLI_CONFIG",
		"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
		"PATH="+w.claude.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0")
	w.env = append(w.env, w.claude.Env...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen of %s at the end:\n%s", target, w.screen())
			for i, h := range w.hooks() {
				t.Logf("hook %d: %s session=%s source=%q reason=%q prompt_id=%q prompt=%.80q", i, h.Event, h.SessionID, h.Source, h.Reason, h.PromptID, h.Prompt)
			}
			if r := w.run("events", "--format", "jsonl", "--limit", "0"); r.code == 0 {
				t.Logf("events:\n%s", r.stdout)
			}
			for i, r := range w.api.Requests() {
				t.Logf("api request %d: %s %s?%s session=%q user=%.200q", i, r.Method, r.Path, r.Query, r.SessionID, r.LastUserText)
			}
		}
		w.run("stop")
		if pid := w.servicePID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return w
}

// servicePID is the running service's pid, 0 when none.
func (w *world) servicePID() int {
	data, err := os.ReadFile(filepath.Join(w.dir, ".the-loop", "local", "service.pid"))
	if err != nil {
		return 0
	}
	var pid int
	fmt.Sscan(string(data), &pid)
	if pid <= 0 || testkit.ProcessGone(pid) {
		return 0
	}
	return pid
}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run runs the-loop with args in the work dir.
func (w *world) run(args ...string) result {
	w.t.Helper()
	cmd := exec.Command(binary(w.t), append([]string{"-c", w.cfg}, args...)...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			w.t.Fatalf("running the-loop %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// must runs the-loop and fails the test unless it exits 0.
func (w *world) must(args ...string) result {
	w.t.Helper()
	r := w.run(args...)
	if r.code != 0 {
		w.t.Fatalf("the-loop %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// row is the session's row of `standing list --format json`.
func (w *world) row() loop.StandingRow {
	w.t.Helper()
	r := w.must("standing", "list", "--format", "json")
	var rows []loop.StandingRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		w.t.Fatalf("standing list json: %v\n%s", err, r)
	}
	for _, row := range rows {
		if row.Name == session {
			return row
		}
	}
	w.t.Fatalf("standing list has no row %q: %s", session, r)
	return loop.StandingRow{}
}

// waitRow polls the session's row until cond holds of it, and returns it.
func (w *world) waitRow(what string, cond func(loop.StandingRow) bool) loop.StandingRow {
	w.t.Helper()
	var last loop.StandingRow
	eventually(w.t, what, func() bool {
		last = w.row()
		return cond(last)
	})
	return last
}

// events is the-loop's events of the given type, oldest first.
func (w *world) events(typ string) []loop.Event {
	w.t.Helper()
	r := w.must("events", "--format", "jsonl", "--limit", "0", "--type", typ)
	var out []loop.Event
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var ev loop.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			w.t.Fatalf("event line %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// hookPayload is what a test reads of a payload the spy hook kept.
type hookPayload struct {
	Event     string `json:"hook_event_name"`
	SessionID string `json:"session_id"`
	Source    string `json:"source"`
	Reason    string `json:"reason"`
	Prompt    string `json:"prompt"`
	PromptID  string `json:"prompt_id"`
}

// hooks are the payloads the real Claude Code gave the operator's own
// hooks so far, in the order they ran.
func (w *world) hooks() []hookPayload {
	data, _ := os.ReadFile(w.spy)
	var out []hookPayload
	for _, line := range bytes.Split(data, []byte("\n")) {
		var p hookPayload
		if json.Unmarshal(line, &p) == nil && p.Event != "" {
			out = append(out, p)
		}
	}
	return out
}

// hooksOf are the spied payloads of event (and, unless "", session id).
func (w *world) hooksOf(event, id string) []hookPayload {
	var out []hookPayload
	for _, p := range w.hooks() {
		if p.Event == event && (id == "" || p.SessionID == id) {
			out = append(out, p)
		}
	}
	return out
}

// typeIn types text into the agent's pane and presses return, as an
// operator attached to it would.
func (w *world) typeIn(text string) {
	w.t.Helper()
	if _, err := testkit.TmuxRun(w.socket, "send-keys", "-t", "="+target+":", "-l", text); err != nil {
		w.t.Fatal(err)
	}
	if _, err := testkit.TmuxRun(w.socket, "send-keys", "-t", "="+target+":", "Enter"); err != nil {
		w.t.Fatal(err)
	}
}

// screen is the agent pane's visible screen.
func (w *world) screen() string {
	out, _ := testkit.TmuxRun(w.socket, "capture-pane", "-p", "-t", "="+target+":")
	return out
}

// panePID is the pid of the process in the agent's pane (0 when none).
func (w *world) panePID() int {
	out, err := testkit.TmuxRun(w.socket, "list-panes", "-t", "="+target+":", "-F", "#{pane_pid}")
	if err != nil {
		return 0
	}
	var pid int
	fmt.Sscan(out, &pid)
	return pid
}

// argv is the command line of the agent in its pane: the pane first runs
// `the-loop internal-exec FILE`, which execs the harness, so this waits
// (patience) until the pane's process is no longer that launcher.
func (w *world) argv() []string {
	w.t.Helper()
	var argv []string
	eventually(w.t, "the pane's launcher to exec the agent", func() bool {
		argv = w.paneArgv()
		return len(argv) > 0 && argv[0] != "" && !slices.Contains(argv, "internal-exec")
	})
	return argv
}

// paneArgv is the command line of the process in the agent's pane now.
func (w *world) paneArgv() []string {
	pid := w.panePID()
	if pid == 0 {
		return nil
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
}

// turn waits until the fake API has received a message request whose last
// user text contains text, and returns the first such.
func (w *world) turn(what, text string) fakeapi.Request {
	w.t.Helper()
	var got fakeapi.Request
	eventually(w.t, what, func() bool {
		for _, r := range w.api.Turns() {
			if strings.Contains(r.LastUserText, text) {
				got = r
				return true
			}
		}
		return false
	})
	return got
}

// transcriptEntry is the part of a transcript line the tests read.
type transcriptEntry struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	PromptID  string `json:"promptId"`
	Message   struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// transcript reads the conversation id's transcript (nil while missing).
func (w *world) transcript(id string) []transcriptEntry {
	data, err := os.ReadFile(w.claude.TranscriptPath(w.cwd, id))
	if err != nil {
		return nil
	}
	var out []transcriptEntry
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e transcriptEntry
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// userTexts are the transcript's user prompts (string contents).
func userTexts(entries []transcriptEntry) []string {
	var out []string
	for _, e := range entries {
		var s string
		if e.Type == "user" && json.Unmarshal(e.Message.Content, &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// patience is how long a condition on the real CLI may take: a start of
// Claude Code in tmux takes seconds on a loaded machine.
const patience = 90 * time.Second

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, cond, patience, "%s", what)
}

// freePort returns a loopback port nothing listens on right now, for the
// service (its default port would clash between tests).
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
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
