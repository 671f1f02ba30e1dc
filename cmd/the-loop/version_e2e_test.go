package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestVersion_BuiltBinaryPrintsVersionAndCommit(t *testing.T) {
	var out, errb bytes.Buffer
	cmd := exec.Command(binary, "--version")
	cmd.Dir = t.TempDir() // no config anywhere: --version needs none
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("the-loop --version: %v\nstderr: %s", err, errb.String())
	}
	// One version — the CHANGELOG's newest release, nothing stamped here —
	// and one 12-digit commit, +dirty when the checkout has changes, or
	// "devel" when git is unavailable.
	want := regexp.MustCompile(`^the-loop ` + regexp.QuoteMeta(loop.ReleasedVersion) + ` \(([0-9a-f]{12}(\+dirty)?|devel)\)\n$`)
	if !want.MatchString(out.String()) {
		t.Errorf("stdout %q does not match %s", out.String(), want)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr %q, want nothing", errb.String())
	}
}
