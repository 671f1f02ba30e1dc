package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
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

	// The hooks (through the service's route: `start` runs it) heard both
	// turns: idle again, the last answer's time, the turn events, tokens.
	idle := w.waitRow("idle after the say's turn, its answer heard", func(r loop.StandingRow) bool {
		return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" && len(w.events("standing.turn_ended")) >= 2
	})
	if starts := w.hooksOf("SessionStart", id); len(starts) != 1 || starts[0].Source != "startup" {
		t.Fatalf("SessionStart payloads %+v, want one of source startup", starts)
	}
	checkTurns(t, w, 2, 1, "service") // the say may come during the boot turn
	// Each turn's Stop counts its own answer's usage (input 10 a request).
	if idle.Tokens.Input != 10*int64(len(w.api.Turns())) || idle.Tokens.Output == 0 {
		t.Fatalf("token totals %+v after %d answered turns with usage (input 10 each)", idle.Tokens, len(w.api.Turns()))
	}
	t.Logf("tokens after the boot turn and the say: %+v", idle.Tokens)

	path := w.claude.TranscriptPath(w.cwd, id)
	eventually(t, "the transcript "+path+" to hold both prompts", func() bool {
		users := userTexts(w.transcript(id))
		return len(users) >= 2 && strings.Contains(users[0], bootBrief) && strings.Contains(users[len(users)-1], msg)
	})

	// `standing transcript` shows the boot turn, the say and the fake
	// API's answers, oldest first, each answer with its usage.
	checkTranscript(t, w, []string{bootBrief, msg})

	stopped := time.Now()
	w.must("stop")
	if row := w.row(); row.Running {
		t.Fatalf("after stop: %+v", row)
	}
	if pid := w.panePID(); pid != 0 {
		t.Fatalf("after stop a pane still runs pid %d", pid)
	}
	t.Logf("stop: %v", time.Since(stopped))
	if row := w.row(); row.Activity != loop.ActivityExited {
		t.Fatalf("after stop: activity %q, want exited", row.Activity)
	}
	if ends := w.hooksOf("SessionEnd", id); len(ends) > 0 {
		t.Logf("SessionEnd on stop: reason %q", ends[len(ends)-1].Reason)
	} else {
		t.Logf("no SessionEnd on stop")
	}

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
	starts := w.hooksOf("SessionStart", id)
	if len(starts) != 2 || starts[1].Source != "resume" {
		t.Fatalf("SessionStart payloads %+v, want a second one of source resume", starts)
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
	w.waitRow("idle after the say after resume", func(r loop.StandingRow) bool {
		return r.Activity == loop.ActivityIdle && len(w.events("standing.turn_ended")) >= 4
	})
	checkTurns(t, w, 4, 2, "service")
	// resumePrompt defaults to notice: the resume sends a short notice, not the brief again.
	checkTranscript(t, w, []string{bootBrief, msg, "the-loop resumed this conversation", msg2})
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
	// The queued message's UserPromptSubmit carries the running turn's
	// prompt id: no turn of its own starts yet.
	eventually(t, "the queued say's UserPromptSubmit", func() bool { return len(w.hooksOf("UserPromptSubmit", id)) == 2 })
	if subs := w.hooksOf("UserPromptSubmit", id); subs[1].PromptID != subs[0].PromptID || !strings.Contains(subs[1].Prompt, msg) {
		t.Fatalf("UserPromptSubmit payloads %+v, want the queued one under the running turn's prompt id", subs)
	}
	if r := w.row(); r.Activity != loop.ActivityWorking {
		t.Fatalf("with a say queued into the held turn: activity %q", r.Activity)
	}
	w.api.Step() // the boot turn's answer goes; the queued message's own turn is held
	if got := w.turn("the queued say as a turn of its own", msg); got.SessionID != id {
		t.Fatalf("queued say: session id header %q, want %s", got.SessionID, id)
	}
	eventually(t, "the boot turn's end", func() bool { return len(w.events("standing.turn_ended")) == 1 })
	if r := w.row(); r.Activity != loop.ActivityWorking {
		t.Fatalf("between the boot turn and the queued say's: activity %q, want working", r.Activity)
	}
	w.api.Release()
	w.waitRow("idle after the queued say's turn", func(r loop.StandingRow) bool {
		return r.Activity == loop.ActivityIdle && len(w.events("standing.turn_ended")) == 2
	})
	checkTurns(t, w, 2, 1, "service")
	if n := len(w.events("standing.turn_started")); n != 1 {
		t.Fatalf("%d turn_started, want only the boot turn's (the queued message has no UserPromptSubmit of its own)", n)
	}
}

