package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// These tests pin every tmux argv the runner sends, against hand-written
// lists, with a recording Commander (no tmux needed).

func assertArgv(t *testing.T, rec *recorder, want [][]string) {
	t.Helper()
	got := rec.argvs()
	if !reflect.DeepEqual(got, want) {
		var b strings.Builder
		for i := 0; i < max(len(got), len(want)); i++ {
			var g, w []string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			mark := "  "
			if !reflect.DeepEqual(g, w) {
				mark = "≠ "
			}
			b.WriteString(mark + "got  " + strings.Join(quoteAll(g), " ") + "\n   want " + strings.Join(quoteAll(w), " ") + "\n")
		}
		t.Fatalf("tmux argv transcript differs:\n%s", b.String())
	}
}

func quoteAll(a []string) []string {
	out := make([]string, len(a))
	for i, s := range a {
		out[i] = "«" + s + "»"
	}
	return out
}

// The hand-written transcripts below pin the target-addressed operations;
// the work-item entry points (workitem_test.go) are pinned to the very same
// lists, so the runner split cannot change a byte of what tmux is sent.

// pinnedSpec is the spawn spec spawnTranscript was written for.
var pinnedSpec = loop.SpawnSpec{
	Argv: []string{"/bin/claude", "--session-id", "id-1", "--flag;", "boot prompt;"},
	Cwd:  "/",
	Tag:  "id-1;",
}

// spawnTranscript is SpawnIn(target, pinnedSpec) into an absent session.
func spawnTranscript(target string) [][]string {
	return [][]string{
		{"-L", "sock", "has-session", "-t", "=" + target},
		{"-L", "sock", "new-session", "-d", "-s", target, "-x", "200", "-y", "50", "-c", "/", "--", "sleep", "60"},
		{"-L", "sock", "set-option", "-w", "-t", "=" + target + ":^", "remain-on-exit", "on", ";",
			"set-option", "-q", "-w", "-t", "=" + target + ":^", "window-size", "manual", ";",
			"respawn-pane", "-k", "-t", "=" + target + ":^.{top-left}", "-c", "/", "--",
			"/bin/claude", "--session-id", "id-1", `--flag\;`, `boot prompt\;`,
			";", "set-option", "-t", "=" + target + ":", "@the-loop-tag", `id-1\;`},
	}
}

// respawnList is the command list a spawn into a new session ends with:
// remain-on-exit and the window size set, then respawn (the -L sock prefix
// included).
func respawnList(target string, respawn ...string) []string {
	w := "=" + target + ":^"
	return append([]string{"-L", "sock", "set-option", "-w", "-t", w, "remain-on-exit", "on", ";",
		"set-option", "-q", "-w", "-t", w, "window-size", "manual", ";"}, respawn...)
}

// spawnListKey is the recorder key of respawnList("loop-a") before its respawn.
const spawnListKey = "set-option -w -t =loop-a:^ remain-on-exit on ; set-option -q -w -t =loop-a:^ window-size manual"

// stateTranscript is State(target) of a session that exists.
func stateTranscript(target string) [][]string {
	return [][]string{
		{"-L", "sock", "has-session", "-t", "=" + target},
		{"-L", "sock", "display-message", "-p", "-t", "=" + target + ":^.{top-left}", "#{session_name}\t#{pane_dead}"},
	}
}

// deliverTranscript is DeliverTo(target) through tmux buffer buf.
func deliverTranscript(target, buf string) [][]string {
	return [][]string{pasteList(target, buf), submitList(target, buf+"-submit")}
}

// pasteList is a delivery's first tmux call: leave copy mode, load the
// text from stdin into buf, paste it bracketed — one command list.
func pasteList(target, buf string) []string {
	pane := "=" + target + ":^.{top-left}"
	return []string{"-L", "sock", "copy-mode", "-q", "-t", pane, ";", "load-buffer", "-b", buf, "-", ";",
		"paste-buffer", "-p", "-d", "-b", buf, "-t", pane}
}

// submitList is a delivery's submit: a carriage return set into buf and
// pasted unbracketed — one command list.
func submitList(target, buf string) []string {
	return []string{"-L", "sock", "set-buffer", "-b", buf, "\r", ";", "paste-buffer", "-d", "-b", buf, "-t", "=" + target + ":^.{top-left}"}
}

