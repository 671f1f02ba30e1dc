package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakePackage is the import path of the fake agent program.
const fakePackage = "github.com/the-loop-dev/the-loop/internal/fakeagent"

// fakeBuild is the one build of the fake per test binary.
var fakeBuild struct {
	once sync.Once
	path string
	err  error
}

// fakeBinary builds internal/fakeagent once per test binary, into
// $TMPDIR/the-loop-fakeagent-<pid>/, which Main removes when the tests end
// (stale dirs of test binaries that ended without it are removed on the
// way).
func fakeBinary(t testing.TB) string {
	t.Helper()
	needMain(t)
	fakeBuild.once.Do(func() {
		removeStaleBuilds()
		dir := buildDir()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			fakeBuild.err = err
			return
		}
		goBin, err := exec.LookPath("go") // go test puts its own GOROOT/bin first on PATH
		if err != nil {
			fakeBuild.err = fmt.Errorf("building the fake needs the go command on PATH: %w", err)
			return
		}
		out := filepath.Join(dir, "fakeagent")
		cmd := exec.Command(goBin, "build", "-buildvcs=false", "-o", out, fakePackage)
		if _, file, _, ok := runtime.Caller(0); ok {
			if root := filepath.Join(filepath.Dir(file), "..", ".."); isDir(root) {
				cmd.Dir = root
			}
		}
		if msg, err := cmd.CombinedOutput(); err != nil {
			fakeBuild.err = fmt.Errorf("go build %s: %w\n%s", fakePackage, err, msg)
			return
		}
		fakeBuild.path = out
	})
	if fakeBuild.err != nil {
		t.Fatalf("could not build the fake agent: %v", fakeBuild.err)
	}
	return fakeBuild.path
}

// removeStaleBuilds deletes build dirs of test binaries that have ended.
func removeStaleBuilds() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "the-loop-fakeagent-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "the-loop-fakeagent-"))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// AgentOption configures a fake agent's environment.
type AgentOption func(env map[string]string)

// Delay sets the start-up delay (FAKE_AGENT_DELAY_MS; default 300ms),
// during which typed input is discarded.
func Delay(d time.Duration) AgentOption {
	return Env("FAKE_AGENT_DELAY_MS", strconv.FormatInt(d.Milliseconds(), 10))
}

// IgnoreTerm makes the fake log SIGTERM and keep running.
func IgnoreTerm() AgentOption { return Env("FAKE_AGENT_IGNORE_TERM", "1") }

// Children makes the fake start n idle children, each in its own process group.
func Children(n int) AgentOption { return Env("FAKE_AGENT_CHILDREN", strconv.Itoa(n)) }

// ExitAfter makes the fake exit by itself after d with status code.
func ExitAfter(d time.Duration, code int) AgentOption {
	return func(env map[string]string) {
		env["FAKE_AGENT_EXIT_AFTER_MS"] = strconv.FormatInt(d.Milliseconds(), 10)
		env["FAKE_AGENT_EXIT_CODE"] = strconv.Itoa(code)
	}
}

// TurnTime sets how long the fake thinks before answering a turn
// (FAKE_AGENT_TURN_MS; default 50ms).
func TurnTime(d time.Duration) AgentOption {
	return Env("FAKE_AGENT_TURN_MS", strconv.FormatInt(d.Milliseconds(), 10))
}

// HoldTurns makes the fake hold its turns while the file path exists
// (FAKE_AGENT_HOLD): a turn whose think time is over ends only once the
// file is gone, or the number written in it (how many held turns may end
// in all) allows one more, so a test keeps an agent busy for as long as it
// needs, however slow the machine.
func HoldTurns(path string) AgentOption { return Env("FAKE_AGENT_HOLD", path) }

// Answer sets the fake's answer (FAKE_AGENT_ANSWER): each "{prompt}" is
// replaced by the prompt; a blank line splits it into several transcript
// lines of one assistant message. Default: "fake answer to: <prompt>".
func Answer(format string) AgentOption { return Env("FAKE_AGENT_ANSWER", format) }

// SwallowSubmits makes the fake drop the first n carriage returns
// (FAKE_AGENT_SWALLOW_SUBMITS): the text stays pending in its input line
// and a "swallowed" entry is logged; the next return submits it.
func SwallowSubmits(n int) AgentOption { return Env("FAKE_AGENT_SWALLOW_SUBMITS", strconv.Itoa(n)) }

// Env sets one more environment variable in the wrapper script.
func Env(key, value string) AgentOption {
	return func(env map[string]string) { env[key] = value }
}

