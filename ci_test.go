package loop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVulncheck_SkipsOnlyWhenTheDatabaseIsUnreachable runs .ci/vulncheck
// (just lint's govulncheck step) with stand-ins for govulncheck.
func TestVulncheck_SkipsOnlyWhenTheDatabaseIsUnreachable(t *testing.T) {
	const skipped = "skipped: no vulnerability database"
	tests := []struct {
		name     string
		script   string // the stand-in's body
		wantCode int
		skipped  bool
	}{
		{"clean", "echo 'No vulnerabilities found.'; exit 0", 0, false},
		{"unreachable database", `echo 'govulncheck: fetching vulnerabilities: Get "https://db.invalid/index/modules.json.gz": dial tcp: lookup db.invalid: no such host' >&2; exit 1`, 0, true},
		{"refused connection", `echo 'govulncheck: fetching vulnerabilities: Get "https://db.invalid/": dial tcp 127.0.0.1:443: connect: connection refused' >&2; exit 1`, 0, true},
		{"findings", "echo 'Vulnerability #1: GO-2026-0001'; exit 3", 3, false},
		{"findings mentioning a network error", "echo 'fetching vulnerabilities … no such host (quoted in a finding)'; exit 3", 3, false},
		{"another failure", "echo 'govulncheck: loading packages: no Go files' >&2; exit 1", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := filepath.Join(t.TempDir(), "govulncheck")
			if err := os.WriteFile(fake, []byte("#!/bin/sh\n"+tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("bash", ".ci/vulncheck", fake, "./...").CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(out), skipped); code != tt.wantCode || got != tt.skipped {
				t.Errorf("exit %d (want %d), skipped %v (want %v); output:\n%s", code, tt.wantCode, got, tt.skipped, out)
			}
		})
	}
}
