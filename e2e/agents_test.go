package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// The Codex and Gemini end-to-end tests drive the real CLIs (pinned in
// harness.CodexVersion and harness.GeminiVersion, installed by .ci/run into
// the cache) offline against the fake APIs, through the adapters' argv,
// Prepare and Ready and the real tmux runner: fresh start, a say, stop,
// resume by the conversation id. They record one real session file and
// the hook payloads into harness/testdata/<cli>/ when THE_LOOP_RECORD=1,
// and otherwise check that what the real CLI wrote today has the shape of
// those recordings (which the unit tests of the readers and of the fake
// agent read).

// agentBinary finds the real CLI: $envVar, else
// ${XDG_CACHE_HOME:-~/.cache}/the-loop/<dir>/<version>/bin/<bin>. Missing,
// it skips the test — or fails it with THE_LOOP_E2E=1.
func agentBinary(t *testing.T, envVar, dir, version, bin, pkg string) string {
	t.Helper()
	path := os.Getenv(envVar)
	if path == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatal(err)
			}
			cache = filepath.Join(home, ".cache")
		}
		path = filepath.Join(cache, "the-loop", dir, version, "bin", bin)
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		remedy := fmt.Sprintf("install it with `npm install -g --prefix \"${XDG_CACHE_HOME:-$HOME/.cache}/the-loop/%s/%s\" %s@%s` or set %s",
			dir, version, pkg, version, envVar)
		if os.Getenv("THE_LOOP_E2E") == "1" {
			t.Fatalf("%s %s is needed (THE_LOOP_E2E=1): '%s' is not an executable file; %s", pkg, version, path, remedy)
		}
		t.Skipf("%s %s is not installed ('%s' is not an executable file); %s", pkg, version, path, remedy)
	}
	return path
}

// agentWorld is one real agent CLI in a tmux server and a HOME of the
// test's own.
type agentWorld struct {
	t      *testing.T
	home   string // the CLI's HOME
	cwd    string // the session's cwd
	hooks  string // where the hook recorder writes payloads
	api    *fakeapi.Server
	socket string
	tmux   *runner.Tmux
	env    []string // the pane's whole environment (no secrets: the keys are fakes)
	bin    string
}

const agentTarget = "loop-standing-agent"

func newAgentWorld(t *testing.T, api *fakeapi.Server, bin string) *agentWorld {
	t.Helper()
	w := &agentWorld{t: t, home: t.TempDir(), cwd: t.TempDir(), hooks: t.TempDir(), api: api, bin: bin}
	w.socket = testkit.Tmux(t)
	w.tmux = runner.New(runner.Options{Socket: w.socket, ConfigFile: testkit.TmuxConfig, LockDir: filepath.Join(t.TempDir(), "locks")})
	// TERM as tmux gives a pane (env -i would drop it): without it the
	// Gemini CLI loses submit keys after a paste.
	w.env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=screen"}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen at the end:\n%s", w.screen())
			for i, r := range api.Requests() {
				t.Logf("api request %d: %s %s?%s last=%.120q", i, r.Method, r.Path, r.Query, r.LastUserText)
			}
		}
	})
	return w
}

// hookRecorder writes a hook command that saves its stdin (the payload)
// and its parent pid, and answers {} (an empty, valid hook output).
func (w *agentWorld) hookRecorder() string {
	w.t.Helper()
	path := filepath.Join(w.hooks, "record.sh")
	// A notify program gets its payload as its last argument, a hook on
	// stdin.
	script := "#!/bin/sh\nf=\"" + w.hooks + "/$1-$(date +%s%N)\"\necho \"$PPID\" > \"$f.ppid\"\n" +
		"if [ -n \"$2\" ]; then printf '%s' \"$2\" > \"$f.json\"; else cat > \"$f.json\"; fi\necho '{}'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		w.t.Fatal(err)
	}
	return path
}

// payloads returns the recorded payloads of event, oldest first.
func (w *agentWorld) payloads(event string) []map[string]any {
	files, _ := filepath.Glob(filepath.Join(w.hooks, event+"-*.json"))
	sort.Strings(files)
	var out []map[string]any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var m map[string]any
		if json.Unmarshal(data, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// spawn starts bin with argv in the agent's tmux session.
func (w *agentWorld) spawn(argv []string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// `env -i`: the agent gets exactly w.env (the runner's own way to set
	// a whole environment needs the-loop's binary as its launcher); env
	// execs the CLI, so the pane's pid stays the CLI's.
	full := append(append(append([]string{"env", "-i"}, w.env...), w.bin), argv...)
	if err := w.tmux.SpawnIn(ctx, agentTarget, loop.SpawnSpec{Argv: full, Cwd: w.cwd}); err != nil {
		w.t.Fatalf("spawn %q: %v", argv, err)
	}
}

// stop ends the agent as a stop does (SIGTERM, then SIGKILL) and kills
// its tmux session.
func (w *agentWorld) stop() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = w.tmux.TerminateHarnessIn(ctx, agentTarget, "agent", 3*time.Second)
	_ = w.tmux.KillTarget(ctx, agentTarget)
	eventually(w.t, "the agent's tmux session to be gone", func() bool {
		return w.tmux.State(ctx, agentTarget) == loop.PaneAbsent
	})
}

// say pastes text into the agent and submits it, as `standing say` does.
func (w *agentWorld) say(text string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.tmux.DeliverTo(ctx, agentTarget, text, 0); err != nil {
		w.t.Fatalf("say %q: %v", text, err)
	}
}

// waitReady waits until ready says the pane takes input.
func (w *agentWorld) waitReady(what string, ready func(loop.PaneSnapshot) bool) loop.PaneSnapshot {
	w.t.Helper()
	var snap loop.PaneSnapshot
	eventually(w.t, what, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := w.tmux.Snapshot(ctx, agentTarget)
		snap = s
		return err == nil && ready(s)
	})
	return snap
}

