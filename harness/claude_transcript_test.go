package harness_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

func TestClaudeTranscriptPath(t *testing.T) {
	got := harness.ClaudeTranscriptPath("/cfg", "/home/u/my_repo.v2/é😀", "abc")
	if want := "/cfg/projects/-home-u-my-repo-v2----/abc.jsonl"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestClaudeConfigDir(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if d, err := harness.ClaudeConfigDir(getenv, "/h"); err != nil || d != "/h/.claude" {
		t.Fatalf("without CLAUDE_CONFIG_DIR: %q, %v", d, err)
	}
	env["CLAUDE_CONFIG_DIR"] = "/c"
	if d, err := harness.ClaudeConfigDir(getenv, "/h"); err != nil || d != "/c" {
		t.Fatalf("with CLAUDE_CONFIG_DIR: %q, %v", d, err)
	}
}

// tl builds one transcript line.
func tl(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b) + "\n"
}

func userLine(text, ts string) string {
	return tl(map[string]any{"type": "user", "promptId": "p", "timestamp": ts, "sessionId": "s", "uuid": "u",
		"message": map[string]any{"role": "user", "content": text}})
}

func assistantLine(id, text, ts string, out int) string {
	return tl(map[string]any{"type": "assistant", "timestamp": ts, "message": map[string]any{"id": id, "role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": text}},
		"usage":   map[string]any{"input_tokens": 3, "output_tokens": out, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 7}}})
}

func writeFile(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func ts(sec int) string { return fmt.Sprintf("2026-12-01T10:00:%02d.000Z", sec) }

func at(sec int) time.Time { return time.Date(2026, 12, 1, 10, 0, sec, 0, time.UTC) }

func TestReadClaudeTranscript_JoinsAMessagesPartsAndSkipsWhatIsNotText(t *testing.T) {
	content := tl(map[string]any{"type": "file-history-snapshot", "snapshot": map[string]any{}}) +
		userLine("first", ts(1)) +
		tl(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "x"}}) +
		assistantLine("msg_1", "one", ts(2), 1) +
		tl(map[string]any{"type": "assistant", "timestamp": ts(3), "message": map[string]any{"id": "msg_1", "role": "assistant",
			"content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{}}}}}) +
		tl(map[string]any{"type": "user", "timestamp": ts(4), "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "out"}}}}) +
		assistantLine("msg_1", "two", ts(5), 9) +
		"this is not json\n" +
		tl(map[string]any{"type": "queue-operation", "operation": "enqueue", "content": "queued"}) +
		tl(map[string]any{"type": "queue-operation", "operation": "dequeue"}) +
		userLine("second", ts(6)) +
		assistantLine("msg_2", "answer two", ts(7), 4) +
		tl(map[string]any{"type": "last-prompt", "lastPrompt": "second"}) +
		`{"type":"assistant","message":{"id":"msg_3","content":[{"type":"text","text":"half wri`
	path := writeFile(t, content)
	u1 := &loop.TokenUsage{Input: 3, Output: 9, CacheRead: 5, CacheWrite: 7}
	u2 := &loop.TokenUsage{Input: 3, Output: 4, CacheRead: 5, CacheWrite: 7}
	all := []loop.TranscriptEntry{
		{Role: "user", Text: "first", At: at(1)},
		{Role: "assistant", Text: "one\n\ntwo", At: at(5), Usage: u1},
		{Role: "user", Text: "second", At: at(6)},
		{Role: "assistant", Text: "answer two", At: at(7), Usage: u2},
	}
	for n := 0; n <= 5; n++ {
		got, err := harness.ReadClaudeTranscript(path, n)
		if err != nil {
			t.Fatal(err)
		}
		want := all[max(0, len(all)-n):]
		if n == 0 {
			want = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("last %d:\n got %+v\nwant %+v", n, got, want)
		}
	}
}

func TestReadClaudeTranscript_AMissingFileIsEmpty(t *testing.T) {
	got, err := harness.ReadClaudeTranscript(filepath.Join(t.TempDir(), "none.jsonl"), 20)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestReadClaudeTranscript_LinesLongerThanAChunkAndManyChunks(t *testing.T) {
	long := strings.Repeat("x", 200*1024)
	var b strings.Builder
	for i := 0; i < 300; i++ {
		b.WriteString(userLine(fmt.Sprintf("q%d", i), ts(i%60)))
		b.WriteString(assistantLine(fmt.Sprintf("msg_%d", i), fmt.Sprintf("a%d", i), ts(i%60), i))
		b.WriteString(tl(map[string]any{"type": "attachment", "pad": strings.Repeat("p", 1000)}))
	}
	b.WriteString(userLine(long, ts(1)))
	b.WriteString(assistantLine("msg_long", "p1", ts(2), 1))
	b.WriteString(assistantLine("msg_long", long, ts(3), 2))
	got, err := harness.ReadClaudeTranscript(writeFile(t, b.String()), 5)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range got {
		texts = append(texts, e.Text)
	}
	want := []string{"q299", "a299", long, "p1\n\n" + long}
	if len(texts) != 5 || !reflect.DeepEqual(texts[1:], want) || texts[0] != "a298" {
		t.Fatalf("got %d entries, first %q", len(texts), texts[:min(len(texts), 2)])
	}
}

// BenchmarkReadClaudeTranscript_Last20Of50MB reads the last 20 entries of
// a 50 MB transcript (issue 17: ≤ 50 ms).
func BenchmarkReadClaudeTranscript_Last20Of50MB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	pad := strings.Repeat("lorem ipsum ", 40)
	var size int64
	for i := 0; size < 50<<20; i++ {
		chunk := userLine(fmt.Sprintf("question %d %s", i, pad), ts(i%60)) +
			tl(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "todo", "content": pad}}) +
			assistantLine(fmt.Sprintf("msg_%d", i), "part one "+pad, ts(i%60), 10) +
			assistantLine(fmt.Sprintf("msg_%d", i), "part two "+pad, ts(i%60), 20) +
			tl(map[string]any{"type": "last-prompt", "lastPrompt": "question"})
		n, err := f.WriteString(chunk)
		if err != nil {
			b.Fatal(err)
		}
		size += int64(n)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		got, err := harness.ReadClaudeTranscript(path, 20)
		if err != nil || len(got) != 20 {
			b.Fatalf("got %d entries, %v", len(got), err)
		}
	}
}

func TestReadClaudeTranscript_ReadsTheFakeAgentsTranscript(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.TurnTime(10*time.Millisecond), testkit.Answer("a: {prompt}\n\nb"))
	cwd := t.TempDir()
	cmd := exec.Command(agent.Path(), "--session-id", "s-1", "--", "hello")
	cmd.Dir = cwd
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	path := harness.ClaudeTranscriptPath(agent.ConfigDir(), cwd, "s-1")
	var got []loop.TranscriptEntry
	testkit.Eventually(t, func() bool {
		got, err = harness.ReadClaudeTranscript(path, 20)
		return err == nil && len(got) == 2
	}, 10*time.Second, "transcript entries %+v, %v", got, err)
	if got[0].Role != "user" || got[0].Text != "hello" || got[1].Role != "assistant" || got[1].Text != "a: hello\n\nb" ||
		got[1].Usage == nil || got[1].Usage.Output == 0 || got[0].At.IsZero() {
		t.Fatalf("entries %+v", got)
	}
	_ = stdin.Close()
}
