package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

func framed(text string) string {
	return "Message from your operator (ops) to standing session `supervisor`:\n\n" + text
}

// startReady starts the session and waits until the agent drew its prompt
// and its hooks say it is idle: the boot prompt's turn has ended (its Stop,
// which waits for the answer to reach the transcript, is applied), so a say
// now is submitted, not queued into that turn.
func startReady(t *testing.T, e *env) {
	t.Helper()
	e.must(0, "standing", "start", "supervisor")
	waitFor(t, "the agent's prompt", func() bool {
		screen, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-supervisor:")
		return strings.Contains(screen, "❯")
	})
	waitFor(t, "the agent idle", func() bool {
		r := e.rows()["supervisor"]
		switch r.Activity {
		case "working", "starting":
			return false
		case "idle": // idle after SessionStart comes before the boot turn: wait for its answer
			return r.LastAnswerAt != ""
		}
		return true // a harness without hooks (unknown)
	})
}

func TestStandingSay_DeliversFramedTextOnce(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	startReady(t, e)

	r := e.must(0, "standing", "say", "supervisor", "--text", "status report, please", "--actor", "ops")
	if strings.TrimSpace(r.stdout) != "submitted to loop-standing-supervisor: the agent took it (standing.said)" {
		t.Fatalf("say: %s", r)
	}
	waitFor(t, "the message", func() bool { return len(e.agent.Messages()) == 1 })
	if got := e.agent.Messages(); got[0] != framed("status report, please") {
		t.Fatalf("agent got %q", got)
	}
	evs := e.events("--type", "standing.said")
	if len(evs) != 1 || evs[0].Field("actor") != "ops" || evs[0].Field("tmux_target") != "loop-standing-supervisor" {
		t.Fatalf("events %+v", evs)
	}
	if e.rows()["supervisor"].LastMessageAt == "" {
		t.Fatal("lastMessageAt not set")
	}
}

