package hearing

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/store"
)

// hookWorld is a started standing session "supervisor" whose spawns
// declare hooks, with a state root of its own.
type hookWorld struct {
	t   testing.TB
	s   *lifecycle.Service
	r   *fakeRunner
	cfg *config.Config
	id  string // the recorded conversation
}

func newHookWorld(t testing.TB) *hookWorld {
	t.Helper()
	r := newFakeRunner()
	s := newTestService(t, r)
	s.HookBinary = "/opt/the loop/bin/the-loop"
	cfg := testConfig(t, "supervisor")
	cfg.StateRoot = t.TempDir()
	res, err := s.StartStanding(context.Background(), cfg, "supervisor", false)
	if err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	return &hookWorld{t: t, s: s, r: r, cfg: cfg, id: res.Sessions[0].HarnessSessionID}
}

// hook applies one payload (fields as JSON) to the session.
func (w *hookWorld) hook(fields map[string]any, parents ...int) {
	w.t.Helper()
	if _, ok := fields["session_id"]; !ok {
		fields["session_id"] = w.id
	}
	data, _ := json.Marshal(fields)
	if err := hearer(w.s).ApplyHook(context.Background(), w.cfg.StateDir(), loop.HookDelivery{Session: "standing:supervisor", Payload: data, Parents: parents}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *hookWorld) record() *loop.StandingRecord {
	w.t.Helper()
	rec, err := readStanding(w.t, w.s, "supervisor"), error(nil)
	if err != nil || rec == nil {
		w.t.Fatalf("record: %v %v", rec, err)
	}
	return rec
}

func (w *hookWorld) row() loop.StandingRow {
	w.t.Helper()
	row, err := w.s.GetStanding(context.Background(), w.cfg, "supervisor")
	if err != nil {
		w.t.Fatal(err)
	}
	return row
}

// setHarness records the session as one of harness, whose stock adapter
// then reads its hooks.
func (w *hookWorld) setHarness(name string) {
	w.t.Helper()
	fake := w.s.Harness
	w.s.Harness = func(h, subject string) (loop.Harness, error) {
		if h == name {
			return harness.Lookup(h, subject, harness.ClaudeOptions{})
		}
		return fake(h, subject)
	}
	err := w.s.DB.Update(func(tx *store.Tx) error {
		rec, err := tx.Standing("supervisor")
		if err != nil || rec == nil {
			return fmt.Errorf("record: %v %v", rec, err)
		}
		rec.Harness = name
		return tx.PutStanding(rec)
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// eventsOf is the prompt_id of every event named name.
func (w *hookWorld) eventsOf(name string) []string {
	var out []string
	for _, ev := range events(w.t, w.s, store.EventQuery{Types: []string{name}}) {
		out = append(out, fmt.Sprint(ev.Field("prompt_id")))
	}
	return out
}

func (w *hookWorld) heardEvents() []loop.Event {
	var out []loop.Event
	for _, ev := range events(w.t, w.s, store.EventQuery{}) {
		if !slices.Contains([]string{"standing.started", "standing.said"}, ev.Event) {
			out = append(out, ev)
		}
	}
	return out
}

func TestHooks_ActivityFollowsATurnAndEventsRecordIt(t *testing.T) {
	w := newHookWorld(t)
	w.hook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	if a := w.row().Activity; a != loop.ActivityIdle {
		t.Fatalf("after SessionStart: %s", a)
	}
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "hi", "prompt_id": "p1"})
	if a := w.row().Activity; a != loop.ActivityWorking {
		t.Fatalf("after UserPromptSubmit: %s", a)
	}
	// A message queued during the turn: the running turn's prompt id, no new turn.
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "and also", "prompt_id": "p1"})
	w.hook(map[string]any{"hook_event_name": "Notification", "notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash"})
	if a := w.row().Activity; a != loop.ActivityWaiting {
		t.Fatalf("after a permission prompt: %s", a)
	}
	w.hook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash"})
	if a := w.row().Activity; a != loop.ActivityWorking {
		t.Fatalf("after PostToolUse: %s", a)
	}
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p1", "last_assistant_message": "héllo"})
	if a := w.row().Activity; a != loop.ActivityWorking {
		t.Fatalf("the queued message's turn runs after the first's Stop, but the row says %s", a)
	}
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p1b", "last_assistant_message": "also"})
	row := w.row()
	if row.Activity != loop.ActivityIdle || row.LastAnswerAt == "" || row.ActivityAt == "" {
		t.Fatalf("after Stop: %+v", row)
	}
	w.hook(map[string]any{"hook_event_name": "Notification", "notification_type": "idle_prompt", "message": "waiting for input"})
	if a := w.row().Activity; a != loop.ActivityIdle {
		t.Fatalf("an idle prompt outside a turn: %s", a)
	}
	for i := 2; i <= 7; i++ {
		w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt_id": fmt.Sprint("p", i)})
		w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": fmt.Sprint("p", i), "last_assistant_message": fmt.Sprint("answer ", i)})
	}
	if ans := w.record().Answers; len(ans) != loop.KeptAnswers || ans[0].Text != "answer 3" || ans[4].Text != "answer 7" || ans[4].PromptID != "p7" {
		t.Fatalf("answers %+v", ans)
	}
	w.hook(map[string]any{"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
	if a := w.record().Activity; a != loop.ActivityExited {
		t.Fatalf("after SessionEnd: %s", a)
	}
	evs := w.heardEvents()
	got := eventNames(evs)
	want := []string{"standing.turn_started", "standing.attention", "standing.turn_ended", "standing.turn_ended", "standing.attention"}
	for i := 2; i <= 7; i++ {
		want = append(want, "standing.turn_started", "standing.turn_ended")
	}
	want = append(want, "standing.exited")
	if !slices.Equal(got, want) {
		t.Fatalf("events %v\nwant %v", got, want)
	}
	if evs[0].Field("prompt_id") != "p1" || evs[1].Field("notification_type") != "permission_prompt" ||
		evs[1].Field("message") != "Claude needs your permission to use Bash" || fmt.Sprint(evs[2].Field("reply_chars")) != "5" ||
		evs[len(evs)-1].Field("reason") != "prompt_input_exit" || evs[0].Field("standing") != "supervisor" {
		t.Fatalf("event fields %+v", evs)
	}
}

// Auto mode's dialog (Notification agent_needs_input, measured on 2.1.332)
// makes a working agent waiting, as a permission prompt does; idle_prompt,
// within a turn, does not.
func TestHooks_AutoModesDialogIsWaitingAndAnIdlePromptIsNot(t *testing.T) {
	w := newHookWorld(t)
	w.hook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "hi", "prompt_id": "p1"})
	w.hook(map[string]any{"hook_event_name": "Notification", "notification_type": "idle_prompt", "message": "Claude is waiting for your input"})
	if a := w.row().Activity; a != loop.ActivityWorking {
		t.Fatalf("after an idle prompt in a turn: %s, want working", a)
	}
	w.hook(map[string]any{"hook_event_name": "Notification", "notification_type": "agent_needs_input", "message": "Claude needs your input"})
	if a := w.row().Activity; a != loop.ActivityWaiting {
		t.Fatalf("after auto mode's dialog: %s, want waiting", a)
	}
}

