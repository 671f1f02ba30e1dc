package harness

import (
	"errors"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestCursor_RefusesTmux(t *testing.T) {
	c := Cursor{}
	if c.Name() != "cursor" || c.Binary() != "cursor-agent" {
		t.Fatalf("Name/Binary = %q/%q", c.Name(), c.Binary())
	}
	tests := []struct {
		name  string
		build func(string, []string, string) ([]string, error)
		want  string
	}{
		{"fresh", c.FreshArgv, "the cursor harness does not support the tmux runner (no pre-assignable session id in interactive mode)"},
		{"resume", c.ResumeArgv, "the cursor harness cannot resume a conversation in interactive mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := tt.build("id", []string{"--x"}, "prompt")
			var le *loop.Error
			if argv != nil || !errors.As(err, &le) || le.Code != loop.EINVALID || le.Message != tt.want {
				t.Fatalf("argv=%q err=%#v, want EINVALID %q", argv, err, tt.want)
			}
		})
	}
	if err := c.Prepare(t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	if c.Ready(loop.PaneSnapshot{Screen: promptScreen}) {
		t.Fatal("cursor is never ready")
	}
}
