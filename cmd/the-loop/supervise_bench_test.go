package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// supervisedBench is n sessions under the service, restarted after every
// kill with the first delay (resetSeconds 0, a burst never reached).
func supervisedBench(b *testing.B, n int) *env {
	b.Helper()
	e := newEnv(b)
	e.port = freePort(b)
	var sb strings.Builder
	fmt.Fprintf(&sb, "state: {root: .the-loop}\nservice: {port: %d}\n", e.port)
	fmt.Fprintf(&sb, "routing: {tmux: {socketName: %s, resumeProbeSeconds: 1, harnessKillGraceSeconds: 3}}\n", e.socket)
	sb.WriteString("standingSessions:\n  enabled: true\n  restart: {resetSeconds: 0, burst: 100000}\n  sessions:\n")
	for i := range n {
		fmt.Fprintf(&sb, "    - {name: s%02d, cwd: %s}\n", i, e.dir)
	}
	e.config(sb.String())
	b.Cleanup(func() {
		e.run("stop")
		if pid := e.servicePID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	benchRun(b, e, "start")
	testkit.Eventually(b, func() bool { return len(e.starts()) == n }, 60*time.Second, "%d agents", n)
	return e
}

// BenchmarkSupervise_ExitAndRestart kills the agent b.N times: ms-exit is
// from the SIGKILL to standing.exited's stamp (the bound: 2 s);
// ms-after-delay from the end of the restart's delay (standing.restarting's
// stamp plus its delay) to the new agent's start (the bound: 1 s).
func BenchmarkSupervise_ExitAndRestart(b *testing.B) {
	e := supervisedBench(b, 1)
	var exit, after []time.Duration
	seen := 0
	for b.Loop() {
		starts := e.starts()
		cur := starts[len(starts)-1]
		if err := e.agent.WriteTranscript(cur.SessionID, "boot"); err != nil {
			b.Fatal(err)
		}
		killed := time.Now()
		_ = syscall.Kill(cur.Pid, syscall.SIGKILL)
		testkit.Eventually(b, func() bool { return len(e.starts()) == len(starts)+1 }, 15*time.Second, "the restart")
		next := e.starts()[len(starts)]
		evs := e.events("--standing", "s00", "--type", "standing.exited", "--type", "standing.restarting")
		var exited, restarting *loop.Event
		for i := seen; i < len(evs); i++ {
			switch evs[i].Event {
			case "standing.exited":
				exited = &evs[i]
			case "standing.restarting":
				restarting = &evs[i]
			}
		}
		seen = len(evs)
		if exited == nil || restarting == nil {
			b.Fatalf("events %v", eventNames(evs))
		}
		exit = append(exit, exited.TS.Sub(killed))
		delay, _ := strconv.ParseFloat(fmt.Sprint(restarting.Field("delay_seconds")), 64)
		spawnedAt, err := time.Parse(time.RFC3339Nano, next.Time)
		if err != nil {
			b.Fatal(err)
		}
		after = append(after, spawnedAt.Sub(restarting.TS.Add(time.Duration(delay*float64(time.Second)))))
		testkit.Eventually(b, func() bool { return len(e.events("--standing", "s00", "--type", "standing.resumed")) == len(exit) }, 15*time.Second, "resumed")
	}
	b.ReportMetric(msMax(exit), "ms-exit-max")
	b.ReportMetric(msMax(after), "ms-after-delay-max")
}

func msMax(ds []time.Duration) float64 {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return float64(m) / float64(time.Millisecond)
}

// BenchmarkSupervise_IdleCost50 measures the service with 50 idle
// supervised sessions over THE_LOOP_BENCH_IDLE_SECONDS (default 60): its
// CPU time (own, and with the tmux clients it ran) as a share of one core,
// and its resident set.
func BenchmarkSupervise_IdleCost50(b *testing.B) {
	window := 60 * time.Second
	if s, err := strconv.Atoi(os.Getenv("THE_LOOP_BENCH_IDLE_SECONDS")); err == nil && s > 0 {
		window = time.Duration(s) * time.Second
	}
	e := supervisedBench(b, 50)
	pid := e.servicePID()
	if pid == 0 {
		b.Fatal("no service")
	}
	for b.Loop() {
		own0, all0 := cpuTicks(b, pid)
		t0 := time.Now()
		time.Sleep(window)
		own1, all1 := cpuTicks(b, pid)
		secs := time.Since(t0).Seconds()
		b.ReportMetric(100*float64(own1-own0)/100/secs, "%cpu-own")
		b.ReportMetric(100*float64(all1-all0)/100/secs, "%cpu-with-children")
	}
	rss, hwm := memKiB(b, pid)
	b.ReportMetric(float64(rss)/1024, "MiB-rss")
	b.ReportMetric(float64(hwm)/1024, "MiB-rss-peak")
}

// cpuTicks reads utime+stime, and with cutime+cstime, of pid (clock ticks,
// 100 a second on Linux).
func cpuTicks(b *testing.B, pid int) (own, all int64) {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	// Fields after the command: state is 0, utime 11, stime 12, cutime 13, cstime 14.
	own = n(11) + n(12)
	return own, own + n(13) + n(14)
}

// memKiB reads VmRSS and VmHWM of pid.
func memKiB(b *testing.B, pid int) (rss, hwm int64) {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var v int64
		if strings.HasPrefix(line, "VmRSS:") {
			fmt.Sscan(strings.TrimPrefix(line, "VmRSS:"), &v)
			rss = v
		}
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Sscan(strings.TrimPrefix(line, "VmHWM:"), &v)
			hwm = v
		}
	}
	return rss, hwm
}
