package config

import (
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestSupervision_DefaultsAndValues(t *testing.T) {
	cfg := loadStanding(t, "standingSessions:\n  enabled: true\n  sessions: [{name: a}]\n")
	if cfg.StandingErr != nil {
		t.Fatal(cfg.StandingErr)
	}
	if got, want := cfg.Supervision, DefaultSupervision(); got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	if got := cfg.Supervision.PolicyOf(cfg.Standing.Sessions[0]); got != loop.RestartOnFailure {
		t.Fatalf("policy of an entry without restart: %q", got)
	}
	cfg = loadStanding(t, `standingSessions:
  enabled: true
  resumePrompt: full
  startConcurrency: 4
  restart: {policy: always, maxDelaySeconds: 5, resetSeconds: 7, burst: 2, intervalSeconds: 30}
  sessions: [{name: a, restart: never}, {name: b}]
`)
	if cfg.StandingErr != nil {
		t.Fatal(cfg.StandingErr)
	}
	s := cfg.Supervision
	if s.ResumePrompt != ResumeFull || s.StartConcurrency != 4 || s.Restart != (RestartPolicy{Policy: "always", MaxDelaySeconds: 5, ResetSeconds: 7, Burst: 2, IntervalSeconds: 30}) {
		t.Fatalf("read %+v", s)
	}
	if got := s.PolicyOf(cfg.Standing.Sessions[0]); got != loop.RestartNever {
		t.Fatalf("entry a's policy %q, want never", got)
	}
	if got := s.PolicyOf(cfg.Standing.Sessions[1]); got != loop.RestartAlways {
		t.Fatalf("entry b's policy %q, want the default always", got)
	}
}

func TestSupervision_BadValuesAreRefusedNamingTheKey(t *testing.T) {
	for _, c := range []struct{ body, key string }{
		{"  restart: {policy: sometimes}\n", "standingSessions.restart.policy"},
		{"  restart: {burst: 0}\n", "standingSessions.restart.burst"},
		{"  restart: {maxDelaySeconds: -1}\n", "standingSessions.restart.maxDelaySeconds"},
		{"  restart: {resetSeconds: -3}\n", "standingSessions.restart.resetSeconds"},
		{"  resumePrompt: brief\n", "standingSessions.resumePrompt"},
		{"  startConcurrency: -2\n", "standingSessions.startConcurrency"},
		{"  sessions: [{name: a, restart: sometimes}]\n", "standingSessions.sessions[0].restart"},
	} {
		cfg := loadStanding(t, "standingSessions:\n  enabled: true\n"+c.body)
		if cfg.StandingErr == nil {
			t.Errorf("%s: accepted", c.body)
			continue
		}
		if loop.ErrorCode(cfg.StandingErr) != loop.EINVALID {
			t.Errorf("%s: code %s", c.body, loop.ErrorCode(cfg.StandingErr))
		}
		mustContain(t, cfg.StandingErr.Error(), c.key)
	}
}
