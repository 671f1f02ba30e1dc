package runner

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestCapture_ArgvAndLastLines(t *testing.T) {
	rec := newRecorder().on("capture-pane -p -S -3 -t =loop-standing-a:^.{top-left}",
		reply{out: "one\ntwo\nthree\nfour\n\n   \n\n"})
	r := New(Options{Socket: "s", Cmd: rec})
	got, err := r.Capture(context.Background(), "loop-standing-a", 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"two", "three", "four"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
	assertArgv(t, rec, [][]string{{"-L", "s", "capture-pane", "-p", "-S", "-3", "-t", "=loop-standing-a:^.{top-left}"}})
}

func TestCapture_RefusesBadCountsAndTargets(t *testing.T) {
	rec := newRecorder()
	r := New(Options{Cmd: rec})
	for _, n := range []int{0, -1, MaxCaptureLines + 1} {
		if _, err := r.Capture(context.Background(), "loop-standing-a", n); loop.ErrorCode(err) != loop.EINVALID {
			t.Errorf("Capture(%d): %v, want EINVALID", n, err)
		}
	}
	if _, err := r.Capture(context.Background(), "not-ours", 5); !errors.Is(err, ErrInvalidTarget) {
		t.Errorf("Capture of another session: %v", err)
	}
	if len(rec.argvs()) != 0 {
		t.Fatalf("tmux was asked: %v", rec.argvs())
	}
}

func TestCapture_AnEmptyPaneIsNoLines(t *testing.T) {
	r := New(Options{Cmd: newRecorder().on("capture-pane -p -S -40 -t =loop-x:^.{top-left}", reply{out: "\n\n\n"})})
	got, err := r.Capture(context.Background(), "loop-x", 40)
	if err != nil || len(got) != 0 {
		t.Fatalf("lines %q, %v", got, err)
	}
}

func TestAttachArgv_ReadOnlyUnlessWrite(t *testing.T) {
	r := New(Options{Socket: "sock", ConfigFile: "/dev/null"})
	ro, err := r.AttachArgv("loop-standing-a", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tmux", "-L", "sock", "-f", "/dev/null", "attach-session", "-r", "-t", "=loop-standing-a"}; !reflect.DeepEqual(ro, want) {
		t.Fatalf("read-only argv %q, want %q", ro, want)
	}
	rw, _ := New(Options{}).AttachArgv("loop-standing-a", true)
	if want := []string{"tmux", "attach-session", "-t", "=loop-standing-a"}; !reflect.DeepEqual(rw, want) {
		t.Fatalf("write argv %q, want %q", rw, want)
	}
	if _, err := r.AttachArgv("elsewhere", false); !errors.Is(err, ErrInvalidTarget) {
		t.Fatalf("attach to another session: %v", err)
	}
}

func TestAttachEnv_DropsTmuxAndSecrets(t *testing.T) {
	t.Setenv("TMUX", "/tmp/tmux-1/default,1,0")
	t.Setenv("TMUX_PANE", "%1")
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-secret")
	t.Setenv("KEEP_ME", "1")
	env := New(Options{DropEnv: []string{"SLACK_BOT_TOKEN"}}).AttachEnv()
	seen := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		seen[k] = true
	}
	if seen["TMUX"] || seen["TMUX_PANE"] || seen["SLACK_BOT_TOKEN"] || !seen["KEEP_ME"] {
		t.Fatalf("attach env %v", env)
	}
}
