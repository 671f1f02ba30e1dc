package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// bare runs the-loop with no -c in dir, with a HOME and XDG_CONFIG_HOME of
// its own that hold no config: the defaults apply.
func bare(t *testing.T, dir string, args ...string) result {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(filterEnv(os.Environ(), "TMUX", "TMUX_PANE", "HOME", "XDG_CONFIG_HOME", "THE_LOOP_CLI_CONFIG"),
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "GORACE=atexit_sleep_ms=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("the-loop %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// TestReadVerbs_NoConfigSaysSoAndCreatesNoStore: in a directory with no
// config, every verb that only reads says "no config found; using
// defaults" on stderr, answers as an empty store would, and leaves the
// directory as it found it (no state root, no store).
func TestReadVerbs_NoConfigSaysSoAndCreatesNoStore(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"status"}, {"standing", "list"}, {"standing", "list", "--json"}, {"sessions", "list"}, {"events"},
		{"standing", "peek", "nobody"}, {"standing", "transcript", "nobody"}, {"channels", "status"},
	} {
		r := bare(t, dir, args...)
		if !strings.HasPrefix(r.stderr, noConfigNote+"\n") {
			t.Errorf("%v: stderr does not begin with the note: %s", args, r)
		}
		if strings.Contains(r.stdout, noConfigNote) {
			t.Errorf("%v: the note went to stdout: %s", args, r)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Fatalf("%v left %v in the directory: %s", args, entries, r)
		}
	}
	if r := bare(t, dir, "standing", "list", "--json"); strings.TrimSpace(r.stdout) != "[]" || r.code != 0 {
		t.Errorf("standing list --json with no store: %s", r)
	}
}

// TestReadVerbs_NoteOnlyWithoutConfig: with a config, a read verb says
// nothing about defaults, and a verb that acts never does.
func TestReadVerbs_NoteOnlyWithoutConfig(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	if r := e.run("standing", "list"); strings.Contains(r.stderr, noConfigNote) {
		t.Errorf("with a config: %s", r)
	}
	if r := bare(t, t.TempDir(), "config", "schema"); strings.Contains(r.stderr, noConfigNote) {
		t.Errorf("config schema: %s", r)
	}
}

// TestNotFound_WordedOneWay: every standing verb asked about a name that
// is neither declared nor recorded words it the same way (and exits 1).
func TestNotFound_WordedOneWay(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	const want = "error: no standing session 'nobody' — it is neither declared in standingSessions.sessions nor recorded; `the-loop standing list` shows the ones there are\n"
	for _, args := range [][]string{
		{"standing", "peek", "nobody"}, {"standing", "transcript", "nobody"}, {"standing", "start", "nobody"},
		{"standing", "restart", "nobody"}, {"standing", "delete", "nobody"},
	} {
		if r := e.run(args...); r.code != 1 || r.stderr != want {
			t.Errorf("%v: %s", args, r)
		}
	}
	// A declared session never started: peek says so, naming the remedy.
	if r := e.run("standing", "peek", "supervisor"); r.code != 1 || !strings.Contains(r.stderr, "standing session 'supervisor' has never been started") ||
		!strings.Contains(r.stderr, "the-loop standing start supervisor") {
		t.Errorf("peek of a declared session never started: %s", r)
	}
}

// TestFormatJSON_ControlAndLifecycleVerbs: the verbs that act print their
// rows as JSON with --format json — the control result of standing start
// and stop, stop's report — with the exit status text gives.
func TestFormatJSON_ControlAndLifecycleVerbs(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	var res loop.StandingControlResult
	r := e.must(0, "standing", "start", "supervisor", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || !res.OK || len(res.Sessions) != 1 || res.Sessions[0].Outcome != loop.OutcomeStarted {
		t.Fatalf("standing start --format json: %+v %v\n%s", res, err, r)
	}
	r = e.must(0, "standing", "stop", "supervisor", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Sessions) != 1 || res.Sessions[0].Outcome != loop.OutcomeStopped {
		t.Fatalf("standing stop --format json: %+v %v\n%s", res, err, r)
	}
	r = e.must(1, "standing", "start", "nobody", "--format", "json")
	if r.stdout != "" || !strings.Contains(r.stderr, "no standing session 'nobody'") {
		t.Fatalf("a refused verb in json: %s", r)
	}
	var rep loop.Report
	r = e.must(0, "stop", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Services) != 1 || !rep.OK {
		t.Fatalf("stop --format json: %+v %v\n%s", rep, err, r)
	}
}