// killTranscript is KillTarget(target).
func killTranscript(target string) [][]string {
	return [][]string{{"-L", "sock", "kill-session", "-t", "=" + target}}
}

// terminateTranscript is TerminateHarnessIn(target) as scripted by
// scriptTerminate: one live pane whose tree ends within the grace.
func terminateTranscript(target string) [][]string {
	return [][]string{
		{"-L", "sock", "has-session", "-t", "=" + target},
		{"-L", "sock", "set-option", "-w", "-t", "=" + target + ":^", "remain-on-exit", "on"},
		{"-L", "sock", "list-panes", "-s", "-t", "=" + target, "-F", "#{pane_pid} #{pane_dead}"},
		// the signals, then until tmux sees the agent's pane die:
		{"-L", "sock", "display-message", "-p", "-t", "=" + target + ":^.{top-left}", "#{session_name}\t#{pane_dead}"},
		{"-L", "sock", "display-message", "-p", "-t", "=" + target + ":^.{top-left}", "#{session_name}\t#{pane_dead}"},
	}
}

// scriptTerminate scripts rec and returns the process table for a
// terminate of target: a harness (pid 100) with an MCP server and a helper
// that only SIGKILL ends, and a dead pane (pid 200).
func scriptTerminate(rec *recorder, target string) *fakeProcs {
	harness, mcp, helper := Proc{Pid: 100, Start: 1}, Proc{Pid: 101, Start: 2}, Proc{Pid: 102, Start: 3}
	rec.on("list-panes -s -t ="+target+" -F #{pane_pid} #{pane_dead}", reply{out: "100 0\n200 1\n"}).
		on(displayDead(target), reply{out: target + "\t0\n"}, reply{out: target + "\t1\n"})
	return &fakeProcs{
		tree:  map[int][]Proc{100: {harness, mcp, helper}, 101: {mcp}, 102: {helper}},
		alive: map[Proc]bool{harness: true, mcp: true, helper: true},
		dieOn: map[Proc]syscall.Signal{harness: syscall.SIGTERM, mcp: syscall.SIGTERM, helper: syscall.SIGKILL},
	}
}

// displayDead is the recorder key of the probe of target's agent pane.
func displayDead(target string) string {
	return "display-message -p -t =" + target + ":^.{top-left} #{session_name}\t#{pane_dead}"
}

func TestSpawnIn_ArgvTranscript(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-standing-a", exit1("can't find session: loop-standing-a"))
	r, _ := newTestRunner(t, rec, nil)
	if err := r.SpawnIn(context.Background(), "loop-standing-a", pinnedSpec); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, spawnTranscript("loop-standing-a"))
}

// A spawn whose caller just saw no session (Absent) is the same
// transcript without its look: two tmux calls.
func TestSpawnIn_AbsentArgvTranscript(t *testing.T) {
	rec := newRecorder()
	r, _ := newTestRunner(t, rec, nil)
	spec := pinnedSpec
	spec.Absent = true
	if err := r.SpawnIn(context.Background(), "loop-standing-a", spec); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, spawnTranscript("loop-standing-a")[1:])
}

// A dead agent pane is respawned in place, never cleared by killing the
// session (which holds any window an operator opened).
func TestSpawnIn_RespawnsIntoADeadPane(t *testing.T) {
	rec := newRecorder().on(displayDead("loop-a"), reply{out: "loop-a\t1\n"})
	r, _ := newTestRunner(t, rec, nil)
	if err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", "x"}, Tag: "id-2"}); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, [][]string{
		{"-L", "sock", "has-session", "-t", "=loop-a"},
		{"-L", "sock", "display-message", "-p", "-t", "=loop-a:^.{top-left}", "#{session_name}\t#{pane_dead}"},
		{"-L", "sock", "respawn-pane", "-k", "-t", "=loop-a:^.{top-left}", "--", "h", "x", ";", "set-option", "-t", "=loop-a:", "@the-loop-tag", "id-2"},
	})
}

