package lifecycle

import (
	loop "github.com/the-loop-dev/the-loop"
)

// tmuxMissing refuses a start when tmux is not on PATH: the
// refusal names it and its install command, and a tmux.not_found event
// records it. Without tmux nothing can be spawned and no liveness can be
// known, so this is said once, before any session is tried.
func (s *Service) tmuxMissing(verb string) error {
	if s.TmuxAvailable == nil {
		return nil
	}
	err := s.TmuxAvailable()
	if err == nil {
		return nil
	}
	msg := err.Error() + "; nothing was started"
	if eerr := s.Emit(s.event("tmux.not_found", loop.LevelError, loop.F("verb", verb), loop.F("error", err.Error()))); eerr != nil {
		msg += " (and the event could not be recorded: " + eerr.Error() + ")"
	}
	return &loop.Error{Code: loop.EINTERNAL, Message: msg, Err: err}
}
