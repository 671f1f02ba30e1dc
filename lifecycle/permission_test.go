package lifecycle

import (
	"context"
	"slices"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// A claude session's permission mode reaches its spawn as
// --permission-mode before the harness arguments: a declared entry's own,
// and the block's for a created session; a session without one gets none.
func TestStart_PermissionModeIsPassedToTheSpawn(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cfg := testConfig(t, "alpha", "beta")
	cfg.Standing.Sessions[0].PermissionMode = "manual"
	cfg.Standing.Sessions[0].HarnessArgs = []string{"--model", "opus"}
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "", false); err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	var alpha, beta []string
	for _, sp := range r.Spawns {
		if slices.Contains(sp.Argv, "--model") {
			alpha = sp.Argv
		} else {
			beta = sp.Argv
		}
	}
	i := slices.Index(alpha, "--permission-mode")
	if i < 0 || alpha[i+1] != "manual" || slices.Index(alpha, "--model") < i {
		t.Fatalf("alpha's argv %q, want --permission-mode manual before its harness arguments", alpha)
	}
	if slices.Contains(beta, "--permission-mode") {
		t.Fatalf("beta's argv %q, want no permission mode", beta)
	}

	cfg.Standing.PermissionMode = "plan"
	cwd := cfg.Standing.Sessions[0].Cwd
	if res, err := s.CreateStanding(ctx, cfg, loop.StandingCreateRequest{Name: "gamma", Harness: "claude", Cwd: cwd, Start: true}); err != nil || !res.OK {
		t.Fatalf("create: %+v %v", res, err)
	}
	gamma := r.Spawns[len(r.Spawns)-1].Argv
	if i := slices.Index(gamma, "--permission-mode"); i < 0 || gamma[i+1] != "plan" {
		t.Fatalf("a created session's argv %q, want the block's --permission-mode plan", gamma)
	}
}
