package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
)

// The read verbs end to end: the fake agent inherits the-loop's
// CLAUDE_CONFIG_DIR and writes its Claude-shaped transcript there, where
// `standing transcript` reads it.

// withClaudeDir gives the-loop (and so its agents) a CLAUDE_CONFIG_DIR of
// its own and returns it.
func withClaudeDir(e *env) string {
	dir := filepath.Join(e.dir, "claude-config")
	e.extraEnv = append(e.extraEnv, "CLAUDE_CONFIG_DIR="+dir)
	return dir
}

// transcriptJSON is `standing transcript NAME --format json` with extra
// arguments, decoded.
func (e *env) transcriptJSON(name string, args ...string) []loop.TranscriptEntry {
	e.t.Helper()
	r := e.must(0, append([]string{"standing", "transcript", name, "--format", "json"}, args...)...)
	var es []loop.TranscriptEntry
	if err := json.Unmarshal([]byte(r.stdout), &es); err != nil || es == nil {
		e.t.Fatalf("transcript json (%v): %s", err, r)
	}
	return es
}

// sayAndWait says text to supervisor (actor ops) once the boot turn is
// answered, and waits for the answer to it.
func sayAndWait(t *testing.T, e *env, text string) {
	t.Helper()
	waitFor(t, "the boot turn's answer", func() bool { return len(e.transcriptJSON("supervisor")) >= 2 })
	e.must(0, "standing", "say", "supervisor", "--text", text, "--actor", "ops")
	waitFor(t, "the say's answer", func() bool {
		es := e.transcriptJSON("supervisor")
		return len(es) >= 4 && es[len(es)-1].Role == loop.RoleAssistant && strings.Contains(es[len(es)-1].Text, text)
	})
}

// checkSaid holds entries to the boot turn, then the say and its answer.
func checkSaid(t *testing.T, es []loop.TranscriptEntry, text string) {
	t.Helper()
	var roles []string
	for _, e := range es {
		roles = append(roles, e.Role)
	}
	if !slices.Equal(roles, []string{"user", "assistant", "user", "assistant"}) {
		t.Fatalf("roles %v: %+v", roles, es)
	}
	if !strings.HasPrefix(es[0].Text, "You are **supervisor**") || !strings.HasPrefix(es[1].Text, "fake answer to: You are **supervisor**") {
		t.Fatalf("the boot turn: %.80q / %.80q", es[0].Text, es[1].Text)
	}
	if es[2].Text != framed(text) || es[3].Text != "fake answer to: "+framed(text) || es[3].Usage == nil || es[1].Usage == nil {
		t.Fatalf("the say: %+v / %+v", es[2], es[3])
	}
}

func TestStandingTranscript_ShowsWhatWasSaidAndAnswered(t *testing.T) {
	e := newEnv(t)
	claudeDir := withClaudeDir(e)
	e.config(oneSession)
	startReady(t, e)
	sayAndWait(t, e, "status report, please")

	es := e.transcriptJSON("supervisor")
	checkSaid(t, es, "status report, please")
	// The JSON is a list of {role, text, at} (+ usage on answers), nothing else.
	raw := e.must(0, "standing", "transcript", "supervisor", "--format", "json", "--last", "2").stdout
	var objs []map[string]any
	if err := json.Unmarshal([]byte(raw), &objs); err != nil || len(objs) != 2 {
		t.Fatalf("last 2: %v %s", err, raw)
	}
	for _, o := range objs {
		keys := []string{}
		for k := range o {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := []string{"at", "role", "text"}
		if o["role"] == "assistant" {
			want = []string{"at", "role", "text", "usage"}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("entry keys %v, want %v", keys, want)
		}
	}

	text := e.must(0, "standing", "transcript", "supervisor").stdout
	for _, want := range []string{"── user · ", "── assistant · ", "You are **supervisor**", framed("status report, please"), "fake answer to: " + framed("status report, please"), " out, "} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}

	// What the agent answered reaches the terminal escaped; JSON keeps it exact.
	rows := e.rows()
	path := harness.ClaudeTranscriptPath(claudeDir, rows["supervisor"].Cwd, rows["supervisor"].HarnessSessionID)
	hostile := "copy \x1b]52;c;aGk=\x07 this"
	line, _ := json.Marshal(map[string]any{"type": "assistant", "timestamp": "2030-01-01T00:00:00Z",
		"message": map[string]any{"id": "msg_x", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": hostile}}}})
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("the transcript is not where the-loop computes it: %v", err)
	}
	_, _ = f.Write(append(line, '\n'))
	f.Close()
	if out := e.must(0, "standing", "transcript", "supervisor", "--last", "1").stdout; strings.ContainsRune(out, 0x1b) || !strings.Contains(out, `copy \x1b]52;c;aGk=\x07 this`) {
		t.Fatalf("text output not escaped: %q", out)
	}
	if es := e.transcriptJSON("supervisor", "--last", "1"); es[0].Text != hostile {
		t.Fatalf("json not exact: %q", es[0].Text)
	}

	// Stopped, the conversation still reads; its file gone, it is empty, not an error.
	e.must(0, "standing", "stop", "supervisor")
	if es := e.transcriptJSON("supervisor"); len(es) != 5 {
		t.Fatalf("after stop: %d entries", len(es))
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if es := e.transcriptJSON("supervisor"); len(es) != 0 {
		t.Fatalf("a missing file: %+v", es)
	}
	r := e.must(0, "standing", "transcript", "supervisor")
	if r.stdout != "" || !strings.Contains(r.stderr, "no transcript entries") {
		t.Fatalf("a missing file, text: %s", r)
	}
}

func TestStandingTranscript_Refusals(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"standing", "transcript", "nobody"}, 1, "no standing session 'nobody'"},
		{[]string{"standing", "transcript", "supervisor", "--last", "0"}, 2, "--last 0 is out of range"},
		{[]string{"standing", "transcript", "supervisor", "--last", "1001"}, 2, "ask for 1 to 1000"},
		{[]string{"standing", "peek", "supervisor"}, 1, "has never been started"},
		{[]string{"standing", "peek", "supervisor", "--lines", "2001"}, 2, "ask for 1 to 2000"},
		{[]string{"standing", "attach", "supervisor"}, 2, "needs a terminal"},
	} {
		r := e.run(c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %s\nwant exit %d with %q", c.args, r, c.code, c.want)
		}
	}
	// Declared, never started: no entries yet.
	if es := e.transcriptJSON("supervisor"); len(es) != 0 {
		t.Fatalf("never started: %+v", es)
	}
}

