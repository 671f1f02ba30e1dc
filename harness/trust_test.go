package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestSeedTrust_UnseedRemovesOnlyWhatSeedAdded(t *testing.T) {
	home := t.TempDir()
	env := func(string) string { return "" }
	mine, theirs := t.TempDir(), t.TempDir()
	codexCfg := filepath.Join(home, ".codex", "config.toml")
	geminiCfg := filepath.Join(home, ".gemini", "trustedFolders.json")
	for path, content := range map[string]string{
		codexCfg:                            "# the operator's\n[projects." + TOMLQuote(theirs) + "]\ntrust_level = \"trusted\"\n",
		geminiCfg:                           `{"` + theirs + `": "TRUST_FOLDER"}`,
		filepath.Join(home, ".claude.json"): `{"projects": {"` + theirs + `": {"hasTrustDialogAccepted": true}}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	seeders := []loop.Harness{
		NewClaude(ClaudeOptions{TrustEnabled: true, Env: env, Home: home}),
		NewCodex(CodexOptions{TrustEnabled: true, Env: env, Home: home}),
		NewGemini(GeminiOptions{TrustEnabled: true, Env: env, Home: home}),
	}
	for _, s := range seeders {
		added, err := s.SeedTrust(mine, nil)
		if err != nil || len(added) != 1 || added[0] != mine {
			t.Fatalf("%T seeding %s: added %v, %v", s, mine, added, err)
		}
		if added, err := s.SeedTrust(theirs, nil); err != nil || len(added) != 0 {
			t.Fatalf("%T seeding the operator's %s: added %v, %v", s, theirs, added, err)
		}
		if err := s.UnseedTrust([]string{mine}); err != nil {
			t.Fatalf("%T unseeding: %v", s, err)
		}
	}
	codex := readTOMLFile(t, codexCfg)
	if codexTrustOf(codex, mine) != nil || codexTrustOf(codex, theirs) != "trusted" {
		t.Fatalf("codex config after unseed: %v", codex)
	}
	if data, _ := os.ReadFile(codexCfg); !strings.HasPrefix(string(data), "# the operator's\n") {
		t.Fatalf("codex config lost the operator's layout: %q", data)
	}
	for _, path := range []string{geminiCfg, filepath.Join(home, ".claude.json")} {
		data, _ := os.ReadFile(path)
		if !strings.Contains(string(data), theirs) {
			t.Fatalf("%s lost the operator's entry: %s", path, data)
		}
	}
	if data, _ := os.ReadFile(geminiCfg); strings.Contains(string(data), mine) {
		t.Fatalf("gemini kept the seeded entry: %s", data)
	}
	if data, _ := os.ReadFile(filepath.Join(home, ".claude.json")); strings.Count(string(data), "hasTrustDialogAccepted") != 1 {
		t.Fatalf("claude kept the seeded trust: %s", data)
	}
}
