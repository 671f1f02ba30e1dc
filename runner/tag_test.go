package runner

import (
	"context"
	"reflect"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestTag_ArgvAndAnswers(t *testing.T) {
	cases := map[string]struct {
		r      reply
		tag    string
		answer bool
	}{
		"tagged":            {reply{out: "conv-1\n"}, "conv-1", true},
		"no tag":            {exit1("invalid option: @the-loop-tag"), "", true},
		"no session":        {exit1("no such session: =loop-a:"), "", true},
		"can't find":        {exit1("can't find session: loop-a"), "", true},
		"no server":         {exit1("no server running on /tmp/tmux-0/sock"), "", true},
		"no socket":         {exit1("error connecting to /tmp/tmux-0/sock (No such file or directory)"), "", true},
		"timeout":           {reply{err: &NoAnswerError{Err: context.DeadlineExceeded}}, "", false},
		"permission denied": {exit1("error connecting to /tmp/tmux-0/sock (Permission denied)"), "", false},
		"usage error":       {exit1("unknown option -- v"), "", false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder().on("show-options -v -t =loop-a: @the-loop-tag", c.r)
			r, _ := newTestRunner(t, rec, nil)
			tag, ok := r.Tag(context.Background(), "loop-a")
			if tag != c.tag || ok != c.answer {
				t.Fatalf("Tag = %q, %v; want %q, %v", tag, ok, c.tag, c.answer)
			}
			want := [][]string{{"-L", "sock", "show-options", "-v", "-t", "=loop-a:", "@the-loop-tag"}}
			if name == "timeout" { // no answer: a query is asked once more
				want = append(want, want[0])
			}
			assertArgv(t, rec, want)
		})
	}
}

func TestTag_RefusesForeignTargetsWithoutCallingTmux(t *testing.T) {
	for _, target := range []string{"my-work", "loop-x;rm", "loop-a:0.1", "=loop-a", ""} {
		rec := newRecorder()
		r, _ := newTestRunner(t, rec, nil)
		if tag, ok := r.Tag(context.Background(), target); tag != "" || ok {
			t.Errorf("Tag(%q) = %q, %v; want \"\", false (never asked)", target, tag, ok)
		}
		assertArgv(t, rec, [][]string{})
	}
}

func TestSpawnIn_TagIsSetInTheRespawnsCommandList(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-a", exit1("can't find session: loop-a"))
	r, _ := newTestRunner(t, rec, nil)
	if err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", "x"}, Tag: "conv-1"}); err != nil {
		t.Fatal(err)
	}
	got := rec.argvs()
	// One command list: tmux runs the tag right after the respawn, and not
	// at all if the respawn fails; nothing can die in between.
	want := [][]string{
		{"-L", "sock", "set-option", "-w", "-t", "=loop-a:^", "remain-on-exit", "on", ";",
			"set-option", "-q", "-w", "-t", "=loop-a:^", "window-size", "manual", ";",
			"respawn-pane", "-k", "-t", "=loop-a:^.{top-left}", "--", "h", "x",
			";", "set-option", "-t", "=loop-a:", "@the-loop-tag", "conv-1"},
	}
	if !reflect.DeepEqual(got[len(got)-1:], want) {
		t.Fatalf("last calls = %q, want %q", got[len(got)-1:], want)
	}
}

func TestSpawnIn_FailedRespawnSetsNoTag(t *testing.T) {
	rec := newRecorder().
		on("has-session -t =loop-a", exit1("can't find session: loop-a")).
		on(spawnListKey+" ; respawn-pane -k -t =loop-a:^.{top-left} -- h x ; set-option -t =loop-a: @the-loop-tag conv-1", exit1("create pane failed: boom"))
	r, _ := newTestRunner(t, rec, nil)
	if err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h", "x"}, Tag: "conv-1"}); err == nil {
		t.Fatal("SpawnIn succeeded")
	}
	got := rec.argvs()
	if last := got[len(got)-1]; !reflect.DeepEqual(last, []string{"-L", "sock", "kill-session", "-t", "=loop-a"}) {
		t.Fatalf("last call = %v, want kill-session of the half-made session", last)
	}
}

func TestTerminateHarnessIn_UnexpectedAnswerIsNotAGoneSession(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-a", exit1("error connecting to /tmp/tmux-0/sock (Permission denied)"))
	r, _ := newTestRunner(t, rec, &fakeProcs{})
	if err := r.TerminateHarnessIn(context.Background(), "loop-a", "x", 0); loop.ErrorCode(err) != loop.EINTERNAL {
		t.Fatalf("err = %v, want EINTERNAL (tmux did not say the session is gone)", err)
	}
}
