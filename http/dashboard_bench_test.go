package http

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// The dashboard's performance targets.

// BenchmarkDashboardRows: the overview's rows (GET /standing-sessions with
// the dashboard's session secret) at 50 running sessions, one request at a time;
// target ≤ 10 ms. The time is the round trip on loopback, an upper bound of
// the server's.
func BenchmarkDashboardRows(b *testing.B) {
	f := runningFixture(b, 50)
	secret := f.login()
	get := func() error {
		req, _ := http.NewRequest(http.MethodGet, f.url+"/api/v1/standing-sessions", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || strings.Count(string(body), `"name"`) != 50 {
			return fmt.Errorf("status %d, %d bytes", resp.StatusCode, len(body))
		}
		return nil
	}
	if err := get(); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := get(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(quantile(lat, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(quantile(lat, 0.99).Microseconds())/1000, "p99-ms")
}

// BenchmarkStreamLatency: from appending an event (its commit included) to
// the stream's message about it; target ≤ 100 ms.
func BenchmarkStreamLatency(b *testing.B) {
	f := newFixture(b, fixtureOptions{agentBin: sleepAgent(b)})
	s := f.openStream(b, "")
	s.next(b) // ready
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench.change%d", i)
		t0 := time.Now()
		if err := f.svc.Emit(loop.Event{TS: time.Now().UTC(), Source: "bench", Event: name, Level: loop.LevelInfo, PID: 1}); err != nil {
			b.Fatal(err)
		}
		for {
			m := s.next(b)
			if m.event == "event" && strings.Contains(m.data, `"event":"`+name+`"`) {
				break
			}
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(quantile(lat, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(quantile(lat, 0.99).Microseconds())/1000, "p99-ms")
}

// BenchmarkDashboardIdle: ten open overview pages, each with its own
// stream (pages of one browser share one; ten browsers do not), while
// nothing changes; target ≤ 2 % of one core. It reports this process's CPU
// (the service and the ten idle clients) over 5 s per iteration.
func BenchmarkDashboardIdle(b *testing.B) {
	f := newFixture(b, fixtureOptions{agentBin: sleepAgent(b), extra: "service:\n  stream:\n    maxSubscribers: 16\n"})
	for range 10 {
		s := f.openStream(b, "")
		s.next(b)
		go func() { _, _ = io.Copy(io.Discard, s.resp.Body) }()
	}
	if n := f.server.hub.subscribers(); n != 10 {
		b.Fatalf("%d subscribers", n)
	}
	const window = 5 * time.Second
	var total float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := cpuTime(b)
		t0 := time.Now()
		time.Sleep(window) // measuring idleness: nothing to wait for but time
		total += float64(cpuTime(b)-before) / float64(time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(100*total/float64(b.N), "cpu-%")
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
