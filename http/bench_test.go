package http

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/sdk"
)

// sleepAgent is a harness binary that ignores its arguments and idles: a
// live pane that costs nothing.
func sleepAgent(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\nexec sleep 3600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runningFixture is a fixture with n declared sessions, all started.
func runningFixture(t testing.TB, n int) *fixture {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("s%02d", i)
	}
	f := newFixture(t, fixtureOptions{sessions: names, agentBin: sleepAgent(t)})
	res, err := f.client.Standing.Control(context.Background(), loop.StandingControlRequest{Name: "", Verb: "start", AutoOnly: false})
	if err != nil || !res.OK || len(res.Sessions) != n {
		t.Fatalf("starting %d sessions: ok=%v %v", n, res.OK, err)
	}
	return f
}

// quantile returns the q-quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*q))]
}

// listClients is B2's number of concurrent clients.
const listClients = 16

// BenchmarkListStandingSessions is B2's target: GET /standing-sessions at
// 50 sessions (real tmux, live panes) with 16 concurrent clients, ≥ 2,000
// req/s on 2 cores. It reports req/s and latency quantiles. The requests go
// through the fixture's plain client: the contract check of the REST tests
// would be measured otherwise.
func BenchmarkListStandingSessions(b *testing.B) {
	f := runningFixture(b, 50)
	url := f.url + "/api/v1/standing-sessions"
	get := func() error {
		resp, err := f.plain.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	if err := get(); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	lat := make([][]time.Duration, listClients)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range listClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := get(); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(quantile(all, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(quantile(all, 0.99).Microseconds())/1000, "p99-ms")
}

// BenchmarkSayToStandingSession measures say through REST (p50/p99): the
// fake agent is ready at once, so this is the service's own cost plus the
// paste and the submit delay (20 ms in the fixture).
func BenchmarkSayToStandingSession(b *testing.B) {
	f := newFixture(b, fixtureOptions{sessions: []string{"alpha"}})
	ctx := context.Background()
	if res, err := f.client.Standing.Control(ctx, loop.StandingControlRequest{Name: "alpha", Verb: "start", AutoOnly: false}); err != nil || !res.OK {
		b.Fatalf("start: %+v %v", res, err)
	}
	client := sdk.New(f.url, sdk.WithHTTPClient(f.plain), sdk.WithToken(""))
	// The first say waits for the agent to come up: measure the ones after.
	if res, err := client.Standing.Say(ctx, loop.StandingSayRequest{Name: "alpha", Text: "warm-up", Actor: "bench"}); err != nil || !res.Delivered {
		b.Fatalf("say: %+v %v", res, err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := client.Standing.Say(ctx, loop.StandingSayRequest{Name: "alpha", Text: fmt.Sprintf("message %d", i), Actor: "bench"})
		if err != nil || !res.Delivered {
			b.Fatalf("say: %+v %v", res, err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(quantile(lat, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(quantile(lat, 0.99).Microseconds())/1000, "p99-ms")
}

// TestStanding_LivenessFollowsTmuxWithinASecond: the liveness cache may be
// stale for at most its ttl; a pane killed behind the service's back reads
// not running within 1 s (B2).
func TestStanding_LivenessFollowsTmuxWithinASecond(t *testing.T) {
	f := runningFixture(t, 3)
	rows, err := f.client.Standing.List(t.Context())
	if err != nil || !rows[1].Running {
		t.Fatalf("rows %+v %v", rows, err)
	}
	if _, err := testkit.TmuxRun(f.socket, "kill-session", "-t", "=loop-standing-s01"); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	testkit.Eventually(t, func() bool {
		rows, err := f.client.Standing.List(t.Context())
		return err == nil && !rows[1].Running && rows[0].Running
	}, time.Second, "s01 still reads running")
	t.Logf("seen not running after %v", time.Since(killed).Round(time.Millisecond))
}
