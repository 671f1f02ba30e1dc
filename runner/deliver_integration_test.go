package runner_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// hostileText is everything a say text must not be able to do: close the
// bracketed paste, type control keys, carry CRLF, and be large.
func hostileText() string {
	var b strings.Builder
	b.WriteString("first line\r\nsecond\rthird\x1b[201~typed after the paste?\r")
	b.WriteString("\x1b[200~ \x03 ctrl-c \x04 ctrl-d \x1b ESC \x7f del \x00 nul \x1a\ttab\n")
	for b.Len() < 100*1024 {
		b.WriteString("0123456789 the quick brown fox jumps over the lazy dog ❯ ;\n")
	}
	b.WriteString("last line;")
	return b.String()
}

func TestDeliverTo_HostileTextArrivesAsOneSanitisedMessage(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	agent := testkit.FakeAgent(t, testkit.Delay(100*time.Millisecond))
	spawnFake(t, r, "loop-standing-say", agent)
	waitReady(t, r, "loop-standing-say")

	text := hostileText()
	if err := r.DeliverTo(context.Background(), "loop-standing-say", text, 0); err != nil {
		t.Fatal(err)
	}
	msgs := messagesBefore(t, r, "loop-standing-say", agent)
	want := runner.Sanitize(text)
	if len(msgs) != 1 || msgs[0] != want {
		t.Fatalf("got %d messages (of %v bytes), want one of %d bytes equal to Sanitize(text)", len(msgs), sizes(msgs), len(want))
	}
	if strings.ContainsAny(msgs[0], "\x1b\x03\r") {
		t.Fatal("control characters reached the agent")
	}
}

func TestDeliverTo_ConcurrentDeliveriesArriveWhole(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, newRunner(t, socket), "loop-standing-busy", agent)
	waitReady(t, newRunner(t, socket), "loop-standing-busy")

	texts := []string{strings.Repeat("alpha ", 4000), strings.Repeat("omega\n", 4000), "short one"}
	var wg sync.WaitGroup
	errs := make([]error, len(texts))
	for i, text := range texts {
		wg.Add(1)
		go func() { // each with its own runner, as separate processes would
			defer wg.Done()
			errs[i] = newRunner(t, socket).DeliverTo(context.Background(), "loop-standing-busy", text, 0)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() bool { return len(agent.Messages()) >= len(texts) }, 15*time.Second,
		"messages: %d", len(agent.Messages()))
	got := map[string]bool{}
	for _, m := range agent.Messages() {
		got[m] = true
	}
	for _, text := range texts {
		if !got[text] {
			t.Fatalf("a delivery did not arrive whole; got %d messages of sizes %v", len(agent.Messages()), sizes(agent.Messages()))
		}
	}
}

// endMarker is the last message messagesBefore delivers.
const endMarker = "end of the messages"

// messagesBefore delivers endMarker to target, waits until the agent has
// logged it and returns the messages logged before it. The fake logs each
// message as its terminal hands it over, in order, so once the marker is
// in the log so is everything delivered before it: a message split in two,
// or one that should have been discarded, is among them.
func messagesBefore(t *testing.T, r *runner.Tmux, target string, agent *testkit.Agent) []string {
	t.Helper()
	if err := r.DeliverTo(context.Background(), target, endMarker, 0); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() bool { return slices.Contains(agent.Messages(), endMarker) }, 15*time.Second,
		"the end marker never arrived; messages: %d", len(agent.Messages()))
	msgs := agent.Messages()
	return msgs[:slices.Index(msgs, endMarker)]
}

func sizes(ms []string) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = len(m)
	}
	return out
}

func TestDeliverTo_AfterWaitReadyReachesAnAgentStillStarting(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	agent := testkit.FakeAgent(t, testkit.Delay(time.Second))
	spawnFake(t, r, "loop-standing-slow", agent)
	started := agent.WaitForKind(t, "start", 10*time.Second)

	snap, err := r.Snapshot(context.Background(), "loop-standing-slow")
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Canonical || strings.Contains(snap.Screen, "❯") || testkit.FakeReady(snap) {
		t.Fatalf("a starting agent looks ready: %+v", snap)
	}
	waitReady(t, r, "loop-standing-slow")
	if at, _ := time.Parse(time.RFC3339Nano, started.Time); time.Since(at) < 900*time.Millisecond {
		t.Fatalf("WaitReady returned %v after start, before the agent's 1s start-up", time.Since(at))
	}
	if err := r.DeliverTo(context.Background(), "loop-standing-slow", "hello after waiting", 0); err != nil {
		t.Fatal(err)
	}
	if m := agent.WaitForKind(t, "message", 10*time.Second); m.Text != "hello after waiting" {
		t.Fatalf("message = %q", m.Text)
	}
}