func TestStandingSay_HostileAndLongTextsArriveWhole(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	startReady(t, e)

	hostile := "line one\r\nline two\x1b[201~typed\x07\x01 keys\rthree\ttab"
	e.must(0, "standing", "say", "supervisor", "--text", hostile, "--actor", "ops")
	long := strings.Repeat("0123456789abcdef", 100*1024/16) // 100 KiB
	e.must(0, "standing", "say", "supervisor", "--text", long, "--actor", "ops")
	huge := strings.Repeat("the quick brown fox jumps over the lazy dog\n", 1<<20/44+1)[:1<<20] // 1 MiB
	file := filepath.Join(e.dir, "huge.txt")
	if err := os.WriteFile(file, []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	e.must(0, "standing", "say", "supervisor", "--text-file", file, "--actor", "ops")
	piped := e.runIn("from stdin", "standing", "say", "supervisor", "--text", "-", "--actor", "ops")
	if piped.code != 0 {
		t.Fatalf("stdin say: %s", piped)
	}

	waitFor(t, "four messages", func() bool { return len(e.agent.Messages()) >= 4 })
	got := e.agent.Messages()
	want := []string{
		framed("line one\nline two[201~typed keys\nthree\ttab"),
		framed(long),
		framed(huge),
		framed("from stdin"),
	}
	if len(got) != len(want) {
		t.Fatalf("agent got %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d: got %d bytes %.80q…, want %d bytes %.80q…", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
}

func TestStandingSay_ConcurrentSaysStaySeparate(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	startReady(t, e)
	texts := []string{strings.Repeat("A", 20000), strings.Repeat("B", 20000)}
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i, text := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.run("standing", "say", "supervisor", "--text", text, "--actor", "ops")
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.code != 0 {
			t.Fatalf("say: %s", r)
		}
	}
	waitFor(t, "two messages", func() bool { return len(e.agent.Messages()) >= 2 })
	got := e.agent.Messages()
	slices.Sort(got)
	if len(got) != 2 || got[0] != framed(texts[0]) || got[1] != framed(texts[1]) {
		t.Fatalf("messages interleaved or lost: %d messages, lengths %d/%d", len(got), len(got[0]), len(got[len(got)-1]))
	}
}

func TestStandingSay_RightAfterStartWaitsForReadiness(t *testing.T) {
	e := newEnv(t, testkit.Delay(1500*time.Millisecond))
	e.config(oneSession)
	e.must(0, "standing", "start", "supervisor")
	r := e.run("standing", "say", "supervisor", "--text", "are you there?", "--actor", "ops")
	switch r.code {
	case 0:
		waitFor(t, "the message", func() bool { return len(e.agent.Messages()) == 1 })
		if got := e.agent.Messages()[0]; got != framed("are you there?") {
			t.Fatalf("agent got %q", got)
		}
	case 1:
		if !strings.Contains(r.stderr, "not ready") {
			t.Fatalf("say failed without saying the agent is not ready: %s", r)
		}
	default:
		t.Fatalf("say: %s", r)
	}
}

func TestStandingSay_NotReadyFailsAndSaysSo(t *testing.T) {
	e := newEnv(t, testkit.Delay(30*time.Second))
	e.config(strings.Replace(oneSession, "resumeProbeSeconds: 1}", "resumeProbeSeconds: 1, readySeconds: 1}", 1))
	e.must(0, "standing", "start", "supervisor")
	r := e.must(1, "standing", "say", "supervisor", "--text", "hello")
	if !strings.Contains(r.stderr, "is not ready for input") || r.stdout != "" {
		t.Fatalf("say: %s", r)
	}
	if n := len(e.events("--type", "standing.said")); n != 0 {
		t.Fatalf("%d standing.said events for an undelivered message", n)
	}
}

// TestStanding_InvalidNameIsACallersMistake: every verb
// refuses an invalid name with exit 2, and none suggests a command that
// cannot work.
func TestStanding_InvalidNameIsACallersMistake(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	for _, args := range [][]string{
		{"standing", "stop", "Bad Name!"},
		{"standing", "start", "Bad Name"},
		{"standing", "restart", "Bad Name"},
		{"standing", "say", "Bad Name", "--text", "hi"},
		{"standing", "delete", "Bad Name"},
		{"events", "--standing", "Bad Name"},
	} {
		r := e.must(2, args...)
		if !strings.Contains(r.stderr, "invalid standing-session name '"+args[2]+"'") || strings.Contains(r.stderr, "the-loop standing") {
			t.Errorf("%v: %s", args, r)
		}
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("an invalid name spawned: %d starts", n)
	}
}

func TestStandingSay_Refusals(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	r := e.must(1, "standing", "say", "supervisor", "--text", "hi")
	if !strings.Contains(r.stderr, "the-loop standing start supervisor") {
		t.Fatalf("unstarted: %s", r)
	}
	e.must(0, "standing", "start")
	// The fake logs its start after its SessionStart hook has run: a stop
	// before that would leave no start to count.
	waitFor(t, "the agent", func() bool { return len(e.starts()) == 1 })
	e.must(0, "standing", "stop")
	r = e.must(1, "standing", "say", "supervisor", "--text", "hi")
	if !strings.Contains(r.stderr, "the-loop standing start supervisor") {
		t.Fatalf("stopped: %s", r)
	}
	e.must(2, "standing", "say", "supervisor", "--text", "   \n ")
	// Only control characters is empty too.
	if r := e.must(2, "standing", "say", "supervisor", "--text", "\x1b\x07\u009b\u200f\x7f \t"); !strings.Contains(r.stderr, "the message is empty") {
		t.Fatalf("control characters only: %s", r)
	}
	e.must(2, "standing", "say", "supervisor")
	e.must(1, "standing", "say", "nobody", "--text", "hi")
	if n := len(e.starts()); n != 1 {
		t.Fatalf("say spawned: %d starts", n)
	}
}

// TestEvents_TextEscapesTerminalControlsJSONKeepsThem: an
// actor carrying an OSC 52 sequence (it would write the operator's
// clipboard) and a bidi override is printed escaped by the events table and
// by an error message, and exactly by --format json.
func TestEvents_TextEscapesTerminalControlsJSONKeepsThem(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	startReady(t, e)
	actor := "ops\x1b]52;c;aGk=\x07\u202e\u009b"
	e.must(0, "standing", "say", "supervisor", "--text", "hi", "--actor", actor)

	r := e.must(0, "events", "--type", "standing.said")
	if strings.ContainsAny(r.stdout, "\x1b\x07\u202e\u009b") || !strings.Contains(r.stdout, `actor=ops\x1b]52;c;aGk=\x07\u202e\u009b`) {
		t.Fatalf("events table:\n%q", r.stdout)
	}
	if evs := e.events("--type", "standing.said"); len(evs) != 1 || evs[0].Field("actor") != actor {
		t.Fatalf("JSON events %+v, want the actor exact", evs)
	}
	r = e.must(2, "standing", "stop", "x\x1b]52;c;aGk=\x07")
	if strings.ContainsAny(r.stderr, "\x1b\x07") || !strings.Contains(r.stderr, `'x\x1b]52;c;aGk=\x07'`) {
		t.Fatalf("error message: %q", r.stderr)
	}
}

// TestStandingSay_DeliveryLockLivesUnderTheStateRoot: the
// delivery lock is <state.root>/local/locks/…, never in $TMPDIR, so a CLI
// and a service with different TMPDIRs serialise and no other user can
// pre-create it.
func TestStandingSay_DeliveryLockLivesUnderTheStateRoot(t *testing.T) {
	e := newEnv(t)
	tmp := t.TempDir()
	e.extraEnv = append(e.extraEnv, "TMPDIR="+tmp)
	e.config(oneSession)
	startReady(t, e)
	e.must(0, "standing", "say", "supervisor", "--text", "hi")
	locks, _ := filepath.Glob(filepath.Join(e.dir, ".the-loop", "local", "locks", "*-loop-standing-supervisor.lock"))
	if len(locks) != 1 {
		t.Fatalf("delivery locks under the state root: %v", locks)
	}
	if fi, err := os.Stat(filepath.Dir(locks[0])); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("lock dir: %v %v", fi, err)
	}
	if stray, _ := filepath.Glob(filepath.Join(tmp, "the-loop-tmux-locks-*")); len(stray) != 0 {
		t.Fatalf("a lock dir in $TMPDIR: %v", stray)
	}
}

// A say into a ready agent is three tmux calls: one look at the pane (the
// session's state, its tag and its screen, together), the paste and the
// submit key — the two calls a delivery needs and its readiness check.
func TestStandingSay_IsOneLookAndTheDeliverysTwoTmuxCalls(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	startReady(t, e)
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	wrapper := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> '%s'\nexec '%s' \"$@\"\n", calls, tmux)
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	e.path = dir + string(os.PathListSeparator) + e.path
	e.must(0, "standing", "say", "supervisor", "--text", "one look", "--actor", "ops")
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatalf("the say ran no tmux call through the wrapper: %v", err)
	}
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(got) != 3 || !strings.Contains(got[0], "display-message") || !strings.Contains(got[0], "capture-pane") ||
		!strings.Contains(got[1], "paste-buffer") || !strings.Contains(got[2], "paste-buffer") {
		t.Fatalf("a say's tmux calls (%d), want the look, the paste and the submit:\n%s", len(got), data)
	}
}
