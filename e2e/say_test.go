package e2e

import (
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fakeapi"
)

// `say --wait` prints the fake API's answer to that
// very message, for an idle and for a busy agent.

// answers makes the fake API answer a message holding a key with its value.
func answers(w *world, byKey map[string]string) {
	w.api.SetAnswer(func(text string) string {
		for k, v := range byKey {
			if strings.Contains(text, k) {
				return v
			}
		}
		return fakeapi.DefaultAnswer(text)
	})
}

func TestRealClaude_SayWaitIntoAnIdleAgent(t *testing.T) {
	w := setup(t)
	answers(w, map[string]string{"e2e-wait-idle": "the idle answer is 42"})
	w.must("start")
	eventually(t, "the boot turn's answer", func() bool {
		r := w.row()
		return r.Activity == loop.ActivityIdle && r.LastAnswerAt != ""
	})
	r := w.must("standing", "say", session, "--text", "e2e-wait-idle: what is the answer?", "--actor", "e2e", "--wait", "--timeout", "60s")
	if strings.TrimSpace(r.stdout) != "the idle answer is 42" || !strings.Contains(r.stderr, "submitted to "+target) {
		t.Fatalf("say --wait: %s", r)
	}
}

func TestRealClaude_SayWaitIntoABusyAgentGetsItsOwnAnswer(t *testing.T) {
	w := setup(t)
	answers(w, map[string]string{"e2e-wait-busy": "the busy answer is 7"})
	w.api.Hold(0)
	defer w.api.Release()
	w.must("start")
	w.turn("the held boot turn", bootBrief)
	done := make(chan result, 1)
	go func() {
		done <- w.run("standing", "say", session, "--text", "e2e-wait-busy: and now?", "--actor", "e2e", "--wait", "--timeout", "90s")
	}()
	eventually(t, "the say queued on the screen", func() bool { return strings.Contains(w.screen(), "Queued") })
	w.api.Release()
	r := <-done
	if r.code != 0 || strings.TrimSpace(r.stdout) != "the busy answer is 7" || !strings.Contains(r.stderr, "queued in "+target) {
		t.Fatalf("say --wait into a busy agent: %s", r)
	}
}
