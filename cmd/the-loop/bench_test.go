package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// benchEnv declares n sessions (s00…) on a private tmux server.
func benchEnv(b *testing.B, n int, probe string, opts ...testkit.AgentOption) *env {
	return benchEnvService(b, n, probe, 0, opts...)
}

// benchEnvService is benchEnv with the service on port (0: disabled).
func benchEnvService(b *testing.B, n int, probe string, port int, opts ...testkit.AgentOption) *env {
	b.Helper()
	e := newEnv(b, opts...)
	var sb strings.Builder
	if port == 0 {
		sb.WriteString("service: {enabled: false}\n")
	} else {
		fmt.Fprintf(&sb, "service: {port: %d}\n", port)
		b.Cleanup(func() { e.run("stop") })
	}
	fmt.Fprintf(&sb, "routing: {tmux: {socketName: %s, resumeProbeSeconds: %s, harnessKillGraceSeconds: 5}}\nstandingSessions:\n  enabled: true\n  sessions:\n", e.socket, probe)
	for i := range n {
		fmt.Fprintf(&sb, "    - {name: s%02d, cwd: %s}\n", i, e.dir)
	}
	e.config(sb.String())
	return e
}

func benchRun(b *testing.B, e *env, args ...string) result {
	b.Helper()
	r := e.run(args...)
	if r.code != 0 {
		b.Fatalf("the-loop %v: %s", args, r)
	}
	return r
}

// cliStats gathers each run's wall time and the child's peak RSS, so a
// benchmark reports medians (ms-median, MiB-maxrss-median) beside the mean.
type cliStats struct {
	wall []time.Duration
	rss  []int64 // KiB
	file string  // where peakrss writes a run's
}

