package runner

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// A spawn with an explicit environment always goes
// through the launcher, so the environment (which holds the agent's
// credential) is never on a command line and the pane's process gets
// exactly it.

func TestSpawnIn_ExplicitEnvGoesThroughTheLauncherFile(t *testing.T) {
	rec := newRecorder().on("has-session -t =loop-a", exit1("can't find session: loop-a"))
	r, _ := newTestRunner(t, rec, nil)
	r.opt.Launcher = []string{"/bin/the-loop", "internal-exec"}
	spec := loop.SpawnSpec{Argv: []string{"h", "--", "short prompt"}, Cwd: "/", Env: []string{"PATH=/bin", "THE_LOOP_AGENT_TOKEN=agent-secret"}}
	if err := r.SpawnIn(context.Background(), "loop-a", spec); err != nil {
		t.Fatal(err)
	}
	for _, argv := range rec.argvs() {
		if strings.Contains(strings.Join(argv, " "), "agent-secret") {
			t.Fatalf("the credential is on a tmux command line: %q", argv)
		}
	}
	got := rec.argvs()
	last := got[len(got)-1]
	file := last[len(last)-1]
	t.Cleanup(func() { os.Remove(file) })
	want := respawnList("loop-a", "respawn-pane", "-k", "-t", "=loop-a:^.{top-left}", "-c", "/", "--", "/bin/the-loop", "internal-exec", file)
	if !reflect.DeepEqual(last, want) {
		t.Fatalf("respawn = %q, want %q", last, want)
	}
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), `"THE_LOOP_AGENT_TOKEN=agent-secret"`) || !strings.Contains(string(data), `"explicitEnv":true`) {
		t.Fatalf("launch file holds %q", data)
	}
}

func TestSpawnIn_ExplicitEnvWithoutLauncherIsRefused(t *testing.T) {
	rec := newRecorder()
	r, _ := newTestRunner(t, rec, nil)
	err := r.SpawnIn(context.Background(), "loop-a", loop.SpawnSpec{Argv: []string{"h"}, Env: []string{"A=1"}})
	if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), "Launcher") {
		t.Fatalf("err = %v", err)
	}
	assertArgv(t, rec, [][]string{})
}

func TestExecEnv_ExplicitKeepsOnlyThePanesTerminalVariables(t *testing.T) {
	pane := []string{"TERM=tmux-256color", "TMUX=/tmp/tmux-1/s,1,0", "TMUX_PANE=%3", "THE_LOOP_SLACK_BOT_TOKEN=leaked", "HOME=/server"}
	spec := launchSpec{ExplicitEnv: true, Env: []string{"HOME=/me", "TERM=xterm", "THE_LOOP_AGENT_TOKEN=a"}}
	got := execEnv(spec, pane)
	want := []string{"HOME=/me", "THE_LOOP_AGENT_TOKEN=a", "TERM=tmux-256color", "TMUX=/tmp/tmux-1/s,1,0", "TMUX_PANE=%3"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("env = %q, want %q", got, want)
	}
	if got := execEnv(launchSpec{}, pane); !reflect.DeepEqual(got, pane) {
		t.Fatalf("a spec without env: %q", got)
	}
}
