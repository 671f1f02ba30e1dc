package lifecycle

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// Misconfigured is the single row a malformed standingSessions block renders
// as in start and status (original §7.4).
func Misconfigured(err error) loop.StandingRow {
	return loop.StandingRow{Name: "standingSessions", Outcome: loop.OutcomeMisconfigured, Detail: loop.ErrorMessage(err)}
}

// wouldStart reports whether `the-loop start` would start the row's session
// (decisions D6): a declared entry with autoStart, or a created session whose
// record says autoStart.
func wouldStart(r loop.StandingRow) bool {
	if r.Declared {
		return r.AutoStart
	}
	return r.Origin == loop.OriginCreated && r.AutoStart
}

// StandingStatus is status's standing half: a row per declared or recorded
// session, and ok unless a session start would have started is not running
// (only with standingSessions.enabled). A malformed block is one
// misconfigured row and not ok.
func (s *Service) StandingStatus(ctx context.Context, cfg *config.Config) ([]loop.StandingRow, bool) {
	rows, err := s.ListStanding(ctx, cfg)
	if err != nil {
		return []loop.StandingRow{Misconfigured(err)}, false
	}
	ok := true
	for _, r := range rows {
		if r.Status == loop.StatusFailed { // the supervisor gave up on it
			ok = false
		}
	}
	if cfg.Standing != nil && cfg.Standing.Enabled {
		for _, r := range rows {
			if (wouldStart(r) && !r.Running) || r.Status == loop.StatusBroken {
				ok = false
			}
		}
	}
	return rows, ok
}

// StartAutoStanding is start's standing half: with standingSessions.enabled, every
// session that auto-starts; otherwise none, and a disabled note for the
// caller to print.
func (s *Service) StartAutoStanding(ctx context.Context, cfg *config.Config) (rows []loop.StandingRow, ok bool, disabled bool) {
	if cfg.StandingErr != nil {
		return []loop.StandingRow{Misconfigured(cfg.StandingErr)}, false, false
	}
	if cfg.Standing == nil || !cfg.Standing.Enabled {
		return nil, true, true
	}
	if err := s.tmuxMissing("start"); err != nil {
		return []loop.StandingRow{{Name: "standingSessions", Outcome: loop.OutcomeFailed, Detail: err.Error()}}, false, false
	}
	res, err := s.StartStanding(ctx, cfg, "", true)
	if err != nil {
		return []loop.StandingRow{Misconfigured(err)}, false, false
	}
	return res.Sessions, res.OK, false
}