// run execs the-loop once, timing it and reading its peak RSS, through
// peakrss: the rusage of a child this test binary forks would count the
// test binary's own peak as well (internal/testkit/peakrss). The wall time
// includes peakrss's start, a millisecond or so.
func (s *cliStats) run(b *testing.B, e *env, args ...string) string {
	b.Helper()
	cmd := e.command(args...)
	peak := filepath.Join(filepath.Dir(binary), "peakrss")
	if s.file == "" {
		s.file = filepath.Join(b.TempDir(), "rss")
	}
	cmd.Path, cmd.Args = peak, append([]string{peak}, cmd.Args...)
	cmd.Args[1] = binary
	cmd.Env = append(cmd.Env, "PEAKRSS_OUT="+s.file)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	s.wall = append(s.wall, time.Since(start))
	if err != nil {
		b.Fatalf("the-loop %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), errb.String())
	}
	if data, err := os.ReadFile(s.file); err == nil {
		if kib, err := strconv.ParseInt(string(data), 10, 64); err == nil {
			s.rss = append(s.rss, kib) // KiB on Linux
		}
	}
	return out.String()
}

// report adds the medians to the benchmark's output.
func (s *cliStats) report(b *testing.B) {
	b.Helper()
	if len(s.wall) > 0 {
		slices.Sort(s.wall)
		b.ReportMetric(float64(s.wall[len(s.wall)/2])/float64(time.Millisecond), "ms-median")
	}
	if len(s.rss) > 0 {
		slices.Sort(s.rss)
		b.ReportMetric(float64(s.rss[len(s.rss)/2])/1024, "MiB-maxrss-median")
	}
}

// BenchmarkCLIHelp is `the-loop --help`: the cost of starting the binary
// at all (every package init runs). Target ≤ 5 ms wall.
func BenchmarkCLIHelp(b *testing.B) {
	e := newEnv(b)
	var s cliStats
	for b.Loop() {
		if out := s.run(b, e, "--help"); !strings.Contains(out, "standing") {
			b.Fatalf("help:\n%s", out)
		}
	}
	s.report(b)
}

// BenchmarkStandingList50 is `standing list` at 50 running sessions (one
// tmux query), the service down. Target ≤ 15 ms wall and ≤ 15 MiB peak RSS
// a call.
func BenchmarkStandingList50(b *testing.B) {
	e := benchEnv(b, 50, "1")
	benchRun(b, e, "standing", "start")
	var s cliStats
	b.ResetTimer()
	for b.Loop() {
		out := s.run(b, e, "standing", "list")
		if strings.Count(out, "running  yes") != 50 {
			b.Fatalf("list:\n%s", out)
		}
	}
	b.StopTimer()
	s.report(b)
	benchRun(b, e, "standing", "stop")
}

// BenchmarkStandingResume50 resumes 50 stopped sessions with
// resumeProbeSeconds: 1 (probes run concurrently). Target ≤ 3 s.
func BenchmarkStandingResume50(b *testing.B) {
	e := benchEnv(b, 50, "1")
	benchRun(b, e, "standing", "start")
	for b.Loop() {
		b.StopTimer()
		benchRun(b, e, "standing", "stop")
		b.StartTimer()
		r := benchRun(b, e, "standing", "start")
		if n := strings.Count(r.stdout, "  resumed  "); n != 50 { // one outcome column a row
			b.Fatalf("%d resumed:\n%s", n, r)
		}
	}
	b.StopTimer()
	benchRun(b, e, "standing", "stop")
}

// BenchmarkStandingStop50 stops 50 running sessions (each flushes on
// SIGTERM; the grace is 5 s). Target ≤ 2 s beyond the grace.
func BenchmarkStandingStop50(b *testing.B) {
	e := benchEnv(b, 50, "0")
	for b.Loop() {
		b.StopTimer()
		benchRun(b, e, "standing", "start")
		b.StartTimer()
		benchRun(b, e, "standing", "stop")
	}
}

// BenchmarkStandingSay is one `standing say` into a ready agent. Target
// ≤ 200 ms.
func BenchmarkStandingSay(b *testing.B) {
	e := benchEnv(b, 1, "0")
	benchRun(b, e, "standing", "start")
	waitFor(b, "the agent's prompt", func() bool {
		screen, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-s00:")
		return strings.Contains(screen, "❯")
	})
	b.ResetTimer()
	for b.Loop() {
		benchRun(b, e, "standing", "say", "s00", "--text", "ping")
	}
	b.StopTimer()
	benchRun(b, e, "standing", "stop")
}

// BenchmarkStatus50 is `the-loop status` at 50 running sessions, with the
// service down (in-process) and through the service. Target ≤ 15 ms wall.
func BenchmarkStatus50(b *testing.B) {
	b.Run("service-down", func(b *testing.B) {
		e := benchEnv(b, 50, "0")
		benchRun(b, e, "standing", "start")
		var s cliStats
		b.ResetTimer()
		for b.Loop() {
			s.run(b, e, "status")
		}
		b.StopTimer()
		s.report(b)
		benchRun(b, e, "standing", "stop")
	})
	b.Run("via-service", func(b *testing.B) {
		e := benchEnvService(b, 50, "0", freePort(b))
		benchRun(b, e, "start")
		var s cliStats
		b.ResetTimer()
		for b.Loop() {
			s.run(b, e, "status")
		}
		b.StopTimer()
		s.report(b)
	})
}

// BenchmarkServiceRSS reports the service's resident memory idle and with
// 50 standing sessions started through it (target ≤ 30 MB); what it times
// is `standing list` through that service.
func BenchmarkServiceRSS(b *testing.B) {
	e := benchEnvService(b, 50, "0", freePort(b))
	e.config(strings.Replace(readFile(b, e.cfg), "enabled: true", "enabled: false", 1))
	benchRun(b, e, "start")
	idle := rssMB(b, e.servicePID())
	e.config(strings.Replace(readFile(b, e.cfg), "enabled: false", "enabled: true", 1))
	benchRun(b, e, "standing", "start")
	benchRun(b, e, "standing", "list")
	busy := rssMB(b, e.servicePID())
	b.ResetTimer()
	for b.Loop() {
		benchRun(b, e, "standing", "list")
	}
	b.StopTimer()
	b.ReportMetric(idle, "MB-rss-idle")
	b.ReportMetric(busy, "MB-rss-50")
	benchRun(b, e, "stop")
}

func readFile(b *testing.B, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

// rssMB reads VmRSS of pid in MB.
func rssMB(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), &kb)
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
