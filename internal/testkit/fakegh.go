package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// ghPackage is the import path of the fake gh program.
const ghPackage = "github.com/the-loop-dev/the-loop/internal/fakegh"

// ghBuild is the one build of the fake gh per test binary (beside the fake
// agent's, so removeStaleBuilds clears it too).
var ghBuild struct {
	once sync.Once
	path string
	err  error
}

func fakeGHBinary(t testing.TB) string {
	t.Helper()
	needMain(t)
	ghBuild.once.Do(func() {
		dir := buildDir()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			ghBuild.err = err
			return
		}
		goBin, err := exec.LookPath("go") // go test puts its own GOROOT/bin first on PATH
		if err != nil {
			ghBuild.err = fmt.Errorf("building the fake needs the go command on PATH: %w", err)
			return
		}
		out := filepath.Join(dir, "fakegh")
		cmd := exec.Command(goBin, "build", "-buildvcs=false", "-o", out, ghPackage)
		if _, file, _, ok := runtime.Caller(0); ok {
			if root := filepath.Join(filepath.Dir(file), "..", ".."); isDir(root) {
				cmd.Dir = root
			}
		}
		if msg, err := cmd.CombinedOutput(); err != nil {
			ghBuild.err = fmt.Errorf("go build %s: %w\n%s", ghPackage, err, msg)
			return
		}
		ghBuild.path = out
	})
	if ghBuild.err != nil {
		t.Fatalf("could not build the fake gh: %v", ghBuild.err)
	}
	return ghBuild.path
}

// GH is a fake gh for one test: a `gh` wrapper script in a bin directory
// (put it on PATH) that records every call's argv and exits with the code
// the test sets.
type GH struct {
	dir string
}

// FakeGH builds the fake gh (once per test binary) and writes a `gh`
// wrapper for it into binDir, its log in a fresh directory.
func FakeGH(t testing.TB, binDir string) *GH {
	t.Helper()
	bin := fakeGHBinary(t)
	g := &GH{dir: t.TempDir()}
	script := fmt.Sprintf("#!/bin/sh\nFAKE_GH_DIR=%s; export FAKE_GH_DIR\nexec %s \"$@\"\n", shellQuote(g.dir), shellQuote(bin))
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(binDir, "gh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

// ExitWith makes every later call exit with code.
func (g *GH) ExitWith(t testing.TB, code int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(g.dir, "exit-code"), []byte(strconv.Itoa(code)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Calls returns every call's arguments (after the program name), oldest
// first.
func (g *GH) Calls() [][]string {
	data, err := os.ReadFile(filepath.Join(g.dir, "calls.jsonl"))
	if err != nil {
		return nil
	}
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var argv []string
		if json.Unmarshal(sc.Bytes(), &argv) == nil {
			out = append(out, argv)
		}
	}
	return out
}
