package runner_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// benchSessions starts n sessions running sleep on a private server.
func benchSessions(b *testing.B, socket string, n int) []string {
	b.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("loop-bench-%02d", i)
		if _, err := testkit.TmuxRun(socket, "new-session", "-d", "-s", name, "sleep", "600"); err != nil {
			b.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

func BenchmarkStates(b *testing.B) {
	socket := testkit.Tmux(b)
	r := runner.New(runner.Options{Socket: socket, ConfigFile: testkit.TmuxConfig})
	names := benchSessions(b, socket, 50)
	ctx := context.Background()
	for _, n := range []int{1, 10, 50} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			targets := names[:n]
			for b.Loop() {
				st := r.States(ctx, targets)
				if st[targets[n-1]] != loop.PaneLive {
					b.Fatalf("States = %v", st)
				}
			}
		})
	}
}

func BenchmarkState(b *testing.B) {
	socket := testkit.Tmux(b)
	r := runner.New(runner.Options{Socket: socket, ConfigFile: testkit.TmuxConfig})
	names := benchSessions(b, socket, 1)
	ctx := context.Background()
	for b.Loop() {
		if st := r.State(ctx, names[0]); st != loop.PaneLive {
			b.Fatalf("State = %s", st)
		}
	}
}
