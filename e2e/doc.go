// Package e2e holds the end-to-end tests that drive the real Claude Code
// CLI through the-loop's binary, offline, against the fake Messages API of
// internal/fakeapi (`just e2e`). Without Claude Code installed they skip,
// unless THE_LOOP_E2E=1, when they fail.
package e2e
