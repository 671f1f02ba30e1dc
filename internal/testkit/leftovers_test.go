package testkit_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv marks this test binary's run of itself in
// TestMain_LeavesNothingInTMPDIR.
const childEnv = "THE_LOOP_TESTKIT_LEFTOVERS_CHILD"

// TestMain_LeavesNothingInTMPDIR: this package's fake-agent tests, run by
// a test binary of their own with a TMPDIR of their own, leave that TMPDIR
// empty when the binary ends: the fakes' build dir, the agents' dirs and
// the tests' temp dirs are all gone.
func TestMain_LeavesNothingInTMPDIR(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		t.Skip("the child run")
	}
	tmp := t.TempDir()
	const run = "^(TestFakeAgent_LogsItsStartAndExitsByItself|TestFakeAgent_InTmuxQueuesAndShowsAPermissionDialog)$"
	cmd := exec.Command(os.Args[0], "-test.run", run, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestFakeAgent_LogsItsStartAndExitsByItself") {
		t.Fatalf("the child run: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) > 0 {
		t.Errorf("the tests left %v in their TMPDIR %s", left, tmp)
	}
}
