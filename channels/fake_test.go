package channels

import (
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// fakeRunner is the shared hand-written stand-in for tmux.
type fakeRunner = testkit.FakeTmux

func newFakeRunner() *fakeRunner { return testkit.NewFakeTmux() }

// fakeHarness builds claude-like argv and is always ready.
type fakeHarness = testkit.FakeHarness
