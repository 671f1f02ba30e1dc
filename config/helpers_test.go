package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeConfig writes body to a cli-config.yaml in a fresh temp dir.
func writeConfig(t testing.TB, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cli-config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// mustContain fails unless s contains every want.
func mustContain(t *testing.T, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("message does not contain %q:\n%s", w, s)
		}
	}
}

// noPointers fails when a message renders a key path as a JSON pointer.
func noPointers(t *testing.T, s string) {
	t.Helper()
	for _, bad := range []string{"/standingSessions", "/routing", "/service", "/channels", "#/", "/properties/"} {
		if strings.Contains(s, bad) {
			t.Errorf("message uses pointer style (%q):\n%s", bad, s)
		}
	}
}
