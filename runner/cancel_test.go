package runner

import (
	"context"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Clean-up steps run even when the caller's ctx is cancelled midway
// (Ctrl-C): the recorder answers no call made with a done ctx, so a
// clean-up call that is answered ran on a context of its own.

// cancelAfter makes rec cancel the returned ctx once cmdline was answered.
func cancelAfter(rec *recorder, cmdline string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	rec.after = func(key string) {
		if key == cmdline {
			cancel()
		}
	}
	return ctx
}

func TestSpawnIn_CancelledMidwayStillRemovesTheHalfMadeSession(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-a", exit1("can't find session: loop-a"))
	ctx := cancelAfter(rec, "new-session -d -s loop-a -x 200 -y 50 -- sleep 60")
	r, _ := newTestRunner(t, rec, nil)
	if err := r.SpawnIn(ctx, "loop-a", loop.SpawnSpec{Argv: []string{"h", "x"}}); err == nil {
		t.Fatal("SpawnIn succeeded")
	}
	list := "set-option -w -t =loop-a:^ remain-on-exit on ; set-option -q -w -t =loop-a:^ window-size manual ; respawn-pane -k -t =loop-a:^.{top-left} -- h x"
	assertArgv(t, rec, [][]string{
		{"-L", "sock", "has-session", "-t", "=loop-a"},
		{"-L", "sock", "new-session", "-d", "-s", "loop-a", "-x", "200", "-y", "50", "--", "sleep", "60"},
		append([]string{"-L", "sock"}, strings.Fields(list)...),
		{"-L", "sock", "kill-session", "-t", "=loop-a"},
	})
	if got := rec.cancelled(); !reflect.DeepEqual(got, []string{list}) {
		t.Fatalf("calls without an answer: %q; the kill-session must run on its own context", got)
	}
}

func TestDeliverTo_CancelledMidwayDropsItsBuffers(t *testing.T) {
	paste := pasteList("loop-a", "the-loop-1-abc")
	submit := submitList("loop-a", "the-loop-1-abc-submit")
	key := func(argv []string) string { return strings.Join(argv[2:], " ") }
	cutOff := reply{err: context.DeadlineExceeded} // no answer: tmux may have run part of the list
	cases := map[string]struct {
		cut, after string
		want       [][]string
	}{
		"the paste list cut off (its buffer may be loaded)": {cut: key(paste),
			want: [][]string{paste, {"-L", "sock", "delete-buffer", "-b", "the-loop-1-abc"}}},
		"after the paste (it deleted its buffer)": {after: key(paste),
			want: [][]string{paste}},
		"the submit list cut off": {cut: key(submit),
			want: [][]string{paste, submit, {"-L", "sock", "delete-buffer", "-b", "the-loop-1-abc-submit"}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			ctx := context.Background()
			if c.cut != "" {
				rec.on(c.cut, cutOff)
			} else {
				ctx = cancelAfter(rec, c.after)
			}
			r, _ := newTestRunner(t, rec, nil)
			if err := r.DeliverTo(ctx, "loop-a", "x", 0); err == nil {
				t.Fatal("DeliverTo succeeded")
			}
			assertArgv(t, rec, c.want)
		})
	}
}

func TestTerminateHarnessIn_CancelledCtxStillWaitsOutTheSIGKILL(t *testing.T) {
	p := Proc{Pid: 100, Start: 1}
	procs := &fakeProcs{tree: map[int][]Proc{100: {p}}, alive: map[Proc]bool{p: true},
		dieOn: map[Proc]syscall.Signal{p: syscall.SIGKILL}, linger: map[Proc]int{p: 1}}
	rec := newRecorder().on("list-panes -s -t =loop-a -F #{pane_pid} #{pane_dead}", reply{out: "100 0\n"}).
		on(displayDead("loop-a"), reply{out: "loop-a\t1\n"})
	ctx := cancelAfter(rec, "list-panes -s -t =loop-a -F #{pane_pid} #{pane_dead}")
	r, sl := newTestRunner(t, rec, procs)
	if err := r.TerminateHarnessIn(ctx, "loop-a", "x", 5*time.Second); err != nil {
		t.Fatalf("err = %v; the wait after SIGKILL must outlive the cancelled ctx", err)
	}
	if !reflect.DeepEqual(procs.signal, []string{"TERM 100", "KILL 100"}) {
		t.Fatalf("signals = %v, want TERM then (the ctx cancelled) KILL at once", procs.signal)
	}
	if !reflect.DeepEqual(sl.d, []time.Duration{100 * time.Millisecond, 20 * time.Millisecond}) {
		t.Fatalf("sleeps = %v, want one cut-short grace poll and one SIGKILL poll", sl.d)
	}
	if got := rec.cancelled(); len(got) != 0 {
		t.Fatalf("calls without an answer: %q", got)
	}
}
