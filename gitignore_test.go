package loop

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGitignore_IgnoresWhatTheRecipesWrite: what `just run`, `just build`
// and `just release` write in the checkout — the example config's state
// (its store and service.token), the stand-in agent's folder, bin/ and
// dist/ — is ignored by git, so `git status` stays clean and `git add -A`
// never commits a token.
func TestGitignore_IgnoresWhatTheRecipesWrite(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	if err := exec.Command("git", "rev-parse", "--show-toplevel").Run(); err != nil {
		t.Skip("not in a git checkout")
	}
	paths := []string{
		"examples/.the-loop/the-loop.db", "examples/.the-loop/service.token", "examples/.the-loop/local/service.pid",
		".the-loop/demo-agent/log.jsonl", "bin/the-loop", "bin/demo/claude", "dist/checksums.txt",
	}
	out, _ := exec.Command("git", append([]string{"check-ignore", "--no-index"}, paths...)...).Output()
	ignored := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		ignored[p] = true
	}
	for _, p := range paths {
		if !ignored[p] {
			t.Errorf("git does not ignore %s", p)
		}
	}
	for _, kept := range []string{"examples/cli-config.yaml", "justfile", ".goreleaser.yaml"} {
		if exec.Command("git", "check-ignore", "--no-index", "-q", kept).Run() == nil {
			t.Errorf("git ignores %s, which is committed", kept)
		}
	}
}
