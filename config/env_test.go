package config

import (
	"os"
	"path/filepath"
	"testing"
)

// routing.harnessEnv, routing.harnessBinaries and
// standingSessions.sessions[].env validate and load.
func TestLoad_HarnessEnvAndBinaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cli-config.yaml")
	doc := `version: "1"
routing:
  harnessEnv: {ANTHROPIC_BASE_URL: "http://proxy", DEPTH: "3"}
  harnessBinaries: {claude: /opt/claude/bin/claude}
standingSessions:
  enabled: true
  sessions:
    - {name: sup, cwd: ` + dir + `, env: {PATH: /opt/bin}}
`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if errs := ValidateFile(path); len(errs) != 0 {
		t.Fatalf("validate: %v", errs)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Routing.HarnessEnv["ANTHROPIC_BASE_URL"] != "http://proxy" || cfg.Routing.HarnessEnv["DEPTH"] != "3" ||
		cfg.Routing.HarnessBinaries["claude"] != "/opt/claude/bin/claude" {
		t.Fatalf("routing %+v", cfg.Routing)
	}
	if d, ok := cfg.Standing.Get("sup"); !ok || d.Env["PATH"] != "/opt/bin" {
		t.Fatalf("entry %+v", d)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: \"1\"\nstandingSessions:\n  enabled: true\n  sessions:\n    - {name: sup, env: [PATH]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if errs := ValidateFile(bad); len(errs) == 0 {
		t.Fatal("an env that is a list validated")
	}
}
