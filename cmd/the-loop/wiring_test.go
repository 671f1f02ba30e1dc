package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// TestLifecycle_ReadsHarnessAndRunnerOptionsPerCall: the service re-reads
// its config (decisions D3), so harnessTrust, submitDelayMs and the secret
// variables are taken from the config in use at each call, not fixed when
// the service started.
func TestLifecycle_ReadsHarnessAndRunnerOptionsPerCall(t *testing.T) {
	claudeDir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", claudeDir)
	cfg := config.Default()
	cfg.Routing.HarnessTrust.Enabled = false
	current := cfg
	svc := (&App{}).Lifecycle(func() *config.Config { return current }, nil, "service", true)

	prepare := func() bool {
		t.Helper()
		adapter, err := svc.Harness("claude", "x")
		if err != nil {
			t.Fatal(err)
		}
		if err := adapter.Prepare(t.TempDir(), nil); err != nil {
			t.Fatal(err)
		}
		_, err = os.Stat(filepath.Join(claudeDir, ".claude.json"))
		return err == nil
	}
	if prepare() {
		t.Fatal("trust was written with routing.harnessTrust.enabled false")
	}
	r1 := svc.Runner("sock")
	if svc.Runner("sock") != r1 {
		t.Fatal("the runner is not kept while the options stay the same")
	}

	next := *cfg
	next.Routing.HarnessTrust.Enabled = true
	next.Routing.Tmux.SubmitDelayMs = cfg.Routing.Tmux.SubmitDelayMs + 100
	current = &next
	if !prepare() {
		t.Fatal("a config that turned harnessTrust on was not used")
	}
	r2 := svc.Runner("sock")
	if r2 == r1 {
		t.Fatal("a changed submitDelayMs kept the old runner")
	}
	changed := next
	changed.Service.TokenEnv = "ANOTHER_TOKEN"
	current = &changed
	if svc.Runner("sock") == r2 {
		t.Fatal("a changed secret variable kept the old runner")
	}
}

func TestRestartNotes_LogsKeysThatNeedARestartOncePerReload(t *testing.T) {
	started := config.Default()
	current := started
	var logs bytes.Buffer
	get := restartNotes(func() *config.Config { return current }, started, slog.New(slog.NewTextHandler(&logs, nil)))
	get()
	if logs.Len() != 0 {
		t.Fatalf("logged without a reload: %s", logs.String())
	}
	next := *started
	next.Routing.Tmux.SubmitDelayMs++ // per request: no restart needed
	current = &next
	get()
	if logs.Len() != 0 {
		t.Fatalf("logged for a key read per request: %s", logs.String())
	}
	moved := next
	moved.Service.Port++
	moved.EventLog.MaxEvents++
	current = &moved
	get()
	get()
	out := logs.String()
	if strings.Count(out, "take effect on restart") != 1 || !strings.Contains(out, "service.port, eventLog.maxEvents") {
		t.Fatalf("log:\n%s", out)
	}
}

func TestRenderLifecycle_AFailedRowIsSummedUpOnStdout(t *testing.T) {
	rep := loop.Report{
		Services: []loop.ServiceRow{{Service: "service", Enabled: true, Outcome: "started", Detail: "pid 7"}},
		StandingSessions: []loop.StandingRow{
			{Name: "one", Outcome: loop.OutcomeStarted},
			{Name: "two", Outcome: loop.OutcomeFailed, Detail: "no harness"},
		},
	}
	var out, errb bytes.Buffer
	renderLifecycle(&out, &errb, rep, "")
	if !strings.Contains(out.String(), "standing sessions:\none") || !strings.HasSuffix(out.String(), "standing sessions: 1 failed (see stderr)\n") ||
		strings.Contains(out.String(), "no harness") || !strings.Contains(errb.String(), "two  failed") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	rep.StandingSessions = rep.StandingSessions[:1]
	renderLifecycle(&out, &errb, rep, "")
	if strings.Contains(out.String(), "failed") || errb.Len() != 0 {
		t.Fatalf("all ok:\n%s\n%s", out.String(), errb.String())
	}
}

func TestSameDir(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if !sameDir(dir, dir+"/") || !sameDir(dir, link) || sameDir(dir, t.TempDir()) || sameDir("", "") {
		t.Fatal("sameDir")
	}
}

// writeCounter counts the writes it receives.
type writeCounter struct {
	b      strings.Builder
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) { w.writes++; return w.b.Write(p) }

// TestWriteTable_AlignsColumnsInOneWrite: a table of 50 rows is one write to
// stdout, not a system call per row.
func TestWriteTable_AlignsColumnsInOneWrite(t *testing.T) {
	var w writeCounter
	writeTable(&w, [][]string{{"Name", "Running"}, {"s00", "yes"}, {"longer-name", "no"}})
	// The last column is not padded (a long detail used to pad every line).
	want := "Name         Running\ns00          yes\nlonger-name  no\n"
	if w.b.String() != want || w.writes != 1 {
		t.Errorf("%d writes of:\n%q\nwant one of:\n%q", w.writes, w.b.String(), want)
	}
}
