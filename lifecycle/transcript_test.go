package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// readingHarness is the fake harness with a transcript: it answers what
// it was asked for, and records the cwd and conversation id it was given.
type readingHarness struct {
	fakeHarness
	asked *[]string
}

func (readingHarness) ReadsTranscripts() bool { return true }

func (h readingHarness) ReadTranscript(cwd, id string, n int) ([]loop.TranscriptEntry, error) {
	*h.asked = append(*h.asked, cwd+"|"+id)
	out := []loop.TranscriptEntry{{Role: loop.RoleUser, Text: "boot", At: time.Unix(1, 0).UTC()}, {Role: loop.RoleAssistant, Text: "ok"}}
	if n < len(out) {
		out = out[len(out)-n:]
	}
	return out, nil
}

func TestTranscript_ReadsTheRecordedConversation(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	var asked []string
	s.Harness = func(string, string) (loop.Harness, error) { return readingHarness{asked: &asked}, nil }
	cfg := testConfig(t, "supervisor", "idle")
	ctx := context.Background()

	// Declared but never started: nothing to show yet, no error.
	res, err := s.TranscriptStanding(ctx, cfg, "idle", 0)
	if err != nil || res.Name != "idle" || res.Entries == nil || len(res.Entries) != 0 || len(asked) != 0 {
		t.Fatalf("never started: %+v, %v (asked %v)", res, err, asked)
	}
	start, err := s.StartStanding(ctx, cfg, "supervisor", false)
	if err != nil || !start.OK {
		t.Fatalf("start: %+v %v", start, err)
	}
	row := start.Sessions[0]
	res, err = s.TranscriptStanding(ctx, cfg, "supervisor", 1)
	if err != nil || len(res.Entries) != 1 || res.Entries[0].Text != "ok" {
		t.Fatalf("last 1: %+v, %v", res, err)
	}
	if want := row.Cwd + "|" + row.HarnessSessionID; len(asked) != 1 || asked[0] != want {
		t.Fatalf("read %v, want %q", asked, want)
	}
	// A stopped session's conversation still reads.
	if _, err := s.StopStanding(ctx, cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	if res, err = s.TranscriptStanding(ctx, cfg, "supervisor", 0); err != nil || len(res.Entries) != 2 {
		t.Fatalf("after stop: %+v, %v", res, err)
	}
}

func TestTranscript_Refusals(t *testing.T) {
	s := newTestService(t, newFakeRunner())
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	cases := []struct {
		name string
		last int
		code string
		want string
	}{
		{"nobody", 0, loop.ENOTFOUND, "no standing session 'nobody'"},
		{"Bad Name", 0, loop.EINVALID, "invalid standing-session name"},
		{"supervisor", -1, loop.EINVALID, "ask for 1 to 1000"},
		{"supervisor", MaxTranscriptLast + 1, loop.EINVALID, "ask for 1 to 1000"},
		// fakeHarness reads no transcript: refused, naming the harness.
		{"supervisor", 0, loop.EINVALID, "runs the claude harness, whose transcript the-loop cannot read"},
	}
	for _, c := range cases {
		_, err := s.TranscriptStanding(ctx, cfg, c.name, c.last)
		if loop.ErrorCode(err) != c.code || !strings.Contains(loop.ErrorMessage(err), c.want) {
			t.Errorf("transcript %q last %d: %v, want %s containing %q", c.name, c.last, err, c.code, c.want)
		}
	}
}

func TestPeek_ShowsTheAgentsOwnPaneOnly(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	if _, err := s.PeekStanding(ctx, cfg, "supervisor", 0); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("peek before a start: %v", err)
	}
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	res, err := s.PeekStanding(ctx, cfg, "supervisor", 0)
	if err != nil || res.TmuxTarget != "loop-standing-supervisor" || !res.Running || len(res.Lines) != 1 || res.Lines[0] != "❯ " {
		t.Fatalf("peek: %+v, %v", res, err)
	}
	for _, n := range []int{-1, MaxPeekLines + 1} {
		if _, err := s.PeekStanding(ctx, cfg, "supervisor", n); loop.ErrorCode(err) != loop.EINVALID {
			t.Errorf("peek %d lines: %v", n, err)
		}
	}
	r.Mu.Lock()
	r.Tags["loop-standing-supervisor"] = "" // someone else's session under the name
	r.Mu.Unlock()
	if _, err := s.PeekStanding(ctx, cfg, "supervisor", 0); loop.ErrorCode(err) != loop.ENOTFOUND ||
		!strings.Contains(loop.ErrorMessage(err), "not the agent the-loop started") {
		t.Fatalf("peek at a usurped name: %v", err)
	}
	_ = r.KillTarget(ctx, "loop-standing-supervisor")
	if _, err := s.PeekStanding(ctx, cfg, "supervisor", 0); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("peek without a tmux session: %v", err)
	}
}
