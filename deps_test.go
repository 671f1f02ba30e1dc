package loop_test

import (
	"os/exec"
	"strings"
	"testing"
)

// deps lists the packages pkgs depend on (go list -deps), test files left
// out.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v", pkgs, err)
	}
	return strings.Fields(string(out))
}

// TestDeps_SurfacesReachNoStore: http and channels depend on the root
// package's interfaces, never on the store or bbolt (nor on lifecycle,
// which holds the store).
func TestDeps_SurfacesReachNoStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, d := range deps(t, "./http", "./channels/...") {
		for _, banned := range []string{"github.com/the-loop-dev/the-loop/store", "github.com/the-loop-dev/the-loop/lifecycle", "go.etcd.io/bbolt"} {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("./http or ./channels/... depends on %s", d)
			}
		}
	}
}

// TestDeps_SDKIsLight: the SDK links the standard library and the root
// package only — no echo, bbolt, looplab/fsm, YAML or JSON Schema library,
// slack-go or the MCP SDK.
func TestDeps_SDKIsLight(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	std := map[string]bool{}
	out, err := exec.Command("go", "list", "std").Output()
	if err != nil {
		t.Fatalf("go list std: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		std[p] = true
	}
	for _, d := range deps(t, "./sdk") {
		if std[d] || d == "github.com/the-loop-dev/the-loop" || d == "github.com/the-loop-dev/the-loop/sdk" {
			continue
		}
		t.Errorf("./sdk depends on %s: the SDK may link only the standard library and the root package", d)
	}
}