func TestSpawnIn_RefusesLiveSessionWithoutSpawning(t *testing.T) {
	rec := newRecorder().on(displayDead("loop-a"), reply{out: "loop-a\t0\n"})
	r, _ := newTestRunner(t, rec, nil)
	err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", "x"}})
	if !errors.Is(err, ErrSessionLive) || loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("err = %v, want EINVALID wrapping ErrSessionLive", err)
	}
	want := "tmux session loop-a already exists and its harness is still running; not spawning over a live session"
	if loop.ErrorMessage(err) != want {
		t.Fatalf("message = %q, want %q", loop.ErrorMessage(err), want)
	}
	assertArgv(t, rec, [][]string{
		{"-L", "sock", "has-session", "-t", "=loop-a"},
		{"-L", "sock", "display-message", "-p", "-t", "=loop-a:^.{top-left}", "#{session_name}\t#{pane_dead}"},
	})
}

func TestSpawnIn_RetriesOnceAfterDuplicateSession(t *testing.T) {
	newSession := "new-session -d -s loop-a -x 200 -y 50 -- sleep 60"
	rec := newRecorder().
		on("has-session -t =loop-a", exit1("can't find session: loop-a"), reply{}).
		on(displayDead("loop-a"), reply{out: "loop-a\t1\n"}).
		on(newSession, exit1("duplicate session: loop-a"), reply{})
	r, _ := newTestRunner(t, rec, nil)
	if err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", "x"}}); err != nil {
		t.Fatal(err)
	}
	ns := append([]string{"-L", "sock"}, strings.Fields(newSession)...)
	assertArgv(t, rec, [][]string{
		{"-L", "sock", "has-session", "-t", "=loop-a"},
		ns,
		{"-L", "sock", "has-session", "-t", "=loop-a"},
		{"-L", "sock", "display-message", "-p", "-t", "=loop-a:^.{top-left}", "#{session_name}\t#{pane_dead}"},
		{"-L", "sock", "respawn-pane", "-k", "-t", "=loop-a:^.{top-left}", "--", "h", "x"},
	})
}

func TestSpawnIn_FailedRespawnRemovesHalfMadeSessionAndCarriesStderr(t *testing.T) {
	rec := newRecorder().
		on("has-session -t =loop-a", exit1("no server running on /tmp/tmux-0/sock")).
		on(spawnListKey+" ; respawn-pane -k -t =loop-a:^.{top-left} -- h x", exit1("create pane failed: boom"))
	r, _ := newTestRunner(t, rec, nil)
	err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", "x"}})
	var ee *ExitError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "create pane failed: boom") {
		t.Fatalf("err = %v, want one carrying tmux's stderr", err)
	}
	got := rec.argvs()
	if last := got[len(got)-1]; !reflect.DeepEqual(last, []string{"-L", "sock", "kill-session", "-t", "=loop-a"}) {
		t.Fatalf("last call = %v, want kill-session of the half-made session", last)
	}
}

func TestSpawnIn_SingleElementArgvIsExecedNotShellSplit(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-a", exit1("can't find session: loop-a"))
	r, _ := newTestRunner(t, rec, nil)
	if err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"/opt/my agent/it's"}}); err != nil {
		t.Fatal(err)
	}
	got := rec.argvs()
	last := got[len(got)-1]
	want := respawnList("loop-a", "respawn-pane", "-k", "-t", "=loop-a:^.{top-left}", "--", `exec '/opt/my agent/it'\''s'`)
	if !reflect.DeepEqual(last, want) {
		t.Fatalf("respawn = %q, want %q", last, want)
	}
}

func TestSpawnIn_TooLongArgvWithoutLauncherNamesTheLimit(t *testing.T) {
	rec := newRecorder()
	r, _ := newTestRunner(t, rec, nil)
	err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", strings.Repeat("p", 13*1024)}})
	if !errors.Is(err, ErrArgvTooLong) || loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("err = %v, want EINVALID wrapping ErrArgvTooLong", err)
	}
	if !strings.Contains(err.Error(), "tmux takes at most 12288") {
		t.Fatalf("message %q does not name the limit", err)
	}
	assertArgv(t, rec, [][]string{})
}

