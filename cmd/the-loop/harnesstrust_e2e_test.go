package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestStandingCreate_TrustOnlyForAProject(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	// A directory a group other than the operator's own may write (or,
	// not as root, one others may write).
	shared, mode := t.TempDir(), os.FileMode(0o775)
	if os.Geteuid() != 0 {
		mode = 0o777
	} else if err := os.Chown(shared, -1, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, mode); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cwd, why string }{
		{"/", "it is the root directory"},
		{"/tmp", "writable by group or others"},
		{e.home, "it is the home directory"},
		{shared, "writable by group or others (mode 0" + strconv.FormatUint(uint64(mode), 8) + ")"},
	} {
		r := e.must(2, "standing", "create", "x", "--cwd", tc.cwd)
		if !strings.Contains(r.stderr, "cwd '"+tc.cwd+"'") || !strings.Contains(r.stderr, tc.why) ||
			!strings.Contains(r.stderr, "routing.harnessTrust.enabled: false") {
			t.Errorf("--cwd %s: %s", tc.cwd, r)
		}
	}
	if _, ok := e.rows()["x"]; ok {
		t.Fatal("a refused create left a record")
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("%d agents spawned", n)
	}
	// A declared session's start is refused alike.
	e.config(strings.Replace(oneSession, "cwd: %DIR%", "cwd: /tmp", 1))
	if r := e.must(2, "standing", "start", "supervisor"); !strings.Contains(r.stderr, "cwd '/tmp'") {
		t.Fatalf("start in /tmp: %s", r)
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("%d agents spawned", n)
	}
	// routing.spawnWorkdir is named when the cwd came from it.
	e.config(strings.Replace(oneSession, "routing:\n", "routing:\n  spawnWorkdir: /\n", 1))
	if r := e.must(2, "standing", "create", "y"); !strings.Contains(r.stderr, "cwd (from routing.spawnWorkdir) '/'") {
		t.Fatalf("from spawnWorkdir: %s", r)
	}
	// With trust pre-seeding off nothing is seeded, and the session may be made.
	e.config(strings.Replace(oneSession, "routing:\n", "routing:\n  harnessTrust: {enabled: false}\n", 1))
	e.must(0, "standing", "create", "z", "--cwd", "/", "--no-start")
}

func TestStandingDelete_RemovesOnlyTheTrustItAdded(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	mine, theirs := t.TempDir(), t.TempDir()
	userConfig := filepath.Join(e.home, ".claude.json")
	before := map[string]any{"projects": map[string]any{theirs: map[string]any{"hasTrustDialogAccepted": true, "note": "the operator's"}}}
	data, _ := json.Marshal(before)
	if err := os.WriteFile(userConfig, data, 0o600); err != nil {
		t.Fatal(err)
	}
	e.must(0, "standing", "create", "mine", "--cwd", mine)
	e.must(0, "standing", "create", "theirs", "--cwd", theirs)
	trusted := func(dir string) (bool, map[string]any) {
		t.Helper()
		var doc struct {
			Projects map[string]map[string]any `json:"projects"`
		}
		raw, err := os.ReadFile(userConfig)
		if err != nil || json.Unmarshal(raw, &doc) != nil {
			t.Fatalf("reading %s: %v", userConfig, err)
		}
		v, _ := doc.Projects[dir]["hasTrustDialogAccepted"].(bool)
		return v, doc.Projects[dir]
	}
	if ok, _ := trusted(mine); !ok {
		t.Fatalf("the start did not pre-seed trust for %s", mine)
	}
	e.must(0, "standing", "delete", "mine")
	e.must(0, "standing", "delete", "theirs")
	if ok, entry := trusted(mine); ok {
		t.Fatalf("delete left the trust it added for %s: %v", mine, entry)
	}
	if ok, entry := trusted(theirs); !ok || entry["note"] != "the operator's" {
		t.Fatalf("delete touched the operator's own trust entry for %s: %v", theirs, entry)
	}
	evs := e.events("--type", "standing.deleted", "--standing", "mine")
	if len(evs) != 1 || !strings.Contains(strings.Join(fieldStrings(evs[0].Field("trust_removed")), ","), mine) {
		t.Fatalf("standing.deleted %+v", evs)
	}
}

// fieldStrings is an event field decoded as a list of strings.
func fieldStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
