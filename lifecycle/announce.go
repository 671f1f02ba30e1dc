package lifecycle

import (
	"context"
	"fmt"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/store"
)

// Announcer posts a standing session's announcement — the message whose
// thread becomes the session's Slack surface (original §9.2) —
// and returns that thread's ts. It is the Slack process boundary: lifecycle
// imports no Slack client (channels.Announcer implements it).
type Announcer interface {
	Announce(ctx context.Context, cfg *config.Config, a loop.Announcement) (thread string, err error)
}

// announce runs after a successful start or resume (original §9.2). A
// session with Slack enabled (its entry and channels.slack) and no thread
// yet is announced; success records the thread on the record and binds it
// to "standing:<name>" in one transition (standing.announced), failure is
// standing.announce_failed. The session is up either way; rec is returned
// as it now stands.
func (st *standingStart) Announce(ctx context.Context, rec *loop.StandingRecord) *loop.StandingRecord {
	s, def := st.s, st.def
	if s.Announcer == nil || rec == nil || !def.SlackEnabled || !st.cfg.Slack.Enabled || rec.SlackThread != "" {
		return rec
	}
	channel := def.SlackChannel
	if channel == "" {
		channel = st.cfg.Slack.Channel
	}
	thread, err := s.Announcer.Announce(ctx, st.cfg, loop.Announcement{Name: def.Name, Harness: rec.Harness, Target: st.Target(), Channel: channel})
	if err == nil && thread == "" {
		err = fmt.Errorf("the channel returned no thread")
	}
	if err != nil {
		s.announceFailed(def.Name, loop.ErrorMessage(err))
		return rec
	}
	ref := loop.StandingRef(def.Name)
	out, err := s.transitionWith(ctx, def.Name, engine.EvAnnounced, func(r *loop.StandingRecord) error {
		if r.SlackThread != "" {
			return loop.Internal("the record already names thread %s", r.SlackThread)
		}
		r.SlackThread, r.SlackChannel = thread, channel
		return nil
	}, func(tx *store.Tx) error {
		return tx.BindThread(thread, ref, channel)
	}, s.event("standing.announced", loop.LevelInfo,
		loop.F("standing", def.Name), loop.F("channel", channel), loop.F("thread", thread)))
	if err != nil {
		s.announceFailed(def.Name, fmt.Sprintf("posted thread %s in %s, but it could not be recorded: %s", thread, channel, loop.ErrorMessage(err)))
		return rec
	}
	return out
}

// announceFailed records standing.announce_failed (warning). A failure to
// record it is not the start's failure: the session is up.
func (s *Service) announceFailed(name, msg string) {
	_ = s.Emit(s.event("standing.announce_failed", loop.LevelWarning, loop.F("standing", name), loop.F("error", msg)))
}