func TestSpawnIn_ArgumentOverKernelLimitIsRefusedEvenWithLauncher(t *testing.T) {
	rec := newRecorder()
	r, _ := newTestRunner(t, rec, nil)
	r.opt.Launcher = []string{"/bin/the-loop", "internal-exec"}
	err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", strings.Repeat("p", MaxArgBytes)}})
	if !errors.Is(err, ErrArgvTooLong) || !strings.Contains(err.Error(), "Linux caps one argument at 131071 bytes") {
		t.Fatalf("err = %v, want the kernel limit named", err)
	}
	assertArgv(t, rec, [][]string{})
}

func TestSpawnIn_TooLongArgvGoesThroughLauncherFile(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-a", exit1("can't find session: loop-a"))
	r, _ := newTestRunner(t, rec, nil)
	r.opt.Launcher = []string{"/bin/the-loop", "internal-exec"}
	prompt := strings.Repeat("p", 20*1024) + ";"
	if err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", prompt}, Cwd: "/"}); err != nil {
		t.Fatal(err)
	}
	got := rec.argvs()
	last := got[len(got)-1]
	file := last[len(last)-1]
	t.Cleanup(func() { os.Remove(file) })
	want := respawnList("loop-a", "respawn-pane", "-k", "-t", "=loop-a:^.{top-left}", "-c", "/", "--", "/bin/the-loop", "internal-exec", file)
	if !reflect.DeepEqual(last, want) {
		t.Fatalf("respawn = %q, want %q", last, want)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("launch file %s: %v, mode %v; want 0600", file, err, fi.Mode())
	}
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), `"cwd":"/"`) || !strings.Contains(string(data), prompt) {
		t.Fatalf("launch file holds %.80q…", data)
	}
}

// TestSpawnIn_LaunchFileGoesInTheLaunchDir: with Options.LaunchDir the
// launch file is written there (a private directory made on demand), so a
// file whose pane died before its launcher read it stays in the project,
// not in a shared $TMPDIR.
func TestSpawnIn_LaunchFileGoesInTheLaunchDir(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-a", exit1("can't find session: loop-a"))
	r, _ := newTestRunner(t, rec, nil)
	r.opt.Launcher = []string{"/bin/the-loop", "internal-exec"}
	r.opt.LaunchDir = filepath.Join(t.TempDir(), "local", "launch")
	if err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", strings.Repeat("p", 20*1024)}, Cwd: "/"}); err != nil {
		t.Fatal(err)
	}
	got := rec.argvs()
	file := got[len(got)-1][len(got[len(got)-1])-1]
	if filepath.Dir(file) != r.opt.LaunchDir {
		t.Fatalf("launch file %s, want it in %s", file, r.opt.LaunchDir)
	}
	if fi, err := os.Stat(r.opt.LaunchDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("launch dir: %v, mode %v; want 0700", err, fi.Mode())
	}
}

func TestDeliverTo_ArgvTranscript(t *testing.T) {
	rec := newRecorder()
	r, sl := newTestRunner(t, rec, nil)
	if err := r.DeliverTo(context.Background(), "loop-standing-a", "hi\r\nthere\x1b[201~;", 0); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, deliverTranscript("loop-standing-a", "the-loop-1-abc"))
	if got, want := rec.stdins(), []string{"hi\nthere[201~;", ""}; !reflect.DeepEqual(got, want) {
		t.Fatalf("stdin = %q, want %q", got, want)
	}
	if !reflect.DeepEqual(sl.d, []time.Duration{50 * time.Millisecond}) {
		t.Fatalf("sleeps = %v, want the 50ms submit delay once", sl.d)
	}
}

func TestDeliverTo_FailedPasteDeletesItsBuffer(t *testing.T) {
	list := pasteList("loop-a", "the-loop-1-abc")
	rec := newRecorder().on(strings.Join(list[2:], " "), exit1("can't find session: loop-a"))
	r, _ := newTestRunner(t, rec, nil)
	err := r.DeliverTo(context.Background(), "loop-a", "x", 0)
	if loop.ErrorCode(err) != loop.ENOTFOUND || !errors.Is(err, ErrNoSession) {
		t.Fatalf("err = %v, want ENOTFOUND", err)
	}
	assertArgv(t, rec, [][]string{list, {"-L", "sock", "delete-buffer", "-b", "the-loop-1-abc"}})
}