// checkTurns checks the standing.turn_started and turn_ended events: n
// turns ended, each applied by source ("service" through the hook route,
// "hook" when the hook command wrote the store) and counting an answer,
// each start followed by the end of the same prompt id. A message said
// into a running turn is queued by Claude Code and answered in a turn of
// its own that has no UserPromptSubmit (docs/claude-code.md), so no
// turn_started: queued tells how many of those there may be.
func checkTurns(t *testing.T, w *world, n, queued int, source string) {
	t.Helper()
	started, ended := w.events("standing.turn_started"), w.events("standing.turn_ended")
	if len(ended) != n || len(started) > n || len(started) < n-queued {
		t.Fatalf("%d turn_started and %d turn_ended events, want %d ended and %d to %d started:\n%+v\n%+v",
			len(started), len(ended), n, n-queued, n, started, ended)
	}
	ids := map[any]bool{}
	for i, e := range ended {
		id := e.Field("prompt_id")
		if e.Source != source || e.Field("standing") != session || id == nil || id == "" || ids[id] {
			t.Fatalf("turn_ended %d: %+v, want one of %s applied by %s with a prompt id of its own", i, e, session, source)
		}
		ids[id] = true
		if chars := fmt.Sprint(e.Field("reply_chars")); chars == "0" || chars == "<nil>" {
			t.Fatalf("turn %d ended with reply_chars %s", i, chars)
		}
	}
	for i, s := range started {
		if s.Source != source || s.Field("standing") != session || !ids[s.Field("prompt_id")] {
			t.Fatalf("turn_started %d: %+v, want one of %s applied by %s whose prompt id a turn_ended carries", i, s, session, source)
		}
	}
}

// checkTranscript checks `the-loop standing transcript --format json`:
// the user prompts hold prompts in order, and every answer the fake API
// gave is an assistant entry of its own, with its usage, in the order
// given.
func checkTranscript(t *testing.T, w *world, prompts []string) {
	t.Helper()
	var entries []loop.TranscriptEntry
	var users, answers []string
	eventually(t, "the transcript command to list every prompt and answer", func() bool {
		r := w.must("standing", "transcript", session, "--format", "json", "--last", "100")
		entries, users, answers = nil, nil, nil
		if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
			t.Fatalf("standing transcript json: %v\n%s", err, r)
		}
		for _, e := range entries {
			switch e.Role {
			case loop.RoleUser:
				users = append(users, e.Text)
			case loop.RoleAssistant:
				answers = append(answers, e.Text)
			}
		}
		return len(users) >= len(prompts) && len(answers) >= len(w.api.Turns())
	})
	if len(users) != len(prompts) {
		t.Fatalf("the transcript's user entries %q, want %d holding %q", users, len(prompts), prompts)
	}
	for i, p := range prompts {
		if !strings.Contains(users[i], p) {
			t.Fatalf("user entry %d is %.200q, want it to hold %q", i, users[i], p)
		}
	}
	var want []string
	for _, turn := range w.api.Turns() {
		want = append(want, turn.Answer)
	}
	if !slices.Equal(answers, want) {
		t.Fatalf("the transcript's answers %q, want the fake API's %q", answers, want)
	}
	for i, e := range entries {
		if e.At.IsZero() || i > 0 && e.At.Before(entries[i-1].At) {
			t.Fatalf("entry %d at %v: the entries are not oldest first with times", i, e.At)
		}
		if e.Role == loop.RoleAssistant && (e.Usage == nil || e.Usage.Input != 10 || e.Usage.Output == 0) {
			t.Fatalf("answer %d carries usage %+v, want the fake API's (input 10)", i, e.Usage)
		}
	}
	t.Logf("the transcript command lists %d entries", len(entries))
}

