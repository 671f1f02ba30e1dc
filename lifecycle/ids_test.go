package lifecycle

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/redact"
	"github.com/the-loop-dev/the-loop/store"
)

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

func TestHooks_AClearWithAnIDNotOfTheHarnessShapeIsRefusedAndEvented(t *testing.T) {
	w := newHookWorld(t)
	const pane = 4242
	w.s.PanePIDs = func(context.Context, string, string) ([]int, error) { return []int{pane}, nil }
	w.setHarness("claude")
	for _, id := range forgedIDs {
		data, _ := json.Marshal(map[string]any{"hook_event_name": "SessionStart", "source": "clear", "session_id": id})
		err := w.s.ApplyHook(context.Background(), w.cfg.StateDir(), loop.HookDelivery{Session: "standing:supervisor", Payload: data, Parents: []int{pane}})
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
	err := w.s.ApplyHook(context.Background(), w.cfg.StateDir(), loop.HookDelivery{Session: "standing:supervisor", Payload: data})
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
	if err := w.s.ApplySpool(context.Background(), w.cfg.StateDir()); err != nil {
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

func TestStart_ARecordedIDNotOfTheHarnessShapeNeverReachesTheArgv(t *testing.T) {
	w := newHookWorld(t)
	if _, err := w.s.StopStanding(context.Background(), w.cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	const forged = "--dangerously-skip-permissions"
	if err := w.s.DB.Update(func(tx *store.Tx) error {
		rec, err := tx.Standing("supervisor")
		if err != nil {
			return err
		}
		rec.HarnessSessionID = forged
		return tx.PutStanding(rec)
	}); err != nil {
		t.Fatal(err)
	}
	spawns := len(w.r.Spawns)
	res, err := w.s.StartStanding(context.Background(), w.cfg, "supervisor", false)
	for _, sp := range w.r.Spawns[spawns:] {
		if slices.Contains(sp.Argv, forged) {
			t.Fatalf("a spawn's argv carries the recorded id %q: %q", forged, sp.Argv)
		}
	}
	if err == nil && res.OK {
		t.Fatalf("start resumed a conversation %q: %+v", forged, res)
	}
}

func TestTranscript_ARecordedIDNotOfTheHarnessShapeIsNoPath(t *testing.T) {
	w := newHookWorld(t)
	w.setHarness("claude")
	if err := w.s.DB.Update(func(tx *store.Tx) error {
		rec, err := tx.Standing("supervisor")
		if err != nil {
			return err
		}
		rec.HarnessSessionID = "../../../../../tmp/secret"
		return tx.PutStanding(rec)
	}); err != nil {
		t.Fatal(err)
	}
	_, err := w.s.TranscriptStanding(context.Background(), w.cfg, "supervisor", 10)
	if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(loop.ErrorMessage(err), "../../") {
		t.Fatalf("transcript of a record whose id is a path: %v, want EINVALID naming it", err)
	}
}

// harnessQuote is how an event quotes a refused id.
func harnessQuote(id string) string { return harness.QuoteID(id) }

func TestEvents_AnAgentsCredentialAndTheTokenAreRedactedInTheLog(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	s.HookBinary = "/opt/the-loop"
	red := redact.New(nil)
	red.SetValue("service.token", "operator-token-value-123")
	s.Redactor = red
	cfg := testConfig(t, "supervisor")
	cfg.StateRoot = t.TempDir()
	res, err := s.StartStanding(context.Background(), cfg, "supervisor", false)
	if err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	cred := ""
	for _, kv := range r.Spawns[0].Env {
		if v, ok := strings.CutPrefix(kv, credential.AgentTokenEnv+"="); ok {
			cred = v
		}
	}
	if len(cred) != 64 {
		t.Fatalf("the spawn's credential %q", cred)
	}
	msg := "my credential " + cred + ", the token operator-token-value-123, a key sk-proj-" + strings.Repeat("k", 24)
	data, _ := json.Marshal(map[string]any{"hook_event_name": "Notification", "session_id": res.Sessions[0].HarnessSessionID, "message": msg})
	if err := s.ApplyHook(context.Background(), cfg.StateDir(), loop.HookDelivery{Session: "standing:supervisor", Payload: data}); err != nil {
		t.Fatal(err)
	}
	evs := events(t, s, store.EventQuery{Types: []string{"standing.attention"}})
	if len(evs) != 1 {
		t.Fatalf("%d attention events", len(evs))
	}
	if got := evs[0].Field("message"); got != "my credential [redacted], the token [redacted], a key [redacted]" {
		t.Fatalf("the event log holds %q", got)
	}
}

func TestTranscriptMark_AnIDThatIsAPathNamesNoFile(t *testing.T) {
	s := &Service{Getenv: func(string) string { return t.TempDir() }}
	if path, _ := s.transcriptMark("/w", "../../../../tmp/secret"); path != "" {
		t.Fatalf("transcriptMark of a path id = %q", path)
	}
	if path, _ := s.transcriptMark("/w", newConversation); path == "" {
		t.Fatal("transcriptMark of a conversation id names no file")
	}
}
