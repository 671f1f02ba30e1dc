package harness

import (
	"os"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// TestPinnedVersionsMatchCI: `just agents` (which `just test` and .ci/run
// run) installs exactly the releases the adapters were checked against,
// where the end-to-end tests look for them (.ci/agent-cli NAME PACKAGE
// VERSION BIN: ~/.cache/the-loop/NAME/VERSION/bin/BIN).
func TestPinnedVersionsMatchCI(t *testing.T) {
	data, err := os.ReadFile("../justfile")
	if err != nil {
		t.Fatal(err)
	}
	recipes := string(data)
	for _, want := range []string{
		".ci/agent-cli codex @openai/codex " + CodexVersion + " codex THE_LOOP_CODEX_BIN\n",
		".ci/agent-cli gemini @google/gemini-cli " + GeminiVersion + " gemini THE_LOOP_GEMINI_BIN\n",
		".ci/agent-cli claude-code @anthropic-ai/claude-code " + testkit.ClaudeCodeVersion + " claude THE_LOOP_CLAUDE_BIN\n",
	} {
		if !strings.Contains(recipes, want) {
			t.Errorf("the justfile does not contain %q", want)
		}
	}
}