func TestStandingTranscript_ThroughTheService(t *testing.T) {
	e, _ := serviceEnv(t, `
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%, harnessKillGraceSeconds: 3, resumeProbeSeconds: 1}}
standingSessions:
  enabled: true
  sessions:
    - name: supervisor
      cwd: %DIR%
`)
	withClaudeDir(e) // the service inherits it from `start`, and its agents from the service
	e.must(0, "start")
	if pid := e.servicePID(); pid == 0 {
		t.Fatal("the service is not running")
	}
	sayAndWait(t, e, "through the service")
	checkSaid(t, e.transcriptJSON("supervisor"), "through the service")
	r := e.must(0, "standing", "peek", "supervisor", "--format", "json")
	var peek loop.PeekResult
	if err := json.Unmarshal([]byte(r.stdout), &peek); err != nil || peek.TmuxSocket != e.socket || !peek.Running ||
		!strings.Contains(strings.Join(peek.Lines, "\n"), "fake answer to: "+strings.Split(framed("through the service"), "\n")[0]) {
		t.Fatalf("peek through the service: %v %s", err, r)
	}
}

func TestStandingPeek_ShowsTheScreen(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	startReady(t, e)
	e.must(0, "standing", "say", "supervisor", "--text", "peek at this", "--actor", "ops")
	waitFor(t, "the answer on screen", func() bool {
		return strings.Contains(e.run("standing", "peek", "supervisor").stdout, "fake answer to: Message from your operator (ops)")
	})
	r := e.must(0, "standing", "peek", "supervisor", "--lines", "3")
	if lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], "❯") {
		t.Fatalf("peek --lines 3: %q", r.stdout)
	}
	r = e.must(0, "standing", "peek", "supervisor", "--format", "json")
	var res loop.PeekResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Name != "supervisor" || res.TmuxTarget != "loop-standing-supervisor" ||
		res.TmuxSocket != e.socket || !res.Running || len(res.Lines) == 0 || len(res.Lines) > 40 {
		t.Fatalf("peek json: %v %s", err, r)
	}
}

func TestStandingAttach_ExecsTmuxOnTheRecordsSocket(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	startReady(t, e)
	t.Setenv("TMUX", "/tmp/tmux-0/default,1,0") // an operator inside tmux of their own
	type execCall struct {
		path string
		argv []string
		env  []string
	}
	attach := func(write bool, terminal bool) (execCall, string, error) {
		var got execCall
		var stderr bytes.Buffer
		a := &App{ConfigPath: e.cfg, Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr}
		cmd := &StandingAttachCmd{Name: "supervisor", Write: write}
		at := attacher{
			terminal: func() bool { return terminal },
			exec: func(path string, argv, env []string) error {
				got = execCall{path, argv, env}
				return nil
			},
		}
		// As Main runs it: the terminal checked first, then the services
		// picked and the verb's context made for Run.
		err := cmd.needTerminal(at)
		if err == nil {
			err = withPicked(a, picking{}, func(ctx context.Context, api services) error { return cmd.attach(ctx, a, api, at) })
		}
		return got, stderr.String(), err
	}
	tmuxPath, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	got, note, err := attach(false, true)
	want := []string{"tmux", "-L", e.socket, "attach-session", "-r", "-t", "=loop-standing-supervisor"}
	if err != nil || got.path != tmuxPath || !slices.Equal(got.argv, want) || !strings.Contains(note, "read-only") {
		t.Fatalf("attach: %+v %v %q, want %q", got, err, note, want)
	}
	for _, kv := range got.env {
		if strings.HasPrefix(kv, "TMUX=") {
			t.Fatalf("attach runs with %s", kv)
		}
	}
	got, _, err = attach(true, true)
	if want := []string{"tmux", "-L", e.socket, "attach-session", "-t", "=loop-standing-supervisor"}; err != nil || !slices.Equal(got.argv, want) {
		t.Fatalf("attach --write: %+v %v", got, err)
	}
	got, _, err = attach(false, false)
	if loop.ErrorCode(err) != loop.EINVALID || got.path != "" {
		t.Fatalf("attach without a terminal: %+v %v", got, err)
	}
}

// withPicked runs fn as Main runs a command's Run: with the config loaded
// and the services picked as p says, and the verb's context made from
// them.
func withPicked(a *App, p picking, fn func(ctx context.Context, api services) error) error {
	cfg, err := a.loadFor(p)
	if err != nil {
		return err
	}
	api, done, err := a.pickServices(cfg, p)
	if err != nil {
		return err
	}
	defer done()
	ctx, stop := api.bound(api.stop)
	defer stop()
	return api.finish(ctx, a.Stderr, fn(ctx, api))
}