func TestDeliverTo_WithoutWaitingInputTypedDuringStartUpIsLost(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	agent := testkit.FakeAgent(t, testkit.Delay(time.Second))
	spawnFake(t, r, "loop-standing-early", agent)
	agent.WaitForKind(t, "start", 10*time.Second)

	if err := r.DeliverTo(context.Background(), "loop-standing-early", "typed too early", 0); err != nil {
		t.Fatal(err)
	}
	waitReady(t, r, "loop-standing-early")
	if err := r.DeliverTo(context.Background(), "loop-standing-early", "typed on time", 0); err != nil {
		t.Fatal(err)
	}
	if got := messagesBefore(t, r, "loop-standing-early", agent); len(got) != 1 || got[0] != "typed on time" {
		t.Fatalf("messages = %q; want only the one delivered after readiness (the early one discarded)", got)
	}
}

func TestWaitReady_FailsWhenThePromptDoesNotComeUp(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	agent := testkit.FakeAgent(t, testkit.Delay(30*time.Second))
	spawnFake(t, r, "loop-standing-stuck", agent)

	begin := time.Now()
	// The context never ends: only the 300ms timeout can make WaitReady
	// give up, and it must, long before the agent's 30s start-up is over.
	err := r.WaitReady(context.Background(), "loop-standing-stuck", testkit.FakeReady, 300*time.Millisecond)
	want := "the agent in loop-standing-stuck is not ready for input after 0.3s (its prompt is not up); nothing was delivered"
	if !errors.Is(err, runner.ErrNotReady) || loop.ErrorMessage(err) != want {
		t.Fatalf("WaitReady = %v, want %q", err, want)
	}
	if took := time.Since(begin); took < 300*time.Millisecond {
		t.Fatalf("WaitReady gave up after %v, before its 300ms timeout", took)
	}
	if snap, err := r.Snapshot(context.Background(), "loop-standing-stuck"); err != nil || testkit.FakeReady(snap) {
		t.Fatalf("the agent's prompt is up (%v): WaitReady waited for it instead of its timeout", err)
	}
}

func TestWaitReady_FailsAtOnceWhenTheAgentExited(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	if err := r.SpawnIn(context.Background(), "loop-gone", loop.SpawnSpec{Argv: []string{"sh", "-c", "printf '❯ '; exit 1"}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, r, "loop-gone", loop.PaneDead)
	err := r.WaitReady(context.Background(), "loop-gone", testkit.FakeReady, 10*time.Second)
	if !errors.Is(err, runner.ErrAgentExited) {
		t.Fatalf("WaitReady = %v, want ErrAgentExited", err)
	}
	err = r.WaitReady(context.Background(), "loop-never", testkit.FakeReady, 10*time.Second)
	if loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("WaitReady on a missing session = %v, want ENOTFOUND", err)
	}
}

func TestDeliverTo_LeavesCopyModeFirst(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-standing-scroll", agent)
	waitReady(t, r, "loop-standing-scroll")
	if _, err := testkit.TmuxRun(socket, "copy-mode", "-t", "=loop-standing-scroll:"); err != nil {
		t.Fatal(err)
	}
	if err := r.DeliverTo(context.Background(), "loop-standing-scroll", "while scrolling", 0); err != nil {
		t.Fatal(err)
	}
	if m := agent.WaitForKind(t, "message", 10*time.Second); m.Text != "while scrolling" {
		t.Fatalf("message = %q", m.Text)
	}
	if mode, _ := testkit.TmuxRun(socket, "display-message", "-p", "-t", "=loop-standing-scroll:", "#{pane_in_mode}"); mode != "0" {
		t.Fatalf("pane_in_mode = %q after delivery", mode)
	}
	if bufs, _ := testkit.TmuxRun(socket, "list-buffers"); bufs != "" {
		t.Fatalf("deliveries left tmux buffers behind: %q", bufs)
	}
}
