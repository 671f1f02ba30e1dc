package runner

import (
	"context"
	"testing"
)

func TestDo_OutputCutAfterExit0IsSuccessAndNotRepeated(t *testing.T) {
	cut := reply{err: &NoAnswerError{Err: errOutputCut}}
	rec := newRecorder().on("kill-session -t =loop-a", cut)
	r, _ := newTestRunner(t, rec, nil)
	if err := r.KillTarget(context.Background(), "loop-a"); err != nil {
		t.Fatalf("KillTarget = %v; tmux exited 0, so the kill ran", err)
	}
	assertArgv(t, rec, [][]string{{"-L", "sock", "kill-session", "-t", "=loop-a"}})
}

func TestQuery_OutputCutIsAskedOnceMore(t *testing.T) {
	cut := reply{out: "con", err: &NoAnswerError{Err: errOutputCut}}
	rec := newRecorder().on("show-options -v -t =loop-a: @the-loop-tag", cut, reply{out: "conv-1\n"})
	r, _ := newTestRunner(t, rec, nil)
	if tag, ok := r.Tag(context.Background(), "loop-a"); !ok || tag != "conv-1" {
		t.Fatalf("Tag = %q, %v; want the whole answer of the second ask", tag, ok)
	}
	show := []string{"-L", "sock", "show-options", "-v", "-t", "=loop-a:", "@the-loop-tag"}
	assertArgv(t, rec, [][]string{show, show})
}

func TestQuery_NotAskedAgainWhenTheCallersCtxIsDone(t *testing.T) {
	rec := newRecorder()
	r, _ := newTestRunner(t, rec, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if tag, ok := r.Tag(ctx, "loop-a"); ok || tag != "" {
		t.Fatalf("Tag = %q, %v; want no answer", tag, ok)
	}
	assertArgv(t, rec, [][]string{{"-L", "sock", "show-options", "-v", "-t", "=loop-a:", "@the-loop-tag"}})
}

func TestQuery_MissingTmuxIsNotAskedAgain(t *testing.T) {
	missing := reply{err: &NoAnswerError{Err: &TmuxNotFoundError{Binary: "tmux"}}}
	rec := newRecorder().on("has-session -t =loop-a", missing)
	r, _ := newTestRunner(t, rec, nil)
	_ = r.State(context.Background(), "loop-a")
	assertArgv(t, rec, [][]string{{"-L", "sock", "has-session", "-t", "=loop-a"}})
}