func (w *agentWorld) screen() string {
	out, _ := testkit.TmuxRun(w.socket, "capture-pane", "-p", "-t", "="+agentTarget+":")
	return out
}

func (w *agentWorld) panePID() int {
	out, err := testkit.TmuxRun(w.socket, "list-panes", "-t", "="+agentTarget+":", "-F", "#{pane_pid}")
	if err != nil {
		return 0
	}
	var pid int
	fmt.Sscan(out, &pid)
	return pid
}

// turn waits for a turn request whose last user text contains text.
func (w *agentWorld) turn(what, text string) fakeapi.Request {
	w.t.Helper()
	var got fakeapi.Request
	eventually(w.t, what, func() bool {
		for _, r := range w.api.AgentTurns() {
			if strings.Contains(r.LastUserText, text) {
				got = r
				return true
			}
		}
		return false
	})
	return got
}

// submitWait is how long a say waits for its turn before one more
// submit key (the default of routing.tmux.submitSeconds).
const submitWait = 10 * time.Second

// turnWithin reports whether a turn whose last user text contains text
// arrives within d.
func (w *agentWorld) turnWithin(text string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, r := range w.api.AgentTurns() {
			if strings.Contains(r.LastUserText, text) {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// recording is THE_LOOP_RECORD=1: the test rewrites harness/testdata.
func recording() bool { return os.Getenv("THE_LOOP_RECORD") == "1" }

// testdataDir is harness/testdata/<cli>.
func testdataDir(cli string) string {
	return filepath.Join("..", "harness", "testdata", cli)
}

// longString is a string value the scrub shortens.
const longString = 240

// scrub makes a real JSON line small and free of this machine's paths:
// each string longer than longString keeps its first 80 characters and
// "…[scrubbed]"; the test's directories become /HOME, /CWD and /HOOKS.
func scrub(line []byte, paths map[string]string) []byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	v = scrubValue(v, paths)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func scrubValue(v any, paths map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = scrubValue(e, paths)
		}
	case []any:
		for i, e := range x {
			x[i] = scrubValue(e, paths)
		}
	case string:
		keys := make([]string, 0, len(paths))
		for from := range paths {
			keys = append(keys, from)
		}
		sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) }) // longest first
		for _, from := range keys {
			x = strings.ReplaceAll(x, from, paths[from])
		}
		if r := []rune(x); len(r) > longString {
			x = string(r[:80]) + "…[scrubbed]"
		}
		return x
	}
	return v
}

// scrubFile scrubs every line of a JSONL file.
func scrubFile(t *testing.T, path string, paths map[string]string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(data, []byte("\n")) {
		if s := scrub(line, paths); s != nil {
			out.Write(s)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// writeRecording writes data to harness/testdata/<cli>/<name>.
func writeRecording(t *testing.T, cli, name string, data []byte) {
	t.Helper()
	path := filepath.Join(testdataDir(cli), name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", path)
}

// lineShape names what one JSONL line is: its "type" (and its payload's
// "type" when it has one), or "$set"/"$rewindTo"/"meta" for the CLI's
// bookkeeping lines.
func lineShape(line []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return ""
	}
	for _, k := range []string{"$set", "$rewindTo"} {
		if _, ok := m[k]; ok {
			return k
		}
	}
	var typ string
	_ = json.Unmarshal(m["type"], &typ)
	if typ == "" {
		if _, ok := m["sessionId"]; ok {
			return "meta"
		}
	}
	var payload struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(m["payload"], &payload) == nil && payload.Type != "" {
		return typ + "/" + payload.Type
	}
	return typ
}

// shapes returns the set of line shapes of a JSONL file's content.
func shapes(data []byte) map[string]bool {
	out := map[string]bool{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if s := lineShape(line); s != "" {
			out[s] = true
		}
	}
	return out
}

// keysOf is a JSON object's sorted top-level keys.
func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkShapes fails unless every line shape the reader relies on
// (required) occurs in both the recording and today's file.
func checkShapes(t *testing.T, cli, recorded string, today []byte, required []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir(cli), recorded))
	if err != nil {
		t.Fatalf("the recording %s is missing (make it with THE_LOOP_RECORD=1): %v", recorded, err)
	}
	rec, now := shapes(data), shapes(today)
	for _, s := range required {
		if !rec[s] || !now[s] {
			t.Errorf("%s line shape %q: in the recording %v, in today's file %v", cli, s, rec[s], now[s])
		}
	}
}

// checkPayloadKeys fails unless today's payload has every key of the
// recorded one (the contract the fake agent copies).
func checkPayloadKeys(t *testing.T, cli, recorded string, today map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir(cli), recorded))
	if err != nil {
		t.Fatalf("the recording %s is missing (make it with THE_LOOP_RECORD=1): %v", recorded, err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("recording %s: %v", recorded, err)
	}
	for _, k := range keysOf(rec) {
		if _, ok := today[k]; !ok {
			t.Errorf("%s payload %s: key %q recorded but missing today (today: %v)", cli, recorded, k, keysOf(today))
		}
	}
}

// uuidLike matches a conversation id.
var uuidLike = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
