package config

import (
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Supervision is what the service's supervisor and the start paths read of
// standingSessions: restart, resumePrompt and startConcurrency (Go version
// additions; the schema refuses values out of range, naming the key).
type Supervision struct {
	// Restart is standingSessions.restart.
	Restart RestartPolicy
	// ResumePrompt is standingSessions.resumePrompt: "notice" (default)
	// sends a resumed conversation the directive's first line and why it
	// was resumed; "full" re-sends the whole boot prompt.
	ResumePrompt string
	// StartConcurrency is standingSessions.startConcurrency: how many
	// spawns run at once in start-all and supervisor restarts (0: no limit).
	StartConcurrency int
}

// Resume prompts.
const (
	ResumeNotice = "notice"
	ResumeFull   = "full"
)

// RestartPolicy is standingSessions.restart.
type RestartPolicy struct {
	// Policy is the default of an entry's `restart` (default on-failure).
	Policy string
	// MaxDelaySeconds caps the backoff 1, 2, 4 … s (default 60).
	MaxDelaySeconds float64
	// ResetSeconds of running reset the attempt count (default 60).
	ResetSeconds float64
	// Burst restarts within IntervalSeconds are allowed; one more puts the
	// session in status failed (defaults 5 and 600).
	Burst           int
	IntervalSeconds float64
}

// DefaultSupervision is the defaults of Supervision.
func DefaultSupervision() Supervision {
	return Supervision{
		Restart: RestartPolicy{
			Policy:          loop.RestartOnFailure,
			MaxDelaySeconds: 60,
			ResetSeconds:    60,
			Burst:           5,
			IntervalSeconds: 600,
		},
		ResumePrompt: ResumeNotice,
	}
}

// MaxDelay is MaxDelaySeconds as a duration.
func (r RestartPolicy) MaxDelay() time.Duration { return seconds(r.MaxDelaySeconds) }

// Reset is ResetSeconds as a duration.
func (r RestartPolicy) Reset() time.Duration { return seconds(r.ResetSeconds) }

// Interval is IntervalSeconds as a duration.
func (r RestartPolicy) Interval() time.Duration { return seconds(r.IntervalSeconds) }

// PolicyOf is the restart policy of a definition: its own, else the default.
func (s Supervision) PolicyOf(def loop.StandingDefinition) string {
	if loop.ValidRestartPolicy(def.Restart) {
		return def.Restart
	}
	if loop.ValidRestartPolicy(s.Restart.Policy) {
		return s.Restart.Policy
	}
	return loop.RestartOnFailure
}

// readSupervision reads the keys out of the standingSessions mapping;
// values of the wrong type or out of range keep their default (the schema
// has reported them).
func readSupervision(block map[string]any, s Supervision) Supervision {
	r := mapping(block["restart"])
	if p := str(r, "policy", s.Restart.Policy); loop.ValidRestartPolicy(p) {
		s.Restart.Policy = p
	}
	if v := number(r, "maxDelaySeconds", s.Restart.MaxDelaySeconds); v >= 0 {
		s.Restart.MaxDelaySeconds = v
	}
	if v := number(r, "resetSeconds", s.Restart.ResetSeconds); v >= 0 {
		s.Restart.ResetSeconds = v
	}
	if v := int(number(r, "burst", float64(s.Restart.Burst))); v >= 1 {
		s.Restart.Burst = v
	}
	if v := number(r, "intervalSeconds", s.Restart.IntervalSeconds); v >= 0 {
		s.Restart.IntervalSeconds = v
	}
	if p := str(block, "resumePrompt", s.ResumePrompt); p == ResumeNotice || p == ResumeFull {
		s.ResumePrompt = p
	}
	if v := int(number(block, "startConcurrency", float64(s.StartConcurrency))); v >= 0 {
		s.StartConcurrency = v
	}
	return s
}
