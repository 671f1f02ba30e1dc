package lifecycle

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/redact"
	"github.com/the-loop-dev/the-loop/store"
)

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
	if err := hearerFor(s).ApplyHook(context.Background(), cfg.StateDir(), loop.HookDelivery{Session: "standing:supervisor", Payload: data}); err != nil {
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