// A tmux that refuses one command of the paste list (an older one without
// copy-mode -q) gets the steps one by one: the refused copy-mode is
// warned about and the text still pasted, once.
func TestDeliverTo_RefusedListFallsBackToSteps(t *testing.T) {
	list := pasteList("loop-a", "the-loop-1-abc")
	rec := newRecorder().on(strings.Join(list[2:], " "), exit1("unknown flag -q")).
		on("copy-mode -q -t =loop-a:^.{top-left}", exit1("unknown flag -q"))
	r, _ := newTestRunner(t, rec, nil)
	if err := r.DeliverTo(context.Background(), "loop-a", "x", 0); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, [][]string{list,
		{"-L", "sock", "copy-mode", "-q", "-t", "=loop-a:^.{top-left}"},
		{"-L", "sock", "load-buffer", "-b", "the-loop-1-abc", "-"},
		{"-L", "sock", "paste-buffer", "-p", "-d", "-b", "the-loop-1-abc", "-t", "=loop-a:^.{top-left}"},
		submitList("loop-a", "the-loop-1-abc-submit"),
	})
}

func TestKillTarget_ArgvTranscript(t *testing.T) {
	rec := newRecorder()
	r, _ := newTestRunner(t, rec, nil)
	if err := r.KillTarget(context.Background(), "loop-standing-a"); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, killTranscript("loop-standing-a"))
}

func TestTerminateHarnessIn_ArgvTranscriptAndSignals(t *testing.T) {
	rec := newRecorder()
	procs := scriptTerminate(rec, "loop-a")
	r, sl := newTestRunner(t, rec, procs)
	if err := r.TerminateHarnessIn(context.Background(), "loop-a", "standing:a", 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, terminateTranscript("loop-a"))
	wantSig := []string{"TERM 100", "TERM 101", "TERM 102", "KILL 102"}
	if !reflect.DeepEqual(procs.signal, wantSig) {
		t.Fatalf("signals = %v, want %v", procs.signal, wantSig)
	}
	wantSleep := []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond, 20 * time.Millisecond}
	if !reflect.DeepEqual(sl.d, wantSleep) {
		t.Fatalf("sleeps = %v, want %v (the grace in 100ms polls, one settle poll)", sl.d, wantSleep)
	}
}

func TestTerminateHarnessIn_ZeroGraceEscalatesAtOnce(t *testing.T) {
	p := Proc{Pid: 100, Start: 1}
	procs := &fakeProcs{tree: map[int][]Proc{100: {p}}, alive: map[Proc]bool{p: true},
		dieOn: map[Proc]syscall.Signal{p: syscall.SIGKILL}}
	rec := newRecorder().on("list-panes -s -t =loop-a -F #{pane_pid} #{pane_dead}", reply{out: "100 0\n"}).
		on(displayDead("loop-a"), reply{out: "loop-a\t1\n"})
	r, sl := newTestRunner(t, rec, procs)
	if err := r.TerminateHarnessIn(context.Background(), "loop-a", "x", 0); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(procs.signal, []string{"TERM 100", "KILL 100"}) || len(sl.d) != 0 {
		t.Fatalf("signals %v, sleeps %v; want TERM then KILL with no wait", procs.signal, sl.d)
	}
}

func TestTerminateHarnessIn_SurvivorOfSIGKILLIsAnError(t *testing.T) {
	p := Proc{Pid: 100, Start: 1}
	procs := &fakeProcs{tree: map[int][]Proc{100: {p}}, alive: map[Proc]bool{p: true}, dieOn: map[Proc]syscall.Signal{}}
	rec := newRecorder().on("list-panes -s -t =loop-a -F #{pane_pid} #{pane_dead}", reply{out: "100 0\n"})
	r, _ := newTestRunner(t, rec, procs)
	err := r.TerminateHarnessIn(context.Background(), "loop-a", "x", 0)
	if !errors.Is(err, ErrStillRunning) || !strings.Contains(err.Error(), "harness in loop-a is still running after SIGKILL") {
		t.Fatalf("err = %v", err)
	}
}

func TestTerminateHarnessIn_GoneSessionIsSuccess(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-a", exit1("can't find session: loop-a"))
	r, _ := newTestRunner(t, rec, &fakeProcs{})
	if err := r.TerminateHarnessIn(context.Background(), "loop-a", "x", time.Second); err != nil {
		t.Fatal(err)
	}
	assertArgv(t, rec, [][]string{{"-L", "sock", "has-session", "-t", "=loop-a"}})
}