func TestHooks_AnotherConversationIsIgnoredAndAClearFromThePaneIsFollowed(t *testing.T) {
	w := newHookWorld(t)
	const pane = 4242
	w.r.Mu.Lock()
	w.r.Pids = map[string][]int{"loop-standing-supervisor": {pane}}
	w.r.Mu.Unlock()
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt_id": "x", "session_id": "c41d0c4e-0a8e-4b7a-9f57-1c2b3a4d5e6f"})
	if a := w.record().Activity; a != loop.ActivityStarting {
		t.Fatalf("another conversation's hook changed the activity to %s", a)
	}
	// A clear from a process outside the pane is not the agent's.
	w.hook(map[string]any{"hook_event_name": "SessionStart", "source": "clear", "session_id": "5d3e7f10-2b4c-4d6e-8f90-a1b2c3d4e5f6"}, 99, 1)
	if id := w.record().HarnessSessionID; id != w.id {
		t.Fatalf("a stranger's clear moved the record to %s", id)
	}
	w.hook(map[string]any{"hook_event_name": "SessionEnd", "reason": "clear"})
	if a := w.record().Activity; a == loop.ActivityExited {
		t.Fatal("SessionEnd clear taken for an exit")
	}
	w.hook(map[string]any{"hook_event_name": "SessionStart", "source": "clear", "session_id": newConversation}, 555, pane, 1)
	rec := w.record()
	if rec.HarnessSessionID != newConversation || rec.Activity != loop.ActivityIdle {
		t.Fatalf("after the agent's clear: id %s activity %s", rec.HarnessSessionID, rec.Activity)
	}
	old := w.id
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt_id": "y", "session_id": old})
	w.hook(map[string]any{"hook_event_name": "SessionStart", "source": "compact", "session_id": newConversation})
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt_id": "z", "session_id": newConversation})
	evs := w.heardEvents()
	got := eventNames(evs)
	want := []string{"hook.ignored", "hook.ignored", "standing.conversation_changed", "hook.ignored", "standing.turn_started"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if evs[0].Level != loop.LevelWarning || evs[2].Field("from") != old || evs[2].Field("harness_session_id") != newConversation || evs[4].Field("prompt_id") != "z" {
		t.Fatalf("events %+v", evs)
	}
	// A resume follows the new conversation.
	if _, err := w.s.StopStanding(context.Background(), w.cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	if res, err := w.s.StartStanding(context.Background(), w.cfg, "supervisor", false); err != nil || res.Sessions[0].Outcome != "resumed" {
		t.Fatalf("restart: %+v %v", res, err)
	}
	if a := w.r.Spawns[len(w.r.Spawns)-1].Argv; a[1] != "--resume" || a[2] != newConversation {
		t.Fatalf("resume argv %q", a)
	}
}

func TestHooks_GarbageTruncatedAndUnknownSessionsAreHarmless(t *testing.T) {
	w := newHookWorld(t)
	for _, d := range []loop.HookDelivery{
		{Session: "standing:supervisor", Payload: []byte("not json at all")},
		{Session: "standing:nobody", Payload: []byte(`{"hook_event_name":"Stop","session_id":"x"}`)},
		{Session: "what?", Payload: []byte(`{"hook_event_name":"Stop","session_id":"x"}`)},
	} {
		if err := hearer(w.s).ApplyHook(context.Background(), w.cfg.StateDir(), d); err != nil {
			t.Fatalf("%s: %v", d.Payload, err)
		}
	}
	// A truncated Stop keeps the fields before the cut.
	cut := []byte(`{"session_id":"` + w.id + `","hook_event_name":"Stop","prompt_id":"p9","last_assistant_message":"` + strings.Repeat("a", 100))
	if err := hearer(w.s).ApplyHook(context.Background(), w.cfg.StateDir(), loop.HookDelivery{Session: "standing:supervisor", Payload: cut, Truncated: true}); err != nil {
		t.Fatal(err)
	}
	rec := w.record()
	if rec.Activity != loop.ActivityIdle || len(rec.Answers) != 1 || !rec.Answers[0].Truncated || rec.Answers[0].PromptID != "p9" ||
		rec.Answers[0].Text != strings.Repeat("a", 100) {
		t.Fatalf("after a truncated Stop: %+v", rec.Hearing)
	}
	if got := eventNames(w.heardEvents()); !slices.Equal(got, []string{"hook.ignored", "hook.ignored", "hook.ignored", "standing.turn_ended"}) {
		t.Fatalf("events %v", got)
	}
}

func TestHooks_SpooledPayloadsAreAppliedOnceInOrder(t *testing.T) {
	w := newHookWorld(t)
	root := w.cfg.StateDir()
	spool := func(fields map[string]any) {
		fields["session_id"] = w.id
		data, _ := json.Marshal(fields)
		if err := SpoolHook(root, loop.HookDelivery{Session: "standing:supervisor", Payload: data}); err != nil {
			t.Fatal(err)
		}
	}
	spool(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt_id": "p1"})
	spool(map[string]any{"hook_event_name": "Stop", "prompt_id": "p1", "last_assistant_message": "one"})
	spool(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt_id": "p2"})
	ents, _ := os.ReadDir(SpoolDir(root))
	if len(ents) != 3 {
		t.Fatalf("%d spool files", len(ents))
	}
	for _, e := range ents {
		if fi, _ := e.Info(); fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s is %v", e.Name(), fi.Mode())
		}
	}
	// Keep copies, as if a reader died between applying and deleting.
	saved := map[string][]byte{}
	for _, e := range ents {
		saved[e.Name()], _ = os.ReadFile(filepath.Join(SpoolDir(root), e.Name()))
	}
	if _, err := w.s.ListStanding(context.Background(), w.cfg); err != nil { // the next reader applies the spool
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(SpoolDir(root)); len(left) != 0 {
		t.Fatalf("%d spool files left", len(left))
	}
	for name, data := range saved {
		if err := os.WriteFile(filepath.Join(SpoolDir(root), name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := hearer(w.s).ApplySpool(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	got := w.heardEvents()
	if names := eventNames(got); !slices.Equal(names, []string{"standing.turn_started", "standing.turn_ended", "standing.turn_started"}) {
		t.Fatalf("events %v", names)
	}
	if got[0].Field("prompt_id") != "p1" || got[2].Field("prompt_id") != "p2" || w.record().Activity != loop.ActivityWorking {
		t.Fatalf("applied out of order: %+v", got)
	}
}

func TestHooks_AFullSpoolDropsTheOldestWithAnEvent(t *testing.T) {
	w := newHookWorld(t)
	root := w.cfg.StateDir()
	big := `{"hook_event_name":"Notification","session_id":"` + w.id + `","message":"` + strings.Repeat("m", 900<<10) + `"}`
	for i := 0; i < 20; i++ { // 20 × ~0.9 MiB > 16 MiB
		if err := SpoolHook(root, loop.HookDelivery{Session: "standing:supervisor", Payload: []byte(big)}); err != nil {
			t.Fatal(err)
		}
	}
	_, sizes, _ := spoolFiles(root)
	var total int64
	for _, n := range sizes {
		total += n
	}
	if total > MaxSpoolBytes+4096 {
		t.Fatalf("the spool holds %d bytes", total)
	}
	if err := hearer(w.s).ApplySpool(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	var overflow []loop.Event
	attention := 0
	for _, ev := range w.heardEvents() {
		switch ev.Event {
		case "hook.spool_overflow":
			overflow = append(overflow, ev)
		case "standing.attention":
			attention++
		}
	}
	if len(overflow) == 0 || attention >= 20 || attention < 15 {
		t.Fatalf("%d overflow events, %d payloads applied", len(overflow), attention)
	}
}

func TestHooks_TokenTotalsComeFromTheTranscriptTail(t *testing.T) {
	w := newHookWorld(t)
	conf := t.TempDir()
	w.s.Harness = func(string, string) (loop.Harness, error) { return fakeHarness{claudeDir: conf}, nil }
	rec := w.record()
	path := filepathTranscript(conf, rec.Cwd, w.id)
	line := func(ts string, in, out int) string {
		return fmt.Sprintf(`{"type":"assistant","timestamp":"%s","message":{"id":"m-%s","role":"assistant","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":1,"cache_creation_input_tokens":2}}}`+"\n", ts, ts, in, out)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(line("2026-01-01T00:00:01Z", 10, 20)), 0o600); err != nil {
		t.Fatal(err)
	}
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p1", "transcript_path": "/etc/passwd"})
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(line("2026-01-01T00:00:02Z", 1, 2))
	f.Close()
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p2"})
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p3"}) // nothing new: nothing added
	if got, want := w.row().Tokens, (loop.TokenUsage{Input: 11, Output: 22, CacheRead: 2, CacheWrite: 4}); got != want {
		t.Fatalf("tokens %+v, want %+v", got, want)
	}
}

func filepathTranscript(conf, cwd, id string) string {
	return harness.ClaudeTranscriptPath(conf, cwd, id)
}

// Claude Code 2.1.332 may write a turn's answer into the transcript
// shortly after its Stop hook began (docs/claude-code.md): the Stop waits
// for it, so the totals count the turn they end.
func TestHooks_AStopWaitsForItsAnswerToReachTheTranscript(t *testing.T) {
	w := newHookWorld(t)
	conf := t.TempDir()
	looked := make(chan struct{}) // closed once the Stop has read the transcript without its answer
	watched := readWatched{fakeHarness: fakeHarness{claudeDir: conf}, read: looked, once: new(sync.Once)}
	w.s.Harness = func(string, string) (loop.Harness, error) { return watched, nil }
	path := filepathTranscript(conf, w.record().Cwd, w.id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"type":"user","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	written, applied := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(written)
		select { // the answer lands while the Stop is being applied
		case <-looked:
		case <-applied:
			return
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, _ = f.WriteString(`{"type":"assistant","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":10,"output_tokens":3}}}` + "\n")
		f.Close()
	}()
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p1", "last_assistant_message": "hello"})
	close(applied)
	<-written
	if got := w.row().Tokens; got.Input != 10 || got.Output != 3 {
		t.Fatalf("tokens %+v after the Stop, want the answer written after its first look counted", got)
	}
}

// readWatched is fakeHarness that closes read once its first TokenEntries
// has answered.
type readWatched struct {
	fakeHarness
	read chan struct{}
	once *sync.Once
}

func (f readWatched) TokenEntries(cwd, id string, n int) ([]loop.TranscriptEntry, error) {
	entries, err := f.fakeHarness.TokenEntries(cwd, id, n)
	f.once.Do(func() { close(f.read) })
	return entries, err
}

// TestHooks_AnAgentsSessionEndPokesTheSupervisor: a SessionEnd that ends
// the agent makes the supervisor look at once (the Hearer's Ended, wired
// to lifecycle.Service.SessionEnded, as cmd/the-loop wires it); a clear's
// SessionEnd, where the same process goes on, does not.
func TestHooks_AnAgentsSessionEndPokesTheSupervisor(t *testing.T) {
	w := newHookWorld(t)
	sv := &pokedSupervisor{pokes: make(chan struct{}, 1)}
	w.s.Supervisor = sv
	poked := func() bool {
		select {
		case <-sv.pokes:
			return true
		default:
			return false
		}
	}
	w.hook(map[string]any{"hook_event_name": "SessionEnd", "reason": "clear"})
	if poked() {
		t.Fatal("a clear's SessionEnd poked the supervisor")
	}
	w.hook(map[string]any{"hook_event_name": "SessionEnd", "reason": "prompt_input_exit", "session_id": "c41d0c4e-0a8e-4b7a-9f57-1c2b3a4d5e6f"})
	if poked() {
		t.Fatal("another conversation's SessionEnd poked the supervisor")
	}
	w.hook(map[string]any{"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
	if !poked() {
		t.Fatal("the agent's SessionEnd did not poke the supervisor")
	}
}

// pokedSupervisor is a Supervisor that is never active and keeps one poke
// until it is taken.
type pokedSupervisor struct{ pokes chan struct{} }

func (p *pokedSupervisor) Active() bool { return false }

func (p *pokedSupervisor) Poke() {
	select {
	case p.pokes <- struct{}{}:
	default:
	}
}

func TestHooks_ADeliveryIsAppliedOnceWhateverRoadItTakes(t *testing.T) {
	w := newHookWorld(t)
	root := w.cfg.StateDir()
	// Ten deliveries a second: under the hook rate limit, which is not
	// what this test is about.
	tick := time.Now()
	w.s.Clock = func() time.Time { return tick }
	deliver := func(id string, spool bool) {
		t.Helper()
		tick = tick.Add(100 * time.Millisecond)
		data, _ := json.Marshal(map[string]any{"session_id": w.id, "hook_event_name": "Notification", "notification_type": "idle_prompt", "message": id})
		d := loop.HookDelivery{Session: "standing:supervisor", Payload: data, ID: id}
		if spool {
			if err := SpoolHook(root, d); err != nil {
				t.Fatal(err)
			}
			if err := hearer(w.s).ApplySpool(context.Background(), root); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := hearer(w.s).ApplyHook(context.Background(), root, d); err != nil {
			t.Fatal(err)
		}
	}
	attention := func() int {
		n := 0
		for _, ev := range w.heardEvents() {
			if ev.Event == "standing.attention" {
				n++
			}
		}
		return n
	}
	deliver("d-1", false)
	deliver("d-1", true)  // the timed-out POST's copy, from the spool
	deliver("d-1", false) // and once more directly
	if n := attention(); n != 1 {
		t.Fatalf("%d attention events for one delivery, want 1", n)
	}
	for i := range loop.MaxHookIDs + 8 {
		deliver(fmt.Sprintf("d-%d", i+2), i%2 == 0)
	}
	if n := attention(); n != loop.MaxHookIDs+9 {
		t.Fatalf("%d attention events, want each new delivery applied", n)
	}
	ids := w.record().HookIDs
	if len(ids) != loop.MaxHookIDs || ids[len(ids)-1] != fmt.Sprintf("d-%d", loop.MaxHookIDs+9) {
		t.Fatalf("kept ids %q, want the last %d", ids, loop.MaxHookIDs)
	}
	if entries, _ := os.ReadDir(SpoolDir(root)); len(entries) != 0 {
		t.Fatalf("spool left %d files", len(entries))
	}
}
