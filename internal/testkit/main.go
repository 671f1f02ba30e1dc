package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// mainRunning is set by Main: the fakes are built only in a test binary
// that removes them when it ends.
var mainRunning atomic.Bool

// Main runs a test binary's tests (m.Run) and then removes what testkit
// made for them outside their temp dirs: the build dir of the fake agent
// and the fake gh, $TMPDIR/the-loop-fakeagent-<pid>. A package whose tests
// use FakeAgent, FakeGH or Launcher calls it from its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
//
// Without it those helpers fail the test, naming this remedy.
func Main(m *testing.M) int {
	mainRunning.Store(true)
	code := m.Run()
	if err := os.RemoveAll(buildDir()); err != nil {
		fmt.Fprintf(os.Stderr, "testkit: could not remove the fakes' build dir %s: %v\n", buildDir(), err)
		code = max(code, 1)
	}
	return code
}

// buildDir is where this test binary builds the fakes.
func buildDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("the-loop-fakeagent-%d", os.Getpid()))
}

// needMain fails the test unless Main runs this test binary's tests.
func needMain(t testing.TB) {
	t.Helper()
	if !mainRunning.Load() {
		t.Fatalf("the fakes' build dir %s would outlive this test binary: its package's TestMain must call testkit.Main "+
			"(func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) })", buildDir())
	}
}
