package main

import (
	"strings"
	"testing"
)

// TestConfigValidate_ChecksWhatStartWillHit: a cwd or promptFile that does
// not exist fails validate (exit 2); standingSessions without enabled and
// ignored keys are warnings (exit 0); a bad name points at its .name key
// and shows a valid one.
func TestConfigValidate_ChecksWhatStartWillHit(t *testing.T) {
	e := newEnv(t)
	e.config("standingSessions:\n  enabled: true\n  sessions:\n    - {name: a, cwd: ./absent}\n    - {name: b, promptFile: missing.md}\n")
	r := e.must(2, "config", "validate")
	for _, want := range []string{"standingSessions.sessions[0].cwd: '", "absent' does not exist", "standingSessions.sessions[1].promptFile: '", "missing.md' does not exist"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("validate does not say %q:\n%s", want, r.stderr)
		}
	}

	e.config("standingSessions:\n  sessions:\n    - {name: a}\nselfDiagnosis: {enabled: true}\nrouting: {workspace: {root: /tmp}}\n")
	r = e.must(0, "config", "validate")
	for _, want := range []string{"warning: standingSessions.enabled: not true", "warning: selfDiagnosis: accepted, ignored", "warning: routing.workspace: accepted, ignored"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("validate does not warn %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "valid (3 warnings)") {
		t.Errorf("stdout %q, want valid (3 warnings)", r.stdout)
	}

	e.config("standingSessions:\n  enabled: true\n  sessions:\n    - {name: My_Agent}\n")
	r = e.must(2, "config", "validate")
	if !strings.Contains(r.stderr, "standingSessions.sessions[0].name: 'My_Agent' is not") || !strings.Contains(r.stderr, "e.g. 'my-agent'") {
		t.Errorf("a bad name is not pointed at with a valid one:\n%s", r.stderr)
	}
}