// The real Claude Code's hooks drive the session's activity: starting
// until its SessionStart, working while a turn's answer is held by the
// fake API, idle once it ends. A /clear typed into it moves the session to
// the new conversation: the say after it lands there, and a stop and
// start resumes the new id.
func TestRealClaude_ActivityAndClear(t *testing.T) {
	w := setup(t)
	w.api.Hold(0)
	defer w.api.Release()

	w.must("start")
	row := w.row()
	id := row.HarnessSessionID
	t.Logf("activity right after start: %q", row.Activity)
	if row.Activity != loop.ActivityStarting && row.Activity != loop.ActivityIdle && row.Activity != loop.ActivityWorking {
		t.Fatalf("right after start: activity %q", row.Activity)
	}
	w.turn("the held boot turn", bootBrief)
	working := w.waitRow("working during the held boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWorking })
	if working.LastAnswerAt != "" {
		t.Fatalf("an answer before the boot turn's: %+v", working)
	}
	if got := w.hooksOf("SessionStart", id); len(got) != 1 || got[0].Source != "startup" {
		t.Fatalf("SessionStart payloads %+v", got)
	}
	if n := len(w.events("standing.turn_started")); n != 1 {
		t.Fatalf("%d turn_started during the held boot turn, want 1", n)
	}
	w.api.Release()
	w.waitRow("idle after the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })

	// A held say: working while it runs, idle after.
	w.api.Hold(0)
	const msg = "e2e-held-say: count to three"
	w.must("standing", "say", session, "--text", msg, "--actor", "e2e")
	w.turn("the held say", msg)
	w.waitRow("working during the held say", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWorking })
	w.api.Release()
	w.waitRow("idle after the say", func(r loop.StandingRow) bool {
		return r.Activity == loop.ActivityIdle && len(w.events("standing.turn_ended")) == 2
	})
	checkTurns(t, w, 2, 0, "service")

	// /clear, typed as an operator attached to the pane would.
	w.typeIn("/clear")
	moved := w.waitRow("the session to follow the new conversation", func(r loop.StandingRow) bool {
		return r.HarnessSessionID != id && r.HarnessSessionID != ""
	})
	newID := moved.HarnessSessionID
	changed := w.events("standing.conversation_changed")
	if len(changed) != 1 || changed[0].Field("from") != id || changed[0].Field("harness_session_id") != newID {
		t.Fatalf("conversation_changed events %+v, want one from %s to %s", changed, id, newID)
	}
	if got := w.hooksOf("SessionStart", newID); len(got) != 1 || got[0].Source != "clear" {
		t.Fatalf("SessionStart payloads of the new conversation %+v, want one of source clear", got)
	}
	if got := w.hooksOf("SessionEnd", id); len(got) != 1 || got[0].Reason != "clear" {
		t.Fatalf("SessionEnd payloads of the old conversation %+v, want one of reason clear", got)
	}
	// /clear is no turn: no UserPromptSubmit, no Stop (under either id).
	if subs, stops := w.hooksOf("UserPromptSubmit", ""), w.hooksOf("Stop", ""); len(subs) != 2 || len(stops) != 2 {
		t.Fatalf("%d UserPromptSubmit and %d Stop payloads after the boot turn, a say and /clear, want 2 of each: %+v", len(subs), len(stops), w.hooks())
	}
	if n := len(w.events("standing.exited")); n != 0 {
		t.Fatalf("the clear was taken for an exit (%d standing.exited)", n)
	}
	w.waitRow("idle after the clear", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle })

	const msg2 = "e2e-after-clear: a fresh start"
	w.must("standing", "say", session, "--text", msg2, "--actor", "e2e")
	if got := w.turn("the say after /clear", msg2); got.SessionID != newID {
		t.Fatalf("the say after /clear went to conversation %q, want %s", got.SessionID, newID)
	}
	w.waitRow("idle after the say after /clear", func(r loop.StandingRow) bool {
		return r.Activity == loop.ActivityIdle && len(w.events("standing.turn_ended")) == 3
	})
	checkTurns(t, w, 3, 0, "service")

	w.must("stop")
	w.must("start")
	if row := w.row(); row.HarnessSessionID != newID {
		t.Fatalf("after stop and start: %+v, want conversation %s", row, newID)
	}
	if argv := w.argv(); !slices.Contains(argv, "--resume") || !slices.Contains(argv, newID) {
		t.Fatalf("the pane runs %q, want --resume %s", argv, newID)
	}
	const msg3 = "e2e-after-resume: still there?"
	w.must("standing", "say", session, "--text", msg3, "--actor", "e2e")
	if got := w.turn("the say after the resume", msg3); got.SessionID != newID {
		t.Fatalf("the say after the resume went to conversation %q, want %s", got.SessionID, newID)
	}
}

