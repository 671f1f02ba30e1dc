package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpdateJSONObject_AWriteDuringTheEditIsKept: Claude Code
// writes ~/.claude.json without the-loop's lock. A write that lands between
// the read and the replace is seen by the re-read before replacing, and the
// edit starts over on it, so neither update is lost.
func TestUpdateJSONObject_AWriteDuringTheEditIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	writeFile(t, path, `{"numStartups": 1}`, 0o600)
	calls := 0
	err := updateJSONObject(path, func(doc map[string]any) (bool, error) {
		calls++
		if calls == 1 { // Claude Code writes meanwhile
			writeFile(t, path, `{"numStartups": 2, "userID": "abc"}`, 0o600)
		}
		doc["ours"] = true
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	doc := readJSON(t, path)
	if doc["ours"] != true || doc["userID"] != "abc" || doc["numStartups"] != float64(2) {
		t.Fatalf("after the edit: %v (the concurrent write or ours was lost)", doc)
	}
	if calls != 2 {
		t.Fatalf("edit ran %d times, want 2 (once more on the new content)", calls)
	}
}

// TestUpdateJSONObject_AFileThatCannotBeParsedIsNeverReplaced: when the
// re-read finds a file that does not parse (its writer is mid-write, or
// broke it), the-loop reports it and never renames over it.
func TestUpdateJSONObject_AFileThatCannotBeParsedIsNeverReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	writeFile(t, path, `{"numStartups": 1}`, 0o644)
	half := `{"numStartups": 2, "projects": {"/x": {"allowed`
	err := updateJSONObject(path, func(doc map[string]any) (bool, error) {
		writeFile(t, path, half, 0o644)
		doc["ours"] = true
		return true, nil
	})
	if err == nil || !strings.Contains(err.Error(), "left untouched") || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want one naming %s as left untouched", err, path)
	}
	if got, _ := os.ReadFile(path); string(got) != half {
		t.Fatalf("the file was replaced: %q", got)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp-*")); len(m) != 0 {
		t.Fatalf("temp files left: %v", m)
	}
}

// TestUpdateJSONObject_AFileThatKeepsChangingIsLeftToItsWriter: a writer
// that never stops makes the edit give up after its tries, saying so, with
// the writer's content in place.
func TestUpdateJSONObject_AFileThatKeepsChangingIsLeftToItsWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	writeFile(t, path, `{"n": 0}`, 0o600)
	n := 0
	err := updateJSONObject(path, func(doc map[string]any) (bool, error) {
		n++
		writeFile(t, path, `{"n": `+strings.Repeat("1", n)+`}`, 0o600)
		doc["ours"] = true
		return true, nil
	})
	if err == nil || !strings.Contains(err.Error(), "kept changing") {
		t.Fatalf("err = %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"n": `+strings.Repeat("1", n)+`}` {
		t.Fatalf("replaced over the writer: %q", got)
	}
}
