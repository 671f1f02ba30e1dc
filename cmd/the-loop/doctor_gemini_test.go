package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDoctor_ListsTheGeminiHookEntriesThatStay(t *testing.T) {
	w := newDoctorWorld(t, true)
	if rep, _ := w.report(); len(rep.find("gemini hooks")) != 0 {
		t.Fatalf("a gemini hooks line with no entries: %+v", rep.find("gemini hooks"))
	}
	settings := filepath.Join(w.home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	doc := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "/opt/the-loop hook --from-env --json"}]}],
		"AfterAgent": [{"hooks": [{"type": "command", "command": "/opt/the-loop hook --from-env --json"}]}],
		"BeforeTool": [{"hooks": [{"type": "command", "command": "my-own-hook"}]}]}}`
	if err := os.WriteFile(settings, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, _ := w.report()
	got := rep.find("gemini hooks")
	if len(got) != 1 || got[0].Status != checkOK || !strings.Contains(got[0].Detail, settings+" holds the-loop's hook") ||
		!strings.Contains(got[0].Detail, "for AfterAgent, SessionStart;") || strings.Contains(got[0].Detail, "BeforeTool") {
		t.Fatalf("gemini hooks: %+v", got)
	}
}
