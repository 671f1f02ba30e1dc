package harness

import (
	"slices"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestCheckSessionID_EachHarnessTakesOnlyItsCLIsIDs(t *testing.T) {
	adapters := []loop.Harness{NewClaude(ClaudeOptions{}), NewCodex(CodexOptions{}), NewGemini(GeminiOptions{})}
	good := []string{
		"0f8fad5b-d9cb-469f-a165-70867728950e", // claude, gemini: a v4
		"01a23137-6aa2-7403-81f6-959f1fab0e62", // codex 0.171.0: a v7 (testdata/codex)
	}
	bad := []string{"", "x", "../../../../tmp/secret", "--dangerously-skip-permissions",
		"0F8FAD5B-D9CB-469F-A165-70867728950E", "0f8fad5b-d9cb-469f-a165-70867728950e\n", " 0f8fad5b-d9cb-469f-a165-70867728950e",
		"0f8fad5b-d9cb-469f-a165-70867728950e/../x", "0f8fad5bd9cb469fa16570867728950e"}
	for _, a := range adapters {
		for _, id := range good {
			if err := a.CheckSessionID(id); err != nil {
				t.Errorf("%s refused %q: %v", a.Name(), id, err)
			}
		}
		for _, id := range bad {
			if err := a.CheckSessionID(id); loop.ErrorCode(err) != loop.EINVALID {
				t.Errorf("%s took %q (%v)", a.Name(), id, err)
			}
			if argv, err := a.ResumeArgv(id, nil, "p"); err == nil || slices.Contains(argv, id) {
				t.Errorf("%s resume argv for %q: %q %v", a.Name(), id, argv, err)
			}
		}
	}
	if err := (Cursor{}).CheckSessionID(good[0]); loop.ErrorCode(err) != loop.EINVALID {
		t.Errorf("cursor took an id: %v", err)
	}
}

func TestClaudeReadTranscript_RefusesAnIDThatIsAPath(t *testing.T) {
	c := NewClaude(ClaudeOptions{Env: func(string) string { return t.TempDir() }})
	if _, err := c.ReadTranscript(t.TempDir(), "../../../../tmp/secret", 5); loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("read transcript of a path id: %v, want EINVALID", err)
	}
}