// statesCmd is the recorder key of States' one call.
const statesCmd = "list-panes -a -F #{session_name}\t#{window_index}\t#{pane_at_top}\t#{pane_at_left}\t#{pane_dead}"

func TestStates_OneCallForManyTargets(t *testing.T) {
	// session, window index, at top, at left, dead: each session's state
	// is that of the top-left pane of its lowest-indexed window.
	rec := newRecorder().on(statesCmd, reply{out: "" +
		"loop-a\t0\t1\t1\t0\n" +
		"loop-ab\t0\t1\t1\t1\n" +
		"loop-b\t1\t1\t1\t1\n" + // an operator's window listed first, dead
		"loop-b\t0\t1\t1\t0\n" +
		"loop-d\t0\t1\t1\t1\n" + // the agent dead, …
		"loop-d\t0\t0\t1\t0\n" + // … a pane split below it live,
		"loop-d\t2\t1\t1\t0\n" + // … and an operator's window live
		"loop-e\t3\t1\t1\t0\n" + // base-index 3: window 3 is the agent's
		"loop-e\t4\t1\t1\t1\n" +
		"loop-f\t0\t0\t0\t1\n" + // no top-left pane: live
		"other\t0\t1\t1\t0\n"})
	r, _ := newTestRunner(t, rec, nil)
	got := r.States(context.Background(), []string{"loop-a", "loop-b", "loop-c", "loop-d", "loop-e", "loop-f", "my-work"})
	want := map[string]loop.PaneState{"loop-a": loop.PaneLive, "loop-b": loop.PaneLive,
		"loop-c": loop.PaneAbsent, "loop-d": loop.PaneDead, "loop-e": loop.PaneLive, "loop-f": loop.PaneLive,
		"my-work": loop.PaneUnknown}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("States = %v, want %v", got, want)
	}
	assertArgv(t, rec, [][]string{{"-L", "sock", "list-panes", "-a", "-F",
		"#{session_name}\t#{window_index}\t#{pane_at_top}\t#{pane_at_left}\t#{pane_dead}"}})
}

func TestStates_NoServerIsAbsentSilenceIsUnknown(t *testing.T) {
	cases := map[string]struct {
		r    reply
		want loop.PaneState
	}{
		"no server":         {exit1("no server running on /tmp/tmux-0/sock"), loop.PaneAbsent},
		"no socket":         {exit1("error connecting to /tmp/tmux-0/sock (No such file or directory)"), loop.PaneAbsent},
		"refused":           {exit1("error connecting to /tmp/tmux-0/sock (Connection refused)"), loop.PaneAbsent},
		"timeout":           {reply{err: &NoAnswerError{Err: context.DeadlineExceeded}}, loop.PaneUnknown},
		"server exiting":    {exit1("server exited unexpectedly"), loop.PaneAbsent},
		"unexpected error":  {exit1("unknown option -- a"), loop.PaneUnknown},
		"permission denied": {exit1("error connecting to /tmp/tmux-0/sock (Permission denied)"), loop.PaneUnknown},
		"version mismatch":  {exit1("protocol version mismatch (client 8, server 7)"), loop.PaneUnknown},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder().on(statesCmd, c.r)
			r, _ := newTestRunner(t, rec, nil)
			got := r.States(context.Background(), []string{"loop-a", "loop-b"})
			if got["loop-a"] != c.want || got["loop-b"] != c.want {
				t.Fatalf("States = %v, want all %s", got, c.want)
			}
		})
	}
}

