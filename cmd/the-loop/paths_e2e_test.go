package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runFrom runs the-loop with the env's config from dir.
func (e *env) runFrom(dir string, args ...string) result {
	e.t.Helper()
	cmd := e.command(args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("running the-loop %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

const pathsSession = oneSession + "service: {enabled: false}\n"

// TestPaths_StateRootFollowsTheProjectNotTheCwd: with
// <proj>/.the-loop/cli-config.yaml, every directory sees <proj>/.the-loop,
// so a stop from elsewhere stops the agent a start from elsewhere started
// (before: another, empty store answered not-running with exit 0).
func TestPaths_StateRootFollowsTheProjectNotTheCwd(t *testing.T) {
	e := newEnv(t)
	proj, here, there := filepath.Join(e.dir, "proj"), filepath.Join(e.dir, "here"), filepath.Join(e.dir, "there")
	mkdirs(t, filepath.Join(proj, ".the-loop"), here, there)
	e.cfg = filepath.Join(proj, ".the-loop", "cli-config.yaml")
	e.config(pathsSession)

	if r := e.runFrom(here, "standing", "start"); r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	if _, err := os.Stat(filepath.Join(proj, ".the-loop", "the-loop.db")); err != nil {
		t.Fatalf("the store is not under the project: %v", err)
	}
	if _, err := os.Stat(filepath.Join(here, ".the-loop")); err == nil {
		t.Fatal("a state root was made in the working directory")
	}
	r := e.runFrom(there, "standing", "stop", "supervisor")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "supervisor  stopped") {
		t.Fatalf("stop from another directory: %s", r)
	}
}

// TestPaths_AStoreLeftAtTheOldPlaceIsNamed: a store where the
// cwd-relative state.root used to point, and none where it points now, makes
// every verb but stop exit 2 naming both paths and the remedy; stop uses the
// old store.
func TestPaths_AStoreLeftAtTheOldPlaceIsNamed(t *testing.T) {
	e := newEnv(t)
	proj, old := filepath.Join(e.dir, "proj"), filepath.Join(e.dir, "old")
	mkdirs(t, proj, old)
	e.cfg = filepath.Join(proj, "cli-config.yaml")
	// The store as an older the-loop run from old/ made it.
	e.config(strings.Replace(pathsSession, "state: {root: .the-loop}", "state: {root: "+filepath.Join(old, ".the-loop")+"}", 1))
	if r := e.runFrom(old, "standing", "start"); r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	e.config(pathsSession) // state.root .the-loop: now proj/.the-loop
	oldRoot, newRoot := filepath.Join(old, ".the-loop"), filepath.Join(proj, ".the-loop")

	for _, args := range [][]string{{"standing", "list"}, {"standing", "start"}, {"status"}, {"events"}, {"sessions", "list"}} {
		r := e.runFrom(old, args...)
		if r.code != 2 || !strings.Contains(r.stderr, oldRoot) || !strings.Contains(r.stderr, newRoot) ||
			!strings.Contains(r.stderr, "the-loop stop") || !strings.Contains(r.stderr, "absolute state.root") {
			t.Errorf("%v: %s", args, r)
		}
	}
	if n := len(e.starts()); n != 1 {
		t.Fatalf("%d starts", n)
	}
	r := e.runFrom(old, "standing", "stop", "supervisor")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "supervisor  stopped") || !strings.Contains(r.stderr, oldRoot) {
		t.Fatalf("stop with the old store: %s", r)
	}
	if err := os.Rename(oldRoot, newRoot); err != nil {
		t.Fatal(err)
	}
	if r := e.runFrom(old, "standing", "list"); r.code != 0 || !strings.Contains(r.stdout, "supervisor") {
		t.Fatalf("list after the move: %s", r)
	}
}
