package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// serviceLog is <state.root>/logs/service.log as it is now.
func (e *env) serviceLog() string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.dir, ".the-loop", "logs", "service.log"))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

// logHas waits until the service log holds a line with every one of parts.
func (e *env) logHas(parts ...string) {
	e.t.Helper()
	waitFor(e.t, fmt.Sprintf("a service.log line with %q", parts), func() bool {
		for _, line := range strings.Split(e.serviceLog(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				return true
			}
		}
		return false
	})
}

// crashedAndResumed starts the service and the session, kills the agent
// and waits for the supervisor's resume.
func crashedAndResumed(t *testing.T) *env {
	e := supervisedEnv(t, "", "")
	first := e.startedOnce()
	if err := e.agent.WriteTranscript(first.SessionID, "boot"); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(first.Pid, syscall.SIGKILL)
	e.waitEvent("standing.resumed", 15*time.Second)
	return e
}

func TestServiceLog_RecordsExitsRestartsAndSpawnFailures(t *testing.T) {
	e := crashedAndResumed(t)
	e.logHas("event=standing.started", "standing=supervisor")
	e.logHas("level=WARN", "event=standing.exited", "standing=supervisor", "signal=SIGKILL")
	e.logHas("event=standing.restarting", "attempt=1")
	e.logHas("event=standing.resumed", "standing=supervisor")
	e.must(0, "standing", "stop", "supervisor")
	e.logHas("event=standing.stopped", "standing=supervisor")
	// The service re-reads the changed config: the next start cannot find
	// the harness binary.
	e.config(strings.Replace(strings.NewReplacer("%PORT%", fmt.Sprint(e.port), "%RESTART%", "", "%ENTRY%", "").Replace(supervised),
		"routing: {tmux:", "routing: {harnessBinaries: {claude: /nonexistent/claude}, tmux:", 1))
	e.must(1, "standing", "start", "supervisor")
	e.logHas("level=ERROR", "event=standing.spawn_failed", "standing=supervisor", "/nonexistent/claude")
}

func TestLogs_InterleavesTheServiceLogAndTheEvents(t *testing.T) {
	e := crashedAndResumed(t)
	for _, r := range []result{e.must(0, "logs"), e.must(0, "logs", "--lines", "200")} {
		out := r.stdout
		listening := strings.Index(out, "service      | level=INFO msg=\"the-loop service listening\"")
		exited := strings.Index(out, "supervisor   | standing.exited ")
		resumed := strings.Index(out, "supervisor   | standing.resumed ")
		if listening < 0 || exited < 0 || resumed < 0 || !(listening < exited && exited < resumed) {
			t.Fatalf("logs: the service's start, then the exit, then the resume:\n%s", out)
		}
		if strings.Contains(out, "session event") {
			t.Fatalf("logs repeats the service log's copies of the events:\n%s", out)
		}
		// The resumed turn's events follow standing.resumed, as in the log.
		if turn := strings.Index(out[exited:], "supervisor   | standing.turn_started "); turn < 0 || exited+turn < resumed {
			t.Fatalf("logs: the resumed turn before standing.resumed:\n%s", out)
		}
		if lines := strings.Split(strings.TrimSpace(out), "\n"); !timeOrdered(serviceLines(lines)) {
			t.Fatalf("logs: the service log's lines are not in time order:\n%s", out)
		}
	}
	if out := e.must(0, "logs", "--lines", "2").stdout; strings.Count(out, "\n") != 2 {
		t.Fatalf("--lines 2:\n%s", out)
	}
	one := e.must(0, "logs", "supervisor").stdout
	if strings.Contains(one, "the-loop service listening") || !strings.Contains(one, "supervisor   | standing.started ") {
		t.Fatalf("logs supervisor:\n%s", one)
	}
	e.must(0, "stop")
	if out := e.must(0, "logs").stdout; !strings.Contains(out, "standing.exited") || !strings.Contains(out, "the-loop service shutting down") {
		t.Fatalf("logs without the service:\n%s", out)
	}
}

// serviceLines are the lines of `logs` that come from the service log.
func serviceLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, " service      | ") {
			out = append(out, l)
		}
	}
	return out
}

// timeOrdered reports whether each line's leading timestamp is no earlier
// than the one before.
func timeOrdered(lines []string) bool {
	var prev time.Time
	for _, l := range lines {
		stamp, _, _ := strings.Cut(l, " ")
		at, err := time.Parse(loop.TimeFormat, stamp)
		if err != nil || at.Before(prev) {
			return false
		}
		prev = at
	}
	return true
}

func TestLogs_FollowsTheServiceLogAndTheEvents(t *testing.T) {
	e := supervisedEnv(t, "", "")
	e.startedOnce()
	cmd := e.command("logs", "-f", "--lines", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			seen = append(seen, sc.Text())
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	saw := func(part string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, l := range seen {
				if strings.Contains(l, part) {
					return true
				}
			}
			return false
		}
	}
	e.must(0, "standing", "stop", "supervisor")
	testkit.Eventually(t, saw("supervisor   | standing.stopped "), 15*time.Second, "the stop's event, followed")
	f, err := os.OpenFile(filepath.Join(e.dir, ".the-loop", "logs", "service.log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "time=%s level=WARN msg=\"a line the test appended\"\n", time.Now().UTC().Format(time.RFC3339Nano))
	f.Close()
	testkit.Eventually(t, saw("service      | level=WARN msg=\"a line the test appended\""), 15*time.Second, "the appended service-log line, followed")
	mu.Lock()
	defer mu.Unlock()
	for _, l := range seen {
		if strings.Contains(l, "session event") {
			t.Fatalf("a copy of an event: %q", l)
		}
	}
}