func TestState_ArgvAndAnswers(t *testing.T) {
	cases := map[string]struct {
		has, panes reply
		want       loop.PaneState
		calls      int
	}{
		"absent":            {exit1("can't find session: loop-a"), reply{}, loop.PaneAbsent, 1},
		"no server":         {exit1("no server running on /tmp/tmux-0/sock"), reply{}, loop.PaneAbsent, 1},
		"no socket":         {exit1("error connecting to /tmp/tmux-0/sock (No such file or directory)"), reply{}, loop.PaneAbsent, 1},
		"refused":           {exit1("error connecting to /tmp/tmux-0/sock (Connection refused)"), reply{}, loop.PaneAbsent, 1},
		"server exiting":    {exit1("server exited unexpectedly"), reply{}, loop.PaneAbsent, 1},
		"no session left":   {exit1("no current target"), reply{}, loop.PaneAbsent, 1},
		"permission denied": {exit1("error connecting to /tmp/tmux-0/sock (Permission denied)"), reply{}, loop.PaneUnknown, 1},
		"version mismatch":  {exit1("protocol version mismatch (client 8, server 7)"), reply{}, loop.PaneUnknown, 1},
		"other answer":      {exit1("unknown option -- x"), reply{}, loop.PaneUnknown, 1},
		"unknown":           {reply{err: &NoAnswerError{Err: context.DeadlineExceeded}}, reply{}, loop.PaneUnknown, -1}, // asked twice
		"dead":              {reply{}, reply{out: "loop-a\t1\n"}, loop.PaneDead, 2},
		"live":              {reply{}, reply{out: "loop-a\t0\n"}, loop.PaneLive, 2},
		"gone meanwhile":    {reply{}, reply{out: "\t\n"}, loop.PaneLive, 2},
		"pane probe failed": {reply{}, exit1("boom"), loop.PaneLive, 2},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder().on("has-session -t =loop-a", c.has).on(displayDead("loop-a"), c.panes)
			r, _ := newTestRunner(t, rec, nil)
			if got := r.State(context.Background(), "loop-a"); got != c.want {
				t.Fatalf("State = %s, want %s", got, c.want)
			}
			want := stateTranscript("loop-a")
			if c.calls < 0 { // no answer: has-session is asked once more
				want = [][]string{want[0], want[0]}
			} else {
				want = want[:c.calls]
			}
			assertArgv(t, rec, want)
		})
	}
}

func TestSnapshot_ArgvTranscript(t *testing.T) {
	look := "display-message -p -t =loop-a:^.{top-left} #{session_name}\t#{pane_tty}\t#{pane_dead}\t#{@the-loop-tag} ; capture-pane -p -t =loop-a:^.{top-left}"
	rec := newRecorder().on(look, reply{out: "loop-a\t/dev/pts/9\t1\tconv-1\n❯ \n"})
	r, _ := newTestRunner(t, rec, nil)
	snap, err := r.Snapshot(context.Background(), "loop-a")
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Dead || snap.Screen != "❯ \n" || snap.Tag != "conv-1" {
		t.Fatalf("snapshot = %+v", snap)
	}
	assertArgv(t, rec, [][]string{
		{"-L", "sock", "display-message", "-p", "-t", "=loop-a:^.{top-left}", "#{session_name}\t#{pane_tty}\t#{pane_dead}\t#{@the-loop-tag}",
			";", "capture-pane", "-p", "-t", "=loop-a:^.{top-left}"},
	})
}

func TestExitStatus_ReadsStatusOrSignal(t *testing.T) {
	format := "display-message -p -t =loop-a:^.{top-left} #{session_name}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}"
	for _, c := range []struct {
		out  string
		want int
		err  error
	}{
		{"loop-a\t1\t3\t\n", 3, nil},
		{"loop-a\t1\t\t15\n", 143, nil},
		{"loop-a\t0\t\t\n", 0, ErrStillAlive},
		{"\t\t\t\n", 0, ErrNoSession}, // display-message's answer for a missing session
	} {
		rec := newRecorder().on(format, reply{out: c.out})
		r, _ := newTestRunner(t, rec, nil)
		got, err := r.ExitStatus(context.Background(), "loop-a")
		if got != c.want || !errors.Is(err, c.err) && (err != nil || c.err != nil) {
			t.Fatalf("ExitStatus(%q) = %d, %v; want %d, %v", c.out, got, err, c.want, c.err)
		}
	}
}

