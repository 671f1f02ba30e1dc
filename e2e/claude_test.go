package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The real Claude Code, driven through the-loop's CLI: start boots a
// conversation whose id the-loop chose, a say reaches it as a new turn once
// the real screen reads as ready, the transcript holds both prompts, and
// after stop a start resumes the same conversation.
func TestRealClaude_StartSayStopResume(t *testing.T) {
	w := setup(t)
	began := time.Now()

	w.must("start")
	row := w.row()
	if !row.Running || row.Harness != "claude" || row.HarnessSessionID == "" {
		t.Fatalf("after start: %+v", row)
	}
	id := row.HarnessSessionID
	if argv := w.argv(); !slices.Contains(argv, "--session-id") || !slices.Contains(argv, id) {
		t.Fatalf("the pane runs %q, want a fresh conversation --session-id %s", argv, id)
	}

	// Said at once: the say waits until the real screen reads as ready,
	// else the typed text would be lost and no turn would carry it.
	const msg = "e2e-say-one: what is two plus two?"
	w.must("standing", "say", session, "--text", msg, "--actor", "e2e")
	t.Logf("start → say delivered: %v", time.Since(began))

	boot := w.turn("the boot prompt to reach the fake API", bootBrief)
	if boot.SessionID != id || !boot.Stream {
		t.Fatalf("boot turn: session id header %q (want %s), stream %v", boot.SessionID, id, boot.Stream)
	}
	say := w.turn("the say to reach the fake API as a turn", msg)
	if say.SessionID != id {
		t.Fatalf("say turn: session id header %q, want %s", say.SessionID, id)
	}
	if turns := w.api.Turns(); len(turns) != 2 {
		t.Fatalf("%d turns, want the boot turn and the say's", len(turns))
	}
	eventually(t, "the say's answer on the screen", func() bool {
		return strings.Contains(w.screen(), "answer to: Message from your operator (e2e)")
	})
	t.Logf("start → say answered: %v", time.Since(began))

	path := w.claude.TranscriptPath(w.cwd, id)
	eventually(t, "the transcript "+path+" to hold both prompts", func() bool {
		users := userTexts(w.transcript(id))
		return len(users) >= 2 && strings.Contains(users[0], bootBrief) && strings.Contains(users[len(users)-1], msg)
	})

	stopped := time.Now()
	w.must("stop")
	if row := w.row(); row.Running {
		t.Fatalf("after stop: %+v", row)
	}
	if pid := w.panePID(); pid != 0 {
		t.Fatalf("after stop a pane still runs pid %d", pid)
	}
	t.Logf("stop: %v", time.Since(stopped))

	before := len(w.api.Turns())
	w.must("start")
	row = w.row()
	if !row.Running || row.HarnessSessionID != id {
		t.Fatalf("after the second start: %+v, want conversation %s resumed", row, id)
	}
	if argv := w.argv(); !slices.Contains(argv, "--resume") || !slices.Contains(argv, id) {
		t.Fatalf("the pane runs %q, want --resume %s", argv, id)
	}
	eventually(t, "a turn of the resumed conversation", func() bool { return len(w.api.Turns()) > before })
	if next := w.api.Turns()[before]; next.SessionID != id {
		t.Fatalf("the resumed turn carries session id %q, want %s", next.SessionID, id)
	}
	const msg2 = "e2e-say-two: and three plus three?"
	w.must("standing", "say", session, "--text", msg2, "--actor", "e2e")
	if got := w.turn("the say after resume", msg2); got.SessionID != id {
		t.Fatalf("say after resume: session id header %q, want %s", got.SessionID, id)
	}
	eventually(t, "the transcript to keep the first conversation and append to it", func() bool {
		users := userTexts(w.transcript(id))
		return len(users) >= 4 && strings.Contains(users[1], msg) && strings.Contains(users[len(users)-1], msg2)
	})
	t.Logf("whole test: %v", time.Since(began))
}

// A say into a turn that is still running (the fake API holds its answer)
// is delivered: the real CLI queues it and answers it in a turn of its own
// once the running turn ends.
func TestRealClaude_SayDuringBusyTurnIsQueued(t *testing.T) {
	w := setup(t)
	w.api.Hold(0)
	defer w.api.Release()

	w.must("start")
	id := w.row().HarnessSessionID
	w.turn("the held boot turn", bootBrief)
	const msg = "e2e-busy: are you there?"
	w.must("standing", "say", session, "--text", msg, "--actor", "e2e")
	eventually(t, "the say queued on the screen", func() bool {
		return strings.Contains(w.screen(), "Queued")
	})
	if n := len(w.api.Turns()); n != 1 {
		t.Fatalf("%d turns while the boot turn is held, want 1", n)
	}
	w.api.Release()
	if got := w.turn("the queued say as a turn of its own", msg); got.SessionID != id {
		t.Fatalf("queued say: session id header %q, want %s", got.SessionID, id)
	}
}
