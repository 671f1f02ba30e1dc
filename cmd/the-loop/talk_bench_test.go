package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// talkBench is n sessions (s00…) with hooks, every one's boot turn ended.
func talkBench(b *testing.B, n, port int) *env {
	b.Helper()
	e := benchEnvService(b, n, "0", port)
	e.extraEnv = append(e.extraEnv, "CLAUDE_CONFIG_DIR="+filepath.Join(e.dir, "claude-config"))
	benchRun(b, e, "standing", "start")
	if port != 0 {
		benchRun(b, e, "start")
	}
	e.waitIdle(b)
	return e
}

// waitIdle waits until every session is idle after its last turn.
func (e *env) waitIdle(b *testing.B) {
	b.Helper()
	idle := func() bool {
		for _, r := range e.rows() {
			if r.Activity != loop.ActivityIdle || r.LastAnswerAt == "" {
				return false
			}
		}
		return true
	}
	testkitEventually(b, idle, func() string {
		var busy []string
		for _, r := range e.rows() {
			if r.Activity != loop.ActivityIdle || r.LastAnswerAt == "" {
				busy = append(busy, r.Name+":"+string(r.Activity))
			}
		}
		for _, ev := range e.events("--type", "hook.*") {
			busy = append(busy, fmt.Sprintf("%s %v", ev.Event, ev.Fields))
		}
		for _, en := range e.agent.Entries("hook") {
			if en.Code != 0 || en.Error != "" {
				busy = append(busy, fmt.Sprintf("hook %s: %d %s", en.Event, en.Code, en.Error))
			}
		}
		return strings.Join(busy, " ")
	})
}

// BenchmarkTalkSayIdle50 is one verified `standing say` into an idle agent
// at 50 sessions, service down: the CLI's wall time until the outcome
// (submitted) is known. Target p50 ≤ 120 ms.
func BenchmarkTalkSayIdle50(b *testing.B) {
	e := talkBench(b, 50, 0)
	var stats cliStats
	b.ResetTimer()
	for b.Loop() {
		out := stats.run(b, e, "standing", "say", "s00", "--text", "ping")
		if !strings.Contains(out, "submitted") {
			b.Fatalf("say: %s", out)
		}
		b.StopTimer()
		waitFor(b, "s00 idle", func() bool { return e.rows()["s00"].Activity == loop.ActivityIdle })
		b.StartTimer()
	}
	b.StopTimer()
	stats.report(b)
}

// BenchmarkTalkStopToAnswer is the time from the Stop hook's end (the
// fake agent's log) to the answer printed by `say --wait`, service down.
// Target p50 ≤ 50 ms.
func BenchmarkTalkStopToAnswer(b *testing.B) {
	e := talkBench(b, 1, 0)
	var lags []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		text := fmt.Sprintf("question %d", i)
		cmd := e.command("standing", "say", "s00", "--text", text, "--wait", "--timeout", "20s")
		stdout, _ := cmd.StdoutPipe()
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		rd := bufio.NewReader(stdout)
		line, _ := rd.ReadString('\n')
		printed := time.Now()
		rest, _ := io.ReadAll(rd)
		line += string(rest)
		if err := cmd.Wait(); err != nil || !strings.Contains(line, text) {
			b.Fatalf("say --wait: %q %v %s", line, err, errb.String())
		}
		// The Stop fires right after the fake writes the answer's transcript entry.
		var stop time.Time
		data, _ := os.ReadFile(filepath.Join(e.dir, "claude-config", "projects", testkit.ClaudeProjectDir(e.dir), e.rows()["s00"].HarnessSessionID+".jsonl"))
		for _, en := range jsonLines(data) {
			if en["type"] == "assistant" && strings.Contains(fmt.Sprint(en["message"]), text) {
				stop, _ = time.Parse(time.RFC3339Nano, fmt.Sprint(en["timestamp"]))
			}
		}
		if stop.IsZero() {
			b.Fatal("no answer in the transcript")
		}
		lags = append(lags, printed.Sub(stop))
		b.StopTimer()
		waitFor(b, "s00 idle", func() bool { return e.rows()["s00"].Activity == loop.ActivityIdle })
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lags)
	b.ReportMetric(float64(lags[len(lags)/2])/float64(time.Millisecond), "ms-p50")
}

// BenchmarkTalkConcurrentREST50 is 50 concurrent REST says, one to each
// of 50 sessions, through the service. Target ≤ 1.5 s for all.
func BenchmarkTalkConcurrentREST50(b *testing.B) {
	port := freePort(b)
	e := talkBench(b, 50, port)
	token := e.token()
	url := fmt.Sprintf("http://127.0.0.1:%d/api/v1/standing-sessions/say", port)
	hc := bearerClient(token)
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make(chan string, 50)
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("s%02d", i), "text": "ping"})
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(req)
				if err != nil {
					errs <- err.Error()
					return
				}
				defer resp.Body.Close()
				var res loop.SayResult
				_ = json.NewDecoder(resp.Body).Decode(&res)
				if res.Outcome != loop.SaySubmitted && res.Outcome != loop.SayQueued {
					errs <- fmt.Sprintf("s%02d: %d %+v", i, resp.StatusCode, res)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			b.Fatal(msg)
		}
		b.StopTimer()
		// Every turn ends (a hook is applied once, even one spooled after
		// a POST that timed out) before the next round's says.
		waitFor(b, "every session idle", e.allIdle)
		b.StartTimer()
	}
}

// allIdle reports whether every session is idle.
func (e *env) allIdle() bool {
	for _, r := range e.rows() {
		if r.Activity != loop.ActivityIdle {
			return false
		}
	}
	return true
}

// testkitEventually polls cond for 30 s, failing with what() when it never holds.
func testkitEventually(b *testing.B, cond func() bool, what func() string) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("not every session is idle: %s", what())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// jsonLines decodes one JSON object a line, skipping what does not decode.
func jsonLines(data []byte) []map[string]any {
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}
