//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadSettings_MergesTheHooksOfEverySettingsValue(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.json")
	doc := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}],
		"Notification": [{"matcher": "permission_prompt|idle_prompt", "hooks": [{"type": "command", "command": "n"}]}]}}`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := loadSettings([]string{file, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "b"}]}]}}`})
	if err != nil {
		t.Fatal(err)
	}
	if len(set["Stop"]) != 2 || set["Stop"][0].Hooks[0].Command != "a" || set["Stop"][1].Hooks[0].Command != "b" {
		t.Fatalf("Stop groups = %+v", set["Stop"])
	}
	n := set["Notification"][0]
	for subject, want := range map[string]bool{"permission_prompt": true, "idle_prompt": true, "auth_success": false, "permission_prompt_x": false} {
		if got := n.matches(subject); got != want {
			t.Errorf("matcher %q on %q = %v, want %v", n.Matcher, subject, got, want)
		}
	}
	if _, err := loadSettings([]string{filepath.Join(t.TempDir(), "missing.json")}); err == nil {
		t.Fatal("a missing settings file is not reported")
	}
}

func TestProjectDirName_ReplacesEveryNonAlphanumeric(t *testing.T) {
	if got, want := projectDirName("/home/u/my_repo.v2/é😀"), "-home-u-my-repo-v2----"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