// Agent is a fake agent prepared for one test: a log directory and a bin
// directory whose `claude`, `cursor-agent`, `codex` and `gemini` wrapper
// scripts set the fake's environment and exec it (the last two with the
// fake's Codex and Gemini CLI contracts).
type Agent struct {
	dir    string
	binDir string
}

// FakeAgent builds the fake (once per test binary) and prepares a fresh
// agent directory and wrapper scripts for this test. When the test ends,
// fake processes it started that still run are killed.
func FakeAgent(t testing.TB, opts ...AgentOption) *Agent {
	t.Helper()
	bin := fakeBinary(t)
	base, err := os.MkdirTemp("", "the-loop-agent-")
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{dir: filepath.Join(base, "agent"), binDir: filepath.Join(base, "bin")}
	t.Cleanup(func() {
		a.killAll()
		_ = os.RemoveAll(base)
	})
	env := map[string]string{"FAKE_AGENT_DIR": a.dir, "FAKE_AGENT_CONFIG_DIR": a.ConfigDir()}
	for _, o := range opts {
		o(env)
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var script strings.Builder
	script.WriteString("#!/bin/sh\n")
	for _, k := range keys {
		fmt.Fprintf(&script, "%s=%s; export %s\n", k, shellQuote(env[k]), k)
	}
	exec := fmt.Sprintf("exec %s \"$@\"\n", shellQuote(bin))
	for _, d := range []string{a.dir, filepath.Join(a.dir, "transcripts"), a.binDir, a.CodexHome(), a.GeminiHome()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The codex and gemini wrappers select the fake's Codex and Gemini CLI
	// contracts, with a home of the test's own unless the spawn sets one.
	wrappers := map[string]string{
		"claude":       script.String() + exec,
		"cursor-agent": script.String() + exec,
		"codex": script.String() + "FAKE_AGENT_CONTRACT=codex; export FAKE_AGENT_CONTRACT\n" +
			"CODEX_HOME=${CODEX_HOME:-" + shellQuote(a.CodexHome()) + "}; export CODEX_HOME\n" + exec,
		"gemini": script.String() + "FAKE_AGENT_CONTRACT=gemini; export FAKE_AGENT_CONTRACT\n" +
			"GEMINI_CLI_HOME=${GEMINI_CLI_HOME:-" + shellQuote(a.GeminiHome()) + "}; export GEMINI_CLI_HOME\n" + exec,
	}
	for name, body := range wrappers {
		if err := os.WriteFile(filepath.Join(a.binDir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// CodexHome is the CODEX_HOME the `codex` wrapper gives the fake when the
// spawn's environment has none: its rollout files live under sessions/.
func (a *Agent) CodexHome() string { return filepath.Join(filepath.Dir(a.dir), "codex-home") }

// GeminiHome is the GEMINI_CLI_HOME the `gemini` wrapper gives the fake
// when the spawn's environment has none (its files live under .gemini/).
func (a *Agent) GeminiHome() string { return filepath.Join(filepath.Dir(a.dir), "gemini-home") }

// CodexPath is the `codex` wrapper script (the fake's Codex contract).
func (a *Agent) CodexPath() string { return filepath.Join(a.binDir, "codex") }

// GeminiPath is the `gemini` wrapper script (the fake's Gemini contract).
func (a *Agent) GeminiPath() string { return filepath.Join(a.binDir, "gemini") }

// Launcher is a runner.Options.Launcher for tests: the fake agent's own
// `internal-exec FILE`, which is runner.ExecFromFile as in the-loop.
func Launcher(t testing.TB) []string { return []string{fakeBinary(t), "internal-exec"} }

// Dir is FAKE_AGENT_DIR: log.jsonl and transcripts/ live here.
func (a *Agent) Dir() string { return a.dir }

// ConfigDir is where the fake writes its Claude-shaped transcripts
// (<ConfigDir>/projects/<cwd>/<id>.jsonl) when the spawn's environment has
// no CLAUDE_CONFIG_DIR (FAKE_AGENT_CONFIG_DIR, instead of $HOME/.claude). A
// test that has the-loop read the transcript sets CLAUDE_CONFIG_DIR, which
// the fake honours first.
func (a *Agent) ConfigDir() string { return filepath.Join(filepath.Dir(a.dir), "claude-config") }

// BinDir holds the wrapper scripts (prepend it to PATH).
func (a *Agent) BinDir() string { return a.binDir }

// Path is the `claude` wrapper script, usable as the resolved harness binary.
func (a *Agent) Path() string { return filepath.Join(a.binDir, "claude") }

// Entry is one line of the fake's log.jsonl.
type Entry struct {
	// Kind: start, resume_failed, settings_error, message, swallowed,
	// hook (one per command hook run; none without --settings), queued,
	// dialog_answered, clear, transcript_error, sigterm, sighup, exit, eof.
	Kind      string            `json:"kind"`
	Time      string            `json:"time"`
	Pid       int               `json:"pid"`
	Argv      []string          `json:"argv"` // the arguments after the program name
	SessionID string            `json:"sessionId"`
	Resume    bool              `json:"resume"`
	Prompt    string            `json:"prompt"`
	Cwd       string            `json:"cwd"`
	Env       map[string]string `json:"env"` // TERM, TMUX_PANE, CLAUDE_CONFIG_DIR, FAKE_AGENT_*, THE_LOOP_*
	Children  []int             `json:"children"`
	Text      string            `json:"text"`
	Code      int               `json:"code"`
	Ignored   bool              `json:"ignored"`
	Error     string            `json:"error"`
	Event     string            `json:"event"`    // hook: the event name
	Command   string            `json:"command"`  // hook: the command run, "" when none was declared
	PromptID  string            `json:"promptId"` // queued, dialog_answered: the running turn's
	Payload   json.RawMessage   `json:"payload"`  // hook: the payload, as sent on stdin
	Micros    int64             `json:"micros"`   // hook: how long the command ran, the agent waiting
}

// Log parses log.jsonl (nil while it does not exist); a torn last line is
// skipped.
func (a *Agent) Log() []Entry {
	data, err := os.ReadFile(filepath.Join(a.dir, "log.jsonl"))
	if err != nil {
		return nil
	}
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// Entries returns the log entries of one kind.
func (a *Agent) Entries(kind string) []Entry {
	var out []Entry
	for _, e := range a.Log() {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// Messages returns the text of every message the fake received.
func (a *Agent) Messages() []string {
	var out []string
	for _, e := range a.Entries("message") {
		out = append(out, e.Text)
	}
	return out
}

// WaitFor polls the log until an entry satisfies pred and returns it,
// failing the test after timeout.
func (a *Agent) WaitFor(t testing.TB, pred func(Entry) bool, timeout time.Duration) Entry {
	t.Helper()
	var found Entry
	Eventually(t, func() bool {
		for _, e := range a.Log() {
			if pred(e) {
				found = e
				return true
			}
		}
		return false
	}, timeout, "no fake agent log entry matched; log: %+v", a.Log())
	return found
}

// WaitForKind waits for the first entry of kind.
func (a *Agent) WaitForKind(t testing.TB, kind string, timeout time.Duration) Entry {
	t.Helper()
	return a.WaitFor(t, func(e Entry) bool { return e.Kind == kind }, timeout)
}

// TranscriptPath is transcripts/<id>.jsonl.
func (a *Agent) TranscriptPath(id string) string {
	return filepath.Join(a.dir, "transcripts", id+".jsonl")
}

// WriteTranscript creates (or extends) conversation id's transcript, so a
// `--resume id` finds it.
func (a *Agent) WriteTranscript(id string, messages ...string) error {
	f, err := os.OpenFile(a.TranscriptPath(id), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	for _, m := range messages {
		line, _ := json.Marshal(map[string]string{"type": "user", "sessionId": id, "text": m})
		if _, err := f.Write(append(line, '\n')); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// Transcript returns the messages in conversation id's transcript; ok is
// false when it does not exist.
func (a *Agent) Transcript(id string) (messages []string, ok bool) {
	data, err := os.ReadFile(a.TranscriptPath(id))
	if err != nil {
		return nil, false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var l struct {
			Text string `json:"text"`
		}
		if line != "" && json.Unmarshal([]byte(line), &l) == nil {
			messages = append(messages, l.Text)
		}
	}
	return messages, true
}

// Pids returns every process the fake logged starting: agents and children.
func (a *Agent) Pids() []int {
	var out []int
	for _, e := range a.Entries("start") {
		out = append(append(out, e.Pid), e.Children...)
	}
	return out
}

// killAll SIGKILLs the fake's processes that still run.
func (a *Agent) killAll() {
	for _, pid := range a.Pids() {
		if pid <= 0 {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && bytes.Contains(cmdline, []byte("fakeagent")) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// ProcessGone reports whether pid has exited (a zombie counts as gone).
func ProcessGone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	f := bytes.Fields(data[i+1:])
	return len(f) > 0 && (f[0][0] == 'Z' || f[0][0] == 'X')
}

// shellQuote single-quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
