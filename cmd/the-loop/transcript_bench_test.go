package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/harness"
)

// BenchmarkStandingTranscript50MB is `standing transcript --last 20` on a
// 50 MB transcript, the service down (the store opened in-process): the
// file is read from its end, so the cost follows the 20 entries, not the
// size. Target ≤ 50 ms wall a call.
func BenchmarkStandingTranscript50MB(b *testing.B) {
	e := benchEnv(b, 1, "1")
	claudeDir := withClaudeDir(e)
	benchRun(b, e, "standing", "start", "s00")
	waitFor(b, "the boot turn's answer", func() bool {
		return strings.Count(e.run("standing", "transcript", "s00", "--format", "json").stdout, `"role"`) >= 2
	})
	benchRun(b, e, "standing", "stop", "s00")
	rows := e.rows()
	path := harness.ClaudeTranscriptPath(claudeDir, rows["s00"].Cwd, rows["s00"].HarnessSessionID)
	tail, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	// 50 MB of a long conversation before the real one: prompts, answers
	// in two parts, and the other lines Claude Code writes between them.
	var buf bytes.Buffer
	text := strings.Repeat("a line of an answer that goes on for a while. ", 20)
	for i := 0; buf.Len() < 50<<20; i++ {
		for _, l := range []map[string]any{
			{"type": "user", "timestamp": "2026-07-22T06:31:20.000Z", "message": map[string]any{"role": "user", "content": fmt.Sprintf("prompt %d: %s", i, text)}},
			{"type": "attachment", "attachment": map[string]any{"type": "todo_reminder", "content": []any{}}},
			{"type": "assistant", "timestamp": "2026-07-22T06:31:21.000Z", "message": map[string]any{"id": fmt.Sprintf("msg_%d", i), "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": text}}, "usage": map[string]any{"input_tokens": 10, "output_tokens": 20}}},
			{"type": "assistant", "timestamp": "2026-07-22T06:31:22.000Z", "message": map[string]any{"id": fmt.Sprintf("msg_%d", i), "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": text}}, "usage": map[string]any{"input_tokens": 10, "output_tokens": 40}}},
			{"type": "last-prompt", "lastPrompt": "prompt"},
		} {
			data, _ := json.Marshal(l)
			buf.Write(append(data, '\n'))
		}
	}
	buf.Write(tail)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	size := buf.Len()
	buf = bytes.Buffer{}
	tail = nil
	debug.FreeOSMemory() // the children's peak RSS must not count this test's 50 MB
	var s cliStats
	b.ResetTimer()
	for b.Loop() {
		out := s.run(b, e, "standing", "transcript", "s00", "--last", "20", "--format", "json")
		if n := strings.Count(out, `"role"`); n != 20 || !strings.Contains(out, "fake answer to: ") {
			b.Fatalf("%d entries:\n%.400s", n, out)
		}
	}
	b.StopTimer()
	s.report(b)
	b.ReportMetric(float64(size)/(1<<20), "MiB-transcript")
}