// With no service running, the hook command writes the store itself: the
// activity, the turn events (applied by "hook"), the answer's time and the
// token totals arrive all the same, and a stop and start resumes the
// conversation.
func TestRealClaude_HooksWithTheServiceDown(t *testing.T) {
	w := setup(t)
	w.api.Hold(0)
	defer w.api.Release()

	w.must("standing", "start", session)
	if pid := w.servicePID(); pid != 0 {
		t.Fatalf("a service runs (pid %d); this test wants none", pid)
	}
	id := w.row().HarnessSessionID
	w.turn("the held boot turn", bootBrief)
	w.waitRow("working during the held boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWorking })
	w.api.Release()
	booted := w.waitRow("idle after the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	// The transcript holds the answer's usage by the time its Stop runs.
	if booted.Tokens.Input != 10 || booted.Tokens.Output == 0 {
		t.Fatalf("token totals %+v after the boot turn, want the fake API's usage (input 10)", booted.Tokens)
	}
	t.Logf("after the boot turn: tokens %+v, activity at %s, last answer at %s", booted.Tokens, booted.ActivityAt, booted.LastAnswerAt)

	const msg = "e2e-offline-say: hello without a service"
	w.must("standing", "say", session, "--text", msg, "--actor", "e2e")
	w.turn("the say", msg)
	row := w.waitRow("idle after the say", func(r loop.StandingRow) bool {
		return r.Activity == loop.ActivityIdle && len(w.events("standing.turn_ended")) == 2
	})
	checkTurns(t, w, 2, 0, "hook")
	if row.Tokens.Input == 0 || row.Tokens.Output == 0 {
		t.Fatalf("token totals %+v after two answered turns with usage", row.Tokens)
	}

	w.must("standing", "stop", session)
	if row := w.row(); row.Running || row.Activity != loop.ActivityExited {
		t.Fatalf("after stop: %+v", row)
	}
	// Claude Code's SessionEnd on the stop's SIGTERM (reason other) is heard
	// through the store: the activity is exited, but an operator's stop is
	// no exit of the agent's, so no standing.exited is recorded.
	if ends := w.hooksOf("SessionEnd", id); len(ends) != 1 || ends[0].Reason != "other" {
		t.Fatalf("SessionEnd payloads %+v, want one of reason other", ends)
	}
	if exited := w.events("standing.exited"); len(exited) != 0 {
		t.Fatalf("standing.exited events %+v after an operator's stop, want none", exited)
	}
	if stopped := w.events("standing.stopped"); len(stopped) != 1 {
		t.Fatalf("standing.stopped events %+v, want the stop's one", stopped)
	}
	w.must("standing", "start", session)
	if argv := w.argv(); !slices.Contains(argv, "--resume") || !slices.Contains(argv, id) {
		t.Fatalf("the pane runs %q, want --resume %s", argv, id)
	}
	w.waitRow("idle after the resumed boot turn", func(r loop.StandingRow) bool {
		return r.Activity == loop.ActivityIdle && len(w.events("standing.turn_ended")) == 3
	})
	checkTurns(t, w, 3, 0, "hook")
	if starts := w.hooksOf("SessionStart", id); len(starts) != 2 {
		t.Fatalf("SessionStart payloads %+v, want the start's and the resume's", starts)
	}
}
