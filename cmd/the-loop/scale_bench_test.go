package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// BenchmarkScale is the scale figures: start-all from nothing (fresh) and
// resumed, stop-all and one verified say, at 10, 50 and 200 standing
// sessions, on this machine as it is (quiet) and with a CPU hog on every
// core (hog: one `yes` a core). The agent is the stand-in firing Claude
// Code's hooks as the real CLI does (SessionStart at boot, UserPromptSubmit
// and Stop each turn, each hook command run and waited for), its delays
// fixed here: 300 ms start-up, 50 ms a turn; resumeProbeSeconds 1, the kill
// grace 5 s. Each figure reports failed-rows beside its time; after each
// stop no agent process and no loop-standing-* tmux session may be left
// (the benchmark fails if one is). service-up runs the verbs through the
// service (its hooks posted to it), service-down in the CLI's own process
// (each hook handed to `the-loop hook`, which writes the store itself).
func BenchmarkScale(b *testing.B) {
	for _, load := range []string{"quiet", "hog"} {
		for _, service := range []string{"service-up", "service-down"} {
			for _, n := range []int{10, 50, 200} {
				b.Run(fmt.Sprintf("%s/%s/%d", load, service, n), func(b *testing.B) {
					if load == "hog" {
						hog(b)
					}
					scale(b, n, service == "service-up")
				})
			}
		}
	}
}

// scale runs the four figures at n sessions, each once (a start-all at 200
// takes seconds: one run is the figure); with service, through a service
// whose own start starts none of them (autoStart false).
func scale(b *testing.B, n int, service bool) {
	opts := []testkit.AgentOption{testkit.Delay(300 * time.Millisecond), testkit.TurnTime(50 * time.Millisecond)}
	var e *env
	if service {
		e = benchEnvService(b, n, "1", freePort(b), opts...)
		e.config(strings.ReplaceAll(readFile(b, e.cfg), ", cwd: ", ", autoStart: false, cwd: "))
		benchRun(b, e, "start")
	} else {
		e = benchEnv(b, n, "1", opts...)
	}
	b.Run("start-fresh", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			forget(b, e, n, service)
			b.StartTimer()
			failedRows(b, e, n, "started", "standing", "start").report(b)
		}
	})
	b.Run("start-resume", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			stopAll(b, e, n)
			b.StartTimer()
			failedRows(b, e, n, "resumed", "standing", "start").report(b)
		}
	})
	b.Run("say", func(b *testing.B) {
		name := fmt.Sprintf("s%02d", n/2)
		waitFor(b, "the agent's prompt", func() bool {
			screen, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-"+name+":")
			return strings.Contains(screen, "❯")
		})
		for b.Loop() {
			benchRun(b, e, "standing", "say", name, "--text", "ping")
		}
	})
	b.Run("stop", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			benchRun(b, e, "standing", "start")
			b.StartTimer()
			stopAll(b, e, n).report(b)
		}
	})
}

// stopAll stops every session, counting failed rows, and fails the
// benchmark when an agent or a tmux session is left.
func stopAll(b *testing.B, e *env, n int) rows {
	b.Helper()
	r := failedRows(b, e, n, "stopped", "standing", "stop")
	b.StopTimer()
	defer b.StartTimer()
	if out, err := e.tmux("list-sessions", "-F", "#{session_name}"); err == nil && strings.Contains(out, "loop-standing-") {
		b.Fatalf("tmux sessions left after a stop:\n%s", out)
	}
	for _, pid := range e.agent.Pids() {
		if !testkit.ProcessGone(pid) {
			b.Fatalf("agent process %d left after a stop", pid)
		}
	}
	return r
}

// forget stops every session and removes the state root, so the next
// start is from nothing: no record, no conversation to resume (a service
// is stopped around it and started again).
func forget(b *testing.B, e *env, n int, service bool) {
	b.Helper()
	stopAll(b, e, n)
	if service {
		benchRun(b, e, "stop")
	}
	if err := os.RemoveAll(filepath.Join(e.dir, ".the-loop")); err != nil {
		b.Fatal(err)
	}
	if service {
		benchRun(b, e, "start")
	}
}

// failedRows runs the verb and returns how many of its rows failed (and
// logs them) and how many are neither failed nor want.
func failedRows(b *testing.B, e *env, n int, want string, args ...string) rows {
	b.Helper()
	r := e.run(args...)
	failed, other := 0, 0
	var bad []string
	for _, line := range strings.Split(r.stdout+r.stderr, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "s") {
			continue
		}
		switch {
		case f[1] == "failed":
			failed++
			bad = append(bad, line)
		case f[1] != want:
			other++
			bad = append(bad, line)
		}
	}
	if len(bad) > 0 {
		b.Logf("the-loop %v: %d of %d rows failed, %d not %s:\n%s", args, failed, n, other, want, strings.Join(bad, "\n"))
	}
	return rows{failed, other}
}

// rows counts a verb's rows that failed and those neither failed nor what
// it should have done.
type rows struct{ failed, other int }

// report reports a timed verb's failed-rows and other-rows.
func (r rows) report(b *testing.B) {
	b.ReportMetric(float64(r.failed), "failed-rows")
	b.ReportMetric(float64(r.other), "other-rows")
}

// hog runs `yes` on every core until the benchmark ends.
func hog(b *testing.B) {
	b.Helper()
	for range runtime.NumCPU() {
		cmd := exec.Command("yes")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}
