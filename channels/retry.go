package channels

import (
	"context"
	"fmt"
	"slices"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels/slack"
	"github.com/the-loop-dev/the-loop/config"
)

// expiry is what a thread is told once its kept replies ran out of time.
type expiry struct {
	thread, channel, ref, why string
	n                         int
}

// retryKept tries the replies kept for sessions that could not take them,
// oldest first. Each is taken from the store in the
// transaction that records the attempt, before anything is pasted, so it
// is delivered at most once; one that still cannot be delivered goes back
// in its place, and the rest of its thread waits behind it, in order. A
// reply kept channels.slack.retrySeconds or longer is dropped
// (channel.dropped, undeliverable), and its thread is told so in one post;
// one whose thread is no longer bound to its ref (the session was deleted)
// is dropped unmapped. Only a store failure is an error.
func (p *Poller) retryKept(ctx context.Context, cfg *config.Config, sum *loop.PollSummary) error {
	kept, err := p.Threads.PendingReplies(ctx)
	if err != nil || len(kept) == 0 {
		return err
	}
	window := cfg.Slack.RetryWindow()
	r := &retryRound{p: p, cfg: cfg, sum: sum, window: window, secs: int(window / time.Second),
		now: p.now(), blocked: map[string]bool{}}
	for _, pr := range kept {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case r.now.Sub(pr.QueuedAt) >= r.window:
			err = r.expire(ctx, pr)
		case r.blocked[pr.Thread]:
			continue // an earlier reply of its thread went back: this one waits behind it
		default:
			err = r.retry(ctx, pr)
		}
		if err != nil {
			return err
		}
	}
	for _, e := range r.expired {
		p.notify(ctx, cfg, e, r.secs)
	}
	return nil
}

// retryRound is the state one retryKept carries from kept reply to kept
// reply: the summary it adds to, the retry window (and its seconds, as
// events and notices name it), the moment the round measures age against,
// the threads whose earlier reply went back (the rest of each waits), and
// the threads to tell that their replies expired, in the order they were
// first found.
type retryRound struct {
	p       *Poller
	cfg     *config.Config
	sum     *loop.PollSummary
	window  time.Duration
	secs    int
	now     time.Time
	blocked map[string]bool
	expired []*expiry
}

// expire drops pr, kept past the retry window, as undeliverable, in the
// transaction that takes it from the store, and notes it for the one
// notice its thread gets at the end of the round. A reply another cycle
// took already is passed over. Only a store failure is an error.
func (r *retryRound) expire(ctx context.Context, pr loop.PendingReply) error {
	svc, ch := r.p.Threads, loop.F("channel", ChannelSlack)
	taken, _, err := svc.TakeReply(ctx, pr.Seq, func(pr loop.PendingReply, _ string) []loop.Event {
		return []loop.Event{svc.NewEvent("channel.dropped", loop.LevelWarning, ch, loop.F("reason", ReasonUndeliverable),
			loop.F("work_item", pr.Ref), loop.F("thread", pr.Thread), loop.F("actor", pr.Author),
			loop.F("error", fmt.Sprintf("not delivered within %d s (channels.slack.retrySeconds): %s", r.secs, pr.Error)))}
	})
	if err != nil || taken == nil {
		return err
	}
	r.sum.Dropped++
	i := slices.IndexFunc(r.expired, func(e *expiry) bool { return e.thread == taken.Thread })
	if i < 0 {
		r.expired = append(r.expired, &expiry{thread: taken.Thread, channel: taken.Channel, ref: taken.Ref})
		i = len(r.expired) - 1
	}
	r.expired[i].n++
	r.expired[i].why = taken.Error
	return nil
}

// retry takes pr from the store to try it once more; when its thread is no
// longer bound to its ref (the session was deleted) the same transaction
// drops it unmapped instead. A reply another cycle took already is passed
// over. Only a store failure is an error.
func (r *retryRound) retry(ctx context.Context, pr loop.PendingReply) error {
	svc, ch := r.p.Threads, loop.F("channel", ChannelSlack)
	taken, ref, err := svc.TakeReply(ctx, pr.Seq, func(pr loop.PendingReply, ref string) []loop.Event {
		if ref == pr.Ref {
			return nil
		}
		return []loop.Event{svc.NewEvent("channel.dropped", loop.LevelInfo, ch, loop.F("reason", ReasonUnmapped),
			loop.F("thread", pr.Thread), loop.F("work_item", pr.Ref))}
	})
	if err != nil || taken == nil {
		return err
	}
	if ref != taken.Ref {
		r.sum.Dropped++
		return nil
	}
	return r.redeliver(ctx, taken)
}

// redeliver delivers taken, a kept reply now out of the store, into its
// session. One that may be tried again goes back in its place, with the
// attempt counted and its reason, and blocks the rest of its thread for
// this round; one that cannot be delivered (or has no work-item side to
// take it) is dropped undeliverable. Only a store failure is an error.
func (r *retryRound) redeliver(ctx context.Context, taken *loop.PendingReply) error {
	p := r.p
	in := Inbound{Thread: taken.Thread, Channel: taken.Channel, TS: taken.TS, WorkItem: taken.Ref,
		Author: taken.Author, Text: taken.Text}
	if _, standing := loop.ParseStandingRef(in.WorkItem); !standing && p.WorkItems == nil {
		p.dropped(in.WorkItem, in.Thread, "no work-item session can take a Slack reply in this version of the-loop")
		r.sum.Dropped++
		return nil
	}
	delivered, why, retry := p.deliver(ctx, r.cfg, in)
	switch {
	case delivered:
		r.sum.Delivered++
	case retry:
		taken.Attempts++
		taken.Error = why
		if _, err := p.Threads.KeepReply(ctx, *taken, nil, nil); err != nil {
			return err
		}
		r.blocked[taken.Thread] = true
	default:
		p.dropped(in.WorkItem, in.Thread, why)
		r.sum.Dropped++
	}
	return nil
}

// notify tells e's thread, in one post, that its kept replies were
// dropped; read back, the post only moves the thread's cursor. A post that
// fails is logged and recorded (channel.notice_failed); it is not tried
// again.
func (p *Poller) notify(ctx context.Context, cfg *config.Config, e *expiry, secs int) {
	text := p.Redactor.String(slack.Render(slack.UndeliveredNotice(e.ref, e.n, secs, e.why), cfg.Slack.Verbosity))
	p.postNotice(ctx, cfg, e.channel, e.thread, e.ref, text, "its replies were dropped")
}

// postNotice posts text (escaped and redacted already) in thread of
// channel ("": the configured one) as the poller's own notice about ref —
// read back, it only moves the cursor; a post that fails is logged (what
// the notice told) and recorded as channel.notice_failed.
func (p *Poller) postNotice(ctx context.Context, cfg *config.Config, channel, thread, ref, text, what string) {
	if channel == "" {
		channel = cfg.Slack.Channel
	}
	ts, err := p.clientFor(cfg.Slack).PostInThread(ctx, channel, thread, text)
	if err == nil {
		if p.notices == nil {
			p.notices = map[string]bool{}
		}
		p.notices[ts] = true
		return
	}
	msg := loop.ErrorMessage(err)
	p.log().Warn("slack: could not tell a thread "+what, "thread", thread, "work_item", ref, "error", msg)
	svc := p.Threads
	if err := svc.Emit(svc.NewEvent("channel.notice_failed", loop.LevelWarning, loop.F("channel", ChannelSlack),
		loop.F("work_item", ref), loop.F("thread", thread), loop.F("error", msg))); err != nil {
		p.log().Warn("channels: could not record channel.notice_failed", "error", err.Error())
	}
}
