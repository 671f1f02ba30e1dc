package hearing

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

func TestHooks_AClearWithAnIDNotOfTheHarnessShapeIsRefusedAndEvented(t *testing.T) {
	w := newHookWorld(t)
	const pane = 4242
	w.r.Mu.Lock()
	w.r.Pids = map[string][]int{"loop-standing-supervisor": {pane}}
	w.r.Mu.Unlock()
	w.setHarness("claude")
	for _, id := range forgedIDs {
		data, _ := json.Marshal(map[string]any{"hook_event_name": "SessionStart", "source": "clear", "session_id": id})
		err := hearer(w.s).ApplyHook(context.Background(), w.cfg.StateDir(), loop.HookDelivery{Session: "standing:supervisor", Payload: data, Parents: []int{pane}})
		if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(loop.ErrorMessage(err), "not a claude conversation id") {
			t.Fatalf("a clear to %q: %v, want an EINVALID refusal naming the claude id shape", id, err)
		}
		if got := w.record().HarnessSessionID; got != w.id {
			t.Fatalf("a clear to %q moved the record to %q", id, got)
		}
	}
	evs := events(t, w.s, store.EventQuery{Types: []string{"standing.id_refused"}})
	if len(evs) != len(forgedIDs) {
		t.Fatalf("%d standing.id_refused events, want %d: %+v", len(evs), len(forgedIDs), evs)
	}
	for i, ev := range evs {
		if ev.Level != loop.LevelWarning || ev.Field("harness") != "claude" || ev.Field("session_id") != harnessQuote(forgedIDs[i]) {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
	if names := eventNames(w.heardEvents()); slices.Contains(names, "standing.conversation_changed") {
		t.Fatalf("a forged clear changed the conversation: %v", names)
	}
}

func TestHooks_AnyHookWithAMalformedIDIsRefusedNotJustIgnored(t *testing.T) {
	w := newHookWorld(t)
	data := []byte(`{"hook_event_name":"UserPromptSubmit","prompt_id":"p","session_id":"../x"}`)
	err := hearer(w.s).ApplyHook(context.Background(), w.cfg.StateDir(), loop.HookDelivery{Session: "standing:supervisor", Payload: data})
	if loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("a hook with session_id ../x: %v, want EINVALID", err)
	}
	if a := w.record().Activity; a != loop.ActivityStarting {
		t.Fatalf("the refused hook changed the activity to %s", a)
	}
}

func TestHooks_ASpooledRefusalIsConsumedNotRetriedForever(t *testing.T) {
	w := newHookWorld(t)
	bad := loop.HookDelivery{Session: "standing:supervisor", Payload: []byte(`{"hook_event_name":"Stop","session_id":"--x"}`)}
	good := loop.HookDelivery{Session: "standing:supervisor", Payload: []byte(`{"hook_event_name":"UserPromptSubmit","prompt_id":"p1","session_id":"` + w.id + `"}`)}
	for _, d := range []loop.HookDelivery{bad, good} {
		if err := SpoolHook(w.cfg.StateDir(), d); err != nil {
			t.Fatal(err)
		}
	}
	if err := hearer(w.s).ApplySpool(context.Background(), w.cfg.StateDir()); err != nil {
		t.Fatalf("applying a spool holding a refused payload: %v", err)
	}
	names, _, err := spoolFiles(w.cfg.StateDir())
	if err != nil || len(names) != 0 {
		t.Fatalf("spool left %v (%v)", names, err)
	}
	if got := w.eventsOf("standing.turn_started"); !slices.Equal(got, []string{"p1"}) {
		t.Fatalf("turns after the refusal %v, want [p1]", got)
	}
}

// newConversation is the id a clear moves a record to in the hook tests.
const newConversation = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

// forgedIDs are session_ids no agent CLI gives a conversation: a path out
// of the transcript directory, a flag in the resume argv's id place, an id
// with a newline, an upper-case UUID.
var forgedIDs = []string{
	"../../../../../tmp/secret",
	"--dangerously-skip-permissions",
	"7c9e6679-7425-40de-944b-e07fc1f90ae7\n--dangerously-skip-permissions",
	"7C9E6679-7425-40DE-944B-E07FC1F90AE7",
}

// harnessQuote is how an event quotes a refused id.
func harnessQuote(id string) string { return loop.QuoteID(id) }
