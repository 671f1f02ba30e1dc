package http

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/store"
)

// The read side over REST, MCP and the typed client, through the fake
// agent on a private tmux server: the agent writes its Claude-shaped
// transcript under the CLAUDE_CONFIG_DIR it inherits from the service,
// which reads it there.

// saidAndAnswered starts alpha, says text, and waits until the answer to
// it is in the transcript (read over REST); it returns alpha's row.
func saidAndAnswered(t *testing.T, f *fixture, text string) loop.StandingRow {
	t.Helper()
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`); r.status != 200 || !strings.Contains(string(r.body), `"ok":true`) {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	f.agent.WaitForKind(t, "start", 10*time.Second)
	// The boot turn's answer first, so the say is a turn of its own.
	testkit.Eventually(t, func() bool { return len(f.transcript(t, "alpha", "")) >= 2 }, 10*time.Second, "the boot turn's answer")
	res, err := f.client.Standing.Say(t.Context(), loop.StandingSayRequest{Name: "alpha", Text: text, Actor: "ops"})
	if err != nil || !res.Delivered {
		t.Fatalf("say: %+v %v", res, err)
	}
	testkit.Eventually(t, func() bool {
		es := f.transcript(t, "alpha", "")
		return len(es) >= 4 && strings.Contains(es[len(es)-1].Text, text) && es[len(es)-1].Role == loop.RoleAssistant
	}, 10*time.Second, "the answer to the say in the transcript: %+v", f.transcript(t, "alpha", ""))
	row, err := f.client.Standing.Get(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// transcript is GET /standing-sessions/transcript (query: extra
// parameters), failing the test unless it is a 200.
func (f *fixture) transcript(t *testing.T, name, query string) []loop.TranscriptEntry {
	t.Helper()
	r := f.get("/api/v1/standing-sessions/transcript?name=" + name + query)
	if r.status != 200 {
		t.Fatalf("transcript: %d %s", r.status, r.body)
	}
	var res loop.TranscriptResult
	r.decode(t, &res)
	if res.Name != name || res.Entries == nil {
		t.Fatalf("transcript body %s", r.body)
	}
	return res.Entries
}

// checkConversation holds entries to the boot turn and one say, answered.
func checkConversation(t *testing.T, via string, es []loop.TranscriptEntry, said string) {
	t.Helper()
	if len(es) != 4 {
		t.Fatalf("%s: %d entries, want 4: %+v", via, len(es), es)
	}
	roles := []string{es[0].Role, es[1].Role, es[2].Role, es[3].Role}
	if strings.Join(roles, ",") != "user,assistant,user,assistant" {
		t.Fatalf("%s: roles %v", via, roles)
	}
	if !strings.Contains(es[0].Text, "You are **alpha**") || !strings.HasPrefix(es[1].Text, "fake answer to: You are **alpha**") {
		t.Errorf("%s: the boot turn is %q / %.60q", via, es[0].Text[:min(60, len(es[0].Text))], es[1].Text)
	}
	framed := "Message from your operator (ops) to standing session `alpha`:\n\n" + said
	if es[2].Text != framed || es[3].Text != "fake answer to: "+framed {
		t.Errorf("%s: the say is %q, answered %q", via, es[2].Text, es[3].Text)
	}
	if es[3].Usage == nil || es[3].Usage.Output != int64(1+len("fake answer to: "+framed)) || es[2].Usage != nil {
		t.Errorf("%s: usage %+v / %+v", via, es[3].Usage, es[2].Usage)
	}
	for i, e := range es {
		if e.At.IsZero() || i > 0 && e.At.Before(es[i-1].At) {
			t.Errorf("%s: entry %d at %v", via, i, e.At)
		}
	}
}

func TestTranscript_RESTMCPAndClientShowWhatWasSaidAndAnswered(t *testing.T) {
	claudeDir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", claudeDir)
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha", "idle"}})
	row := saidAndAnswered(t, f, "what did you do today?")

	checkConversation(t, "REST", f.transcript(t, "alpha", ""), "what did you do today?")
	if es := f.transcript(t, "alpha", "&last=1"); len(es) != 1 || es[0].Role != loop.RoleAssistant {
		t.Fatalf("last=1: %+v", es)
	}
	res, err := f.client.Standing.Transcript(t.Context(), "alpha", 0)
	if err != nil || res.Name != "alpha" {
		t.Fatalf("client: %+v %v", res, err)
	}
	checkConversation(t, "client", res.Entries, "what did you do today?")

	cs := connectMCP(t, f, nil)
	var viaMCP loop.TranscriptResult
	structured(t, callTool(t, cs, "read_standing_session_transcript", map[string]any{"name": "alpha", "last": 4}), &viaMCP)
	checkConversation(t, "MCP", viaMCP.Entries, "what did you do today?")
	if r := callTool(t, cs, "read_standing_session_transcript", map[string]any{"name": "nobody"}); !r.IsError || !strings.Contains(text(r), "no standing session 'nobody'") {
		t.Fatalf("MCP, an unknown name: %+v %s", r, text(r))
	}

	// Declared, never started: no entries. The file gone, or half-written: fewer entries, no error page.
	if es := f.transcript(t, "idle", ""); len(es) != 0 {
		t.Fatalf("never started: %+v", es)
	}
	path := harness.ClaudeTranscriptPath(claudeDir, row.Cwd, row.HarnessSessionID)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the transcript is not where the-loop computes it: %v", err)
	}
	if err := os.WriteFile(path, append(data, []byte(`{"type":"user","message":{"role":"user","content":"half`)...), 0o600); err != nil {
		t.Fatal(err)
	}
	checkConversation(t, "half-written", f.transcript(t, "alpha", ""), "what did you do today?")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if es := f.transcript(t, "alpha", ""); len(es) != 0 {
		t.Fatalf("a missing file: %+v", es)
	}
}

func TestTranscript_RESTRefusals(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	cases := []struct {
		path   string
		status int
		detail string
	}{
		{"/api/v1/standing-sessions/transcript", 422, "query.name: field required"},
		{"/api/v1/standing-sessions/transcript?name=alpha&last=x", 422, "query.last: expected a positive integer, got 'x'"},
		{"/api/v1/standing-sessions/transcript?name=alpha&last=0", 422, "query.last"},
		{"/api/v1/standing-sessions/transcript?name=alpha&last=5000", 400, "ask for 1 to 1000"},
		{"/api/v1/standing-sessions/transcript?name=nobody", 404, "no standing session 'nobody'"},
		{"/api/v1/standing-sessions/transcript?name=Bad%20Name", 400, "invalid standing-session name"},
		{"/api/v1/standing-sessions/peek", 422, "query.name: field required"},
		{"/api/v1/standing-sessions/peek?name=alpha&lines=-3", 422, "query.lines"},
		{"/api/v1/standing-sessions/peek?name=alpha&lines=2001", 400, "ask for 1 to 2000"},
		{"/api/v1/standing-sessions/peek?name=alpha", 404, "has never been started"},
		{"/api/v1/standing-sessions/peek?name=nobody", 404, "no standing session 'nobody'"},
	}
	for _, c := range cases {
		r := f.get(c.path)
		if r.status != c.status || !strings.Contains(r.detail(t), c.detail) {
			t.Errorf("GET %s: %d %s, want %d with %q", c.path, r.status, r.body, c.status, c.detail)
		}
	}
	// A read is not an api.request.
	if evs := f.events(store.EventQuery{Types: []string{"api.request"}}); len(evs) != 0 {
		t.Fatalf("reads logged: %+v", evs)
	}
}

func TestPeek_RESTAndClientShowTheScreen(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	saidAndAnswered(t, f, "peek at me")
	r := f.get("/api/v1/standing-sessions/peek?name=alpha")
	if r.status != 200 {
		t.Fatalf("peek: %d %s", r.status, r.body)
	}
	var res loop.PeekResult
	r.decode(t, &res)
	screen := strings.Join(res.Lines, "\n")
	if res.Name != "alpha" || res.TmuxTarget != "loop-standing-alpha" || res.TmuxSocket != f.socket || !res.Running ||
		!strings.Contains(screen, "fake answer to: Message from your operator") || !strings.Contains(screen, "❯") || len(res.Lines) > 40 {
		t.Fatalf("peek %+v", res)
	}
	got, err := f.client.Standing.Peek(context.Background(), "alpha", 2)
	if err != nil || len(got.Lines) != 2 || got.Lines[1] != res.Lines[len(res.Lines)-1] {
		t.Fatalf("client peek, 2 lines: %+v %v", got, err)
	}
}
