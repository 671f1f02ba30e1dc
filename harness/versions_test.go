package harness

import (
	"os"
	"strings"
	"testing"
)

// TestPinnedVersionsMatchCI: .ci/run installs exactly the releases the
// adapters were checked against, where the end-to-end tests look for them.
func TestPinnedVersionsMatchCI(t *testing.T) {
	data, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	run := string(data)
	for _, want := range []string{
		"the-loop/codex/" + CodexVersion + `"`, "@openai/codex@" + CodexVersion,
		"the-loop/gemini/" + GeminiVersion + `"`, "@google/gemini-cli@" + GeminiVersion,
	} {
		if !strings.Contains(run, want) {
			t.Errorf(".ci/run does not contain %q", want)
		}
	}
}
