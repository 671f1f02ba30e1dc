package lifecycle

import (
	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
)

// HarnessBinary is the binary a spawn of harness (for session) would run,
// resolved as the spawn resolves it in this process's environment — or the
// error that spawn would fail with (EINVALID), naming whose PATH was
// searched and the remedy. Restart asks it before it stops anything.
func (s *Service) HarnessBinary(cfg *config.Config, harness, session string) (string, error) {
	adapter, err := s.Harness(harness, session)
	if err != nil {
		return "", err
	}
	bin, err := s.engine().Binary(cfg, adapter)
	if err != nil {
		return "", loop.Invalid("%s", err.Error())
	}
	return bin, nil
}

// SourceRestart is the Source of a Service that only checks, for `the-loop
// restart`, what the restarted service would find (HarnessBinary): its
// refusals name the restart's environment.
const SourceRestart = engine.SourceRestart
