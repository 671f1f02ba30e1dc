package lifecycle

import (
	"context"
	"fmt"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/store"
)

// announceWorkItem runs after `sessions start --slack` (original §9.1: the
// channel binds a thread when it first posts about a work item). A session
// that is up (started, resumed or already running) and whose work item has
// no thread yet is announced in channels.slack.channel; the thread is bound
// to the ref with session.announced in one transaction, so a work item
// keeps one thread across start, close and start. A failure is
// session.announce_failed (warning) and a warning line: the session is up
// either way. res is returned with a line saying what happened.
func (s *Service) announceWorkItem(ctx context.Context, cfg *config.Config, item loop.WorkItemRef, res loop.WorkItemStartResult) loop.WorkItemStartResult {
	if res.Outcome == loop.OutcomeFailed || res.Session == nil || s.Announcer == nil {
		return res
	}
	say := func(stream, format string, args ...any) {
		res.Messages = append(res.Messages, loop.Message{Stream: stream, Text: fmt.Sprintf(format, args...)})
	}
	if !cfg.Slack.Enabled {
		say("err", "note: Slack is disabled (channels.slack.enabled is false); nothing was announced")
		return res
	}
	ref := item.String()
	if thread, channel, ok := s.threadOf(ref); ok {
		say("out", "Slack thread %s in %s is already bound to %s", thread, channel, ref)
		return res
	}
	channel := cfg.Slack.Channel
	thread, err := s.Announcer.Announce(ctx, cfg, loop.Announcement{WorkItem: ref, Harness: res.Session.Harness,
		Target: res.Session.TmuxTarget, Channel: channel})
	if err == nil && thread == "" {
		err = fmt.Errorf("the channel returned no thread")
	}
	if err == nil {
		err = s.DB.Update(func(tx *store.Tx) error {
			if _, _, ok := tx.ThreadFor(ref); ok {
				return loop.Invalid("another start bound a thread to %s meanwhile; posted thread %s is left unbound", ref, thread)
			}
			if err := tx.BindThread(thread, ref, channel); err != nil {
				return err
			}
			ev := s.event("session.announced", loop.LevelInfo, loop.F("work_item", ref), loop.F("channel", channel), loop.F("thread", thread))
			return tx.AppendEvent(&ev)
		})
	}
	if err != nil {
		msg := loop.ErrorMessage(err)
		_ = s.Emit(s.event("session.announce_failed", loop.LevelWarning, loop.F("work_item", ref), loop.F("error", msg)))
		say("err", "warning: could not announce %s in Slack: %s", ref, msg)
		return res
	}
	say("out", "announced %s in Slack (channel %s, thread %s)", ref, channel, thread)
	return res
}

// threadOf returns the newest Slack thread bound to ref.
func (s *Service) threadOf(ref string) (thread, channel string, ok bool) {
	_ = s.DB.View(func(tx *store.Tx) error {
		thread, channel, ok = tx.ThreadFor(ref)
		return nil
	})
	return thread, channel, ok
}
