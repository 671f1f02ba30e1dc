package config

import (
	"fmt"
	"strings"
	"testing"
)

// realisticConfig is the full fixture's shape with n standing sessions.
func realisticConfig(n int) string {
	var b strings.Builder
	b.WriteString(`version: "0.5.0"
state: {root: .the-loop}
routing:
  defaultHarness: claude
  spawnWorkdir: /srv/work
  harnessArgs: {claude: [--model, opus]}
  tmux: {socketName: the-loop, resumeProbeSeconds: 2, harnessKillGraceSeconds: 5}
service: {port: 4114, tokenEnv: THE_LOOP_TOKEN, allowedHosts: ["loop.internal:4114"]}
channels:
  slack: {enabled: true, channel: C0CENTRAL, authorizedUsers: [U1, U2], read: {mode: poll, intervalSeconds: 30}}
eventLog: {maxEvents: 50000}
standingSessions:
  enabled: true
  sessions:
`)
	for i := range n {
		fmt.Fprintf(&b, `    - name: agent-%02d
      description: standing agent number %d
      harnessArgs: [--model, sonnet]
      cwd: /srv/agents/%d
      prompt: Watch queue %d and help the operator.
      autoStart: %t
      slack: {enabled: true, channel: C%05d}
`, i, i, i, i, i%2 == 0, i)
	}
	return b.String()
}

func TestRealisticConfig_Loads(t *testing.T) {
	cfg, err := Load(writeConfig(t, realisticConfig(50)))
	if err != nil || cfg.StandingErr != nil || len(cfg.Standing.Sessions) != 50 {
		t.Fatalf("err = %v, StandingErr = %v", err, cfg.StandingErr)
	}
}

// BenchmarkLoad loads a realistic config with 50 standing sessions (the
// schema is compiled once per process, before the timer).
func BenchmarkLoad(b *testing.B) {
	path := writeConfig(b, realisticConfig(50))
	if _, err := Load(path); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileSchema is the one-off cost a CLI process pays.
func BenchmarkCompileSchema(b *testing.B) {
	for b.Loop() {
		if _, err := compileSchema(); err != nil {
			b.Fatal(err)
		}
	}
}
