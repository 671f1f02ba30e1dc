package lifecycle

import (
	"os"
	"path/filepath"
	"slices"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/store"
)

// Trust only for a project. With routing.harnessTrust.enabled a start
// pre-seeds the agent CLI's trust for the session's directory, and each
// CLI trusts a trusted folder's children too; so a directory that is the
// root, the home directory, or another user's (or writable by others) is
// refused before anything is recorded or seeded (fileperm.TrustDir).
// The entries a start added are recorded (StandingRecord.TrustAdded) and
// a delete removes exactly those.

// checkTrustCwd refuses cwd (as given: given; fromWorkdir when it came
// from routing.spawnWorkdir) as a directory to pre-seed trust for: an
// EINVALID *loop.Error naming the key, the directory, why, and the
// remedy. Nothing is checked with routing.harnessTrust.enabled false, or
// for a directory that is not there (the start refuses that itself).
func (s *Service) checkTrustCwd(cfg *config.Config, given string, fromWorkdir bool) error {
	if !cfg.Routing.HarnessTrust.Enabled {
		return nil
	}
	cwd, err := filepath.Abs(config.ExpandHome(given))
	if err != nil {
		return nil
	}
	if _, err := os.Stat(cwd); err != nil {
		return nil
	}
	why := fileperm.TrustDir(cwd, s.getenv("HOME"), os.Geteuid())
	if why == nil {
		return nil
	}
	key, remedy := "cwd", "give the session a project directory of your own (its cwd, or --cwd)"
	if fromWorkdir {
		key, remedy = "cwd (from routing.spawnWorkdir)", "set routing.spawnWorkdir, or the session's own cwd, to a project directory of your own"
	}
	return loop.Invalid("%s '%s' is not a directory the-loop pre-seeds an agent CLI's trust for: %v — the CLI would trust everything below it too. "+
		"%s; or set routing.harnessTrust.enabled: false, so that nothing is pre-seeded and the CLI asks about the folder itself",
		key, given, why, capitalise(remedy))
}

func capitalise(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func (s *Service) getenv(key string) string {
	if s.Getenv != nil {
		return s.Getenv(key)
	}
	return os.Getenv(key)
}

// addTrust records entries in the record's TrustAdded, each once.
func addTrust(r *loop.StandingRecord, entries []loop.TrustEntry) {
	for _, e := range entries {
		if !slices.Contains(r.TrustAdded, e) {
			r.TrustAdded = append(r.TrustAdded, e)
		}
	}
}

// unseedTrust removes the trust entries rec's starts added, except for a
// directory another standing session's record still runs in; it returns
// the directories it removed and the events to record (a removal that
// failed is a warning; the delete goes on).
func (s *Service) unseedTrust(rec *loop.StandingRecord) (removed []string, evs []loop.Event) {
	if len(rec.TrustAdded) == 0 {
		return nil, nil
	}
	inUse := map[string]bool{}
	_ = s.DB.View(func(tx *store.Tx) error {
		recs, err := tx.ListStanding()
		for _, r := range recs {
			if r.Name != rec.Name && r.Status != loop.StatusAbsent {
				inUse[r.Cwd] = true
				if real, err := filepath.EvalSymlinks(r.Cwd); err == nil {
					inUse[real] = true
				}
			}
		}
		return err
	})
	byHarness := map[string][]string{}
	var order []string
	for _, e := range rec.TrustAdded {
		if inUse[e.Dir] {
			continue
		}
		if _, seen := byHarness[e.Harness]; !seen {
			order = append(order, e.Harness)
		}
		byHarness[e.Harness] = append(byHarness[e.Harness], e.Dir)
	}
	for _, h := range order {
		dirs := byHarness[h]
		adapter, err := s.lookupHarness(h, rec.Name)
		if err == nil {
			err = adapter.UnseedTrust(dirs)
		}
		if err != nil {
			evs = append(evs, s.event("workspace.trust_unset_failed", loop.LevelWarning, loop.F("standing", rec.Name),
				loop.F("harness", h), loop.F("dirs", dirs), loop.F("error", loop.ErrorMessage(err))))
			continue
		}
		removed = append(removed, dirs...)
	}
	return removed, evs
}
