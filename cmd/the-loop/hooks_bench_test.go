package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// hookBench is a started standing session with the agent's credential and
// conversation id, for timing `the-loop hook` as Claude Code runs it.
type hookBench struct {
	e     *env
	id    string
	token string
}

func newHookBench(b *testing.B, service bool) *hookBench {
	b.Helper()
	e := newEnv(b)
	yaml := oneSession
	if service {
		port := freePort(b)
		yaml = strings.Replace(hookServiceConfig, "%PORT%", fmt.Sprint(port), 1)
		b.Cleanup(func() { e.run("stop") })
	}
	e.config(yaml)
	if service {
		benchRun(b, e, "start")
	} else {
		benchRun(b, e, "standing", "start", "supervisor")
	}
	start := e.agent.WaitForKind(b, "start", 10*time.Second)
	var row loop.StandingRow
	waitFor(b, "the boot turn", func() bool { row = e.rows()["supervisor"]; return row.LastAnswerAt != "" })
	return &hookBench{e: e, id: row.HarnessSessionID, token: start.Env[credential.AgentTokenEnv]}
}

// hook execs one hook invocation of form (hookForms), returning its wall
// time.
func (h *hookBench) hook(b *testing.B, form string, fields map[string]any) time.Duration {
	b.Helper()
	fields["session_id"] = h.id
	fields["transcript_path"] = "/dev/null"
	fields["cwd"] = h.e.dir
	payload, _ := json.Marshal(fields)
	cmd := hookCommand(form, filepath.Join(h.e.dir, ".the-loop"))
	cmd.Env = append(filterEnv(os.Environ(), "HOME"), "HOME="+h.e.home, credential.AgentTokenEnv+"="+h.token)
	cmd.Stdin = strings.NewReader(string(payload))
	began := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v", form, err)
	}
	return time.Since(began)
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	ms := func(q float64) float64 {
		return float64(d[min(len(d)-1, int(q*float64(len(d))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.50), "ms-p50")
	b.ReportMetric(ms(0.99), "ms-p99")
}

// BenchmarkHookInvocation times one hook (exec of the built hook program,
// program, or of `the-loop hook`, cli; a PostToolUse payload) with the
// service up (POST /api/v1/hooks) and down (the program hands over to
// `the-loop hook`, which writes the store directly). Target: the program
// with the service up, p50 ≤ 4 ms.
func BenchmarkHookInvocation(b *testing.B) {
	for _, service := range []bool{true, false} {
		name := map[bool]string{true: "service-up", false: "service-down"}[service]
		b.Run(name, func(b *testing.B) {
			h := newHookBench(b, service)
			for _, form := range hookForms {
				b.Run(map[string]string{"the-loop-hook": "program", "the-loop hook": "cli"}[form], func(b *testing.B) {
					var took []time.Duration
					for b.Loop() {
						took = append(took, h.hook(b, form, map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash",
							"tool_input": map[string]any{"command": "ls"}, "tool_response": strings.Repeat("out ", 200)}))
					}
					b.StopTimer()
					reportPercentiles(b, took)
				})
			}
		})
	}
}

// BenchmarkHookToList measures how long after a hook returns its activity
// shows in `standing list` (target ≤ 100 ms): the hook is applied before
// it returns, so what remains is one list.
func BenchmarkHookToList(b *testing.B) {
	for _, service := range []bool{true, false} {
		name := map[bool]string{true: "service-up", false: "service-down"}[service]
		b.Run(name, func(b *testing.B) {
			h := newHookBench(b, service)
			var seen []time.Duration
			i := 0
			b.ResetTimer()
			for b.Loop() {
				i++
				want, fields := loop.ActivityWorking, map[string]any{"hook_event_name": "UserPromptSubmit", "prompt_id": fmt.Sprint("bench-", i), "prompt": "go"}
				if i%2 == 0 {
					want, fields = loop.ActivityIdle, map[string]any{"hook_event_name": "Stop", "prompt_id": fmt.Sprint("bench-", i-1), "last_assistant_message": "done"}
				}
				h.hook(b, "the-loop-hook", fields)
				returned := time.Now()
				for {
					if h.e.rows()["supervisor"].Activity == want {
						break
					}
				}
				seen = append(seen, time.Since(returned))
			}
			b.StopTimer()
			reportPercentiles(b, seen)
		})
	}
}

// BenchmarkHookFromAPane is a hook as an agent runs it: from below its own
// tmux pane, with the service up, so the service places the sender by its
// pane (hearing.AgentOfProcess) before it applies the payload. Each
// iteration types a message into the agent; the figure is how long its
// UserPromptSubmit hook command ran, the agent waiting (the stand-in
// times it). Target: p50 ≤ 4 ms.
func BenchmarkHookFromAPane(b *testing.B) {
	e := benchEnvService(b, 1, "1", freePort(b), testkit.Delay(0), testkit.TurnTime(0))
	benchRun(b, e, "start")
	waitFor(b, "the boot turn's Stop", func() bool { return len(hookRuns(e, "Stop")) >= 1 })
	var took []time.Duration
	for b.Loop() {
		n := len(hookRuns(e, "Stop"))
		if _, err := e.tmux("send-keys", "-t", "=loop-standing-s00:", "-l", "ping"); err != nil {
			b.Fatal(err)
		}
		if _, err := e.tmux("send-keys", "-t", "=loop-standing-s00:", "Enter"); err != nil {
			b.Fatal(err)
		}
		waitFor(b, "the turn's Stop", func() bool { return len(hookRuns(e, "Stop")) > n })
	}
	b.StopTimer()
	for _, h := range hookRuns(e, "UserPromptSubmit") {
		took = append(took, time.Duration(h.Micros)*time.Microsecond)
	}
	reportPercentiles(b, took)
}

// hookRuns are the stand-in's hook entries of event.
func hookRuns(e *env, event string) []testkit.Entry {
	var out []testkit.Entry
	for _, h := range e.agent.Entries("hook") {
		if h.Event == event {
			out = append(out, h)
		}
	}
	return out
}
