package engine

import (
	"os/exec"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// testHost is a host with no store, no tmux and no harness: what the
// engine's own tests need of one (its clock, its ids, no start times).
type testHost struct{}

func (testHost) Store() *store.DB                   { return nil }
func (testHost) Runner(string) loop.Runner          { return nil }
func (testHost) LookPath(string) (string, error)    { return "", exec.ErrNotFound }
func (testHost) Now() time.Time                     { return time.Now().UTC() }
func (testHost) NewID() string                      { return "00000000-0000-4000-8000-000000000000" }
func (testHost) ClaimWait() time.Duration           { return 0 }
func (testHost) HookBinary() string                 { return "" }
func (testHost) Source() string                     { return "cli" }
func (testHost) Emit(...loop.Event) error           { return nil }
func (testHost) AddCredential(string)               {}
func (testHost) ProcStart(int) (uint64, bool, bool) { return 0, false, false }

func (testHost) Harness(name, _ string) (loop.Harness, error) {
	return nil, loop.Invalid("no harness %s", name)
}

func (testHost) Event(name, level string, fields ...loop.Field) loop.Event {
	return loop.Event{TS: time.Now().UTC(), Event: name, Level: level, Fields: fields}
}

// livePID starts a process that outlives the test and returns its pid.
func livePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}
