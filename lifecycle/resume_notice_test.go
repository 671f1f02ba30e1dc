package lifecycle

import (
	"context"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/talk"
)

// resumedPrompt starts, stops and starts sup again (restart: through
// RestartStanding) and returns the prompt the resume was spawned with.
func resumedPrompt(t *testing.T, mode string, restart bool) string {
	t.Helper()
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "sup")
	cfg.Standing.Sessions[0].Prompt = "Watch the work items."
	cfg.Supervision.ResumePrompt = mode
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "sup", false); err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	if restart {
		if res, err := s.RestartStanding(ctx, cfg, "sup"); err != nil || !res.OK {
			t.Fatalf("restart %+v %v", res, err)
		}
	} else {
		if res, err := s.StopStanding(ctx, cfg, "sup"); err != nil || !res.OK {
			t.Fatalf("stop %+v %v", res, err)
		}
		if res, err := s.StartStanding(ctx, cfg, "sup", false); err != nil || !res.OK || res.Sessions[0].Outcome != loop.OutcomeResumed {
			t.Fatalf("second start %+v %v", res, err)
		}
	}
	spec := r.Spawns[len(r.Spawns)-1]
	if spec.Argv[1] != "--resume" {
		t.Fatalf("the second spawn did not resume: %q", spec.Argv)
	}
	return spec.Argv[len(spec.Argv)-1]
}

func TestResumePrompt_NoticeSaysWhyAndPointsAtTheBrief(t *testing.T) {
	p := resumedPrompt(t, config.ResumeNotice, false)
	if !strings.HasPrefix(p, "You are **sup**, a the-loop *standing session*.\n\n") ||
		!strings.Contains(p, "the-loop resumed this conversation: an operator started this session again") ||
		!strings.Contains(p, "brief are earlier in this conversation") ||
		strings.Contains(p, "Watch the work items.") || strings.Contains(p, "Where your operator speaks to you") {
		t.Fatalf("notice:\n%s", p)
	}
	if p := resumedPrompt(t, config.ResumeNotice, true); !strings.Contains(p, "an operator restarted this session") {
		t.Fatalf("notice after restart:\n%s", p)
	}
}

func TestResumePrompt_FullResendsTheBootPrompt(t *testing.T) {
	p := resumedPrompt(t, config.ResumeFull, false)
	boot, err := talk.BootPrompt(loop.StandingDefinition{Name: "sup", Prompt: "Watch the work items."}, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if p != boot {
		t.Fatalf("full resume prompt:\n%s\nwant the boot prompt:\n%s", p, boot)
	}
}

func TestCreate_RestartPolicyIsCheckedAndRecorded(t *testing.T) {
	s := newTestService(t, newFakeRunner())
	cfg := testConfig(t)
	ctx := context.Background()
	_, err := s.CreateStanding(ctx, cfg, loop.StandingCreateRequest{Name: "x", Cwd: t.TempDir(), Restart: "sometimes"})
	if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(loop.ErrorMessage(err), "restart 'sometimes'") {
		t.Fatalf("an unknown policy: %v", err)
	}
	if _, err := s.CreateStanding(ctx, cfg, loop.StandingCreateRequest{Name: "x", Cwd: t.TempDir(), Restart: loop.RestartNever}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.read("x")
	if err != nil || rec.Restart != loop.RestartNever || rec.Definition().Restart != loop.RestartNever {
		t.Fatalf("record %+v %v", rec, err)
	}
}