func TestGuard_RefusesForeignTargetsWithoutCallingTmux(t *testing.T) {
	ctx := context.Background()
	for _, target := range []string{"my-work", "loop", "loop-", "loop-x;rm", "loop-other.session", "loop-other:0.1", "=loop-a", ""} {
		t.Run(target, func(t *testing.T) {
			rec := newRecorder()
			r, _ := newTestRunner(t, rec, &fakeProcs{})
			want := "'" + target + "' is not a the-loop tmux session name"
			errs := map[string]error{
				"SpawnIn":    r.SpawnIn(ctx, target, loop.SpawnSpec{Argv: []string{"h", "x"}}),
				"DeliverTo":  r.DeliverTo(ctx, target, "x", 0),
				"KillTarget": r.KillTarget(ctx, target),
				"WaitReady":  r.WaitReady(ctx, target, func(loop.PaneSnapshot) bool { return true }, time.Second),
			}
			_, errs["Snapshot"] = r.Snapshot(ctx, target)
			_, errs["ExitStatus"] = r.ExitStatus(ctx, target)
			if target != "" { // an empty target is a no-op for terminate (original §2.5)
				errs["TerminateHarnessIn"] = r.TerminateHarnessIn(ctx, target, "standing:x", time.Second)
			}
			for op, err := range errs {
				if loop.ErrorCode(err) != loop.EINVALID || loop.ErrorMessage(err) != want || !errors.Is(err, ErrInvalidTarget) {
					t.Errorf("%s(%q) = %v; want EINVALID %q", op, target, err, want)
				}
			}
			if st := r.State(ctx, target); st != loop.PaneUnknown {
				t.Errorf("State(%q) = %s, want unknown (never asked)", target, st)
			}
			if st := r.States(ctx, []string{target}); st[target] != loop.PaneUnknown {
				t.Errorf("States(%q) = %v, want unknown (never asked)", target, st)
			}
			assertArgv(t, rec, [][]string{})
		})
	}
}

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"plain":                           "plain",
		"a\r\nb\rc\nd":                    "a\nb\nc\nd",
		"tab\tkept":                       "tab\tkept",
		"\x1b[201~end paste\x1b[200~":     "[201~end paste[200~",
		"bell\x07 nul\x00 ^C\x03 del\x7f": "bell nul ^C del",
		"c1\u009b201~ \u0085":             "c1201~ ",
		"bad\xffbyte ❯ ok \ufffd":         "badbyte ❯ ok \ufffd",
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeArg(t *testing.T) {
	cases := map[string]string{"a": "a", "a;": `a\;`, ";": `\;`, `a\;`: `a\\;`, "a;b": "a;b", "": ""}
	for in, want := range cases {
		if got := EscapeArg(in); got != want {
			t.Errorf("EscapeArg(%q) = %q, want %q", in, got, want)
		}
	}
	if got := escapeCwd("/w/#{x};"); got != `/w/##{x}\;` {
		t.Errorf("escapeCwd = %q", got)
	}
}

func TestSpawnIn_RetriesWhenItReachedAnExitingServer(t *testing.T) {
	newSession := "new-session -d -s loop-a -x 200 -y 50 -- sleep 60"
	rec := newRecorder().
		on("has-session -t =loop-a", exit1("no server running on /tmp/tmux-0/sock")).
		on(newSession, exit1("server exited unexpectedly"), reply{})
	r, sl := newTestRunner(t, rec, nil)
	if err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", "x"}}); err != nil {
		t.Fatal(err)
	}
	ns := append([]string{"-L", "sock"}, strings.Fields(newSession)...)
	got := rec.argvs()
	if !reflect.DeepEqual(got[1], ns) || !reflect.DeepEqual(got[2], ns) || len(sl.d) != 1 {
		t.Fatalf("calls %q, sleeps %v; want new-session twice with a pause", got, sl.d)
	}
}

func TestExitStatus_NudgesTmuxToReapWhenTheStatusIsMissing(t *testing.T) {
	format := "display-message -p -t =loop-a:^.{top-left} #{session_name}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}"
	rec := newRecorder().on(format, reply{out: "loop-a\t1\t\t\n"}, reply{out: "loop-a\t1\t0\t\n"})
	r, _ := newTestRunner(t, rec, nil)
	if code, err := r.ExitStatus(context.Background(), "loop-a"); code != 0 || err != nil {
		t.Fatalf("ExitStatus = %d, %v", code, err)
	}
	f := append([]string{"-L", "sock"}, "display-message", "-p", "-t", "=loop-a:^.{top-left}",
		"#{session_name}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}")
	assertArgv(t, rec, [][]string{f, {"-L", "sock", "run-shell", "true"}, f})
}
