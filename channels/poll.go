package channels

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels/slack"
	"github.com/the-loop-dev/the-loop/config"
)

// ChannelSlack is the channel field of every channel.* event.
const ChannelSlack = "slack"

// Reasons of channel.dropped and channel.mirror_skipped (original §5.13).
const (
	ReasonUnmapped        = "unmapped"
	ReasonSelfAuthored    = "self-authored"
	ReasonUnauthorized    = "unauthorized-actor"
	ReasonUndeliverable   = "undeliverable"
	ReasonStandingSession = "standing-session"
)

// Inbound is one reply read from a bound thread.
type Inbound struct {
	Thread   string // the thread's ts
	TS       string // the reply's ts
	WorkItem string // the ref the thread is bound to (set once recorded)
	Author   string // the member id
	Text     string
	IsBot    bool // posted by a bot, or by the-loop's own bot user
}

// WorkItems is the work-item side of the pipeline: mirroring a reply onto
// its work item (the answer of record) and delivering it into the work
// item's session (Mirror implements it). With none, a reply to a work item
// is recorded (channel.reply_received), mirrored nowhere, and dropped as
// undeliverable. Standing refs never reach it (original §9.4).
type WorkItems interface {
	// Mirror posts r on its work item and reports whether it did; it
	// records its own channel.mirrored or channel.mirror_failed.
	Mirror(ctx context.Context, cfg *config.Config, r Inbound) bool
	// Reply delivers r into the work item's session.
	Reply(ctx context.Context, cfg *config.Config, r Inbound) (delivered bool, err error)
}

// Poller runs inbound poll cycles over the bound Slack threads (original
// §9.3, §9.4; decisions D22, D25). One cycle runs at a time per Poller; it
// is safe for concurrent use (the service's loop and POST
// /api/v1/channels/poll share one).
type Poller struct {
	// Threads is the store of bound threads and the event log.
	Threads loop.ThreadLog
	// Standing delivers a reply bound to a standing session (its say).
	Standing loop.StandingService
	// WorkItems handles replies bound to work items (nil: they are dropped).
	WorkItems WorkItems
	// Log receives the cycle's warnings (a thread that could not be read,
	// auth.test failing); nil discards them. Nothing logged holds the token.
	Log *slog.Logger
	// Clock is the time a rate limit is measured against (nil: time.Now).
	Clock loop.Clock

	mu        sync.Mutex // one cycle at a time
	client    *slack.Client
	clientKey string
	// retryAt is when Slack's last rate limit lifts: cycles before it are
	// skipped (read under mu, or through limitedUntil).
	retryAt time.Time
}

// DefaultRetryAfter is how long a rate-limited poller waits when Slack's
// 429 names no Retry-After.
const DefaultRetryAfter = 30 * time.Second

func (p *Poller) now() time.Time {
	if p.Clock != nil {
		return p.Clock()
	}
	return time.Now()
}

// limitedUntil returns when Slack's last rate limit lifts (zero when none
// is in force).
func (p *Poller) limitedUntil() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.now().Before(p.retryAt) {
		return p.retryAt
	}
	return time.Time{}
}

func (p *Poller) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// clientFor keeps one client (and its cached bot id) while the settings
// that build it stay the same.
func (p *Poller) clientFor(sl config.Slack) *slack.Client {
	key := sl.APIURL + "\x00" + sl.BotTokenEnv
	if p.client == nil || p.clientKey != key {
		p.client, p.clientKey = slack.New(sl), key
	}
	return p.client
}

// Skipped reports why a cycle would not read Slack under cfg ("" when it
// would): Slack disabled, or a read mode other than poll.
func Skipped(cfg *config.Config) string {
	sl := cfg.Slack
	if !sl.Enabled {
		return "Slack is disabled (channels.slack.enabled is false)"
	}
	switch sl.ReadMode {
	case "poll":
		return ""
	case "socket":
		return "channels.slack.read.mode is socket, which this the-loop does not support — set read.mode: poll"
	default:
		return "channels.slack.read.mode is " + sl.ReadMode + ": replies are not read"
	}
}

// Poll runs one cycle (http.Poller): for each bound thread it reads the
// replies after the thread's cursor (every page) and processes them in
// order. Threads bound to a live session come first, newest binding first,
// then threads of closed work items, then tombstones (threads of deleted
// sessions), so that what matters most is read before Slack's rate limit
// can end a cycle. A 429 from Slack ends the cycle, records
// channel.rate_limited (a warning, once) and skips the cycles until its
// Retry-After has passed. A disabled channel, a read mode other than poll
// or a missing token skip the cycle; no bound thread means no Slack call at
// all. A thread that cannot be read is logged and left for the next cycle.
// Only a store failure is an error.
func (p *Poller) Poll(ctx context.Context, cfg *config.Config) (loop.PollSummary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum loop.PollSummary
	if why := Skipped(cfg); why != "" {
		sum.Skipped = why
		return sum, nil
	}
	if now := p.now(); now.Before(p.retryAt) {
		sum.Skipped = "Slack rate-limited the poller; reading again after " + p.retryAt.UTC().Format(time.RFC3339)
		return sum, nil
	}
	threads, err := p.Threads.Threads(ctx)
	if err != nil || len(threads) == 0 {
		return sum, err
	}
	threads = readOrder(threads)
	client := p.clientFor(cfg.Slack)
	if err := client.CheckToken(); err != nil {
		sum.Skipped = loop.ErrorMessage(err)
		return sum, nil
	}
	self, asked := "", false
	for _, th := range threads {
		channel := th.Channel
		if channel == "" {
			channel = cfg.Slack.Channel
		}
		replies, err := client.Replies(ctx, channel, th.ThreadTS, th.Cursor)
		if err != nil {
			if ctx.Err() != nil {
				return sum, ctx.Err()
			}
			if errors.Is(err, slack.ErrNoToken) {
				sum.Skipped = loop.ErrorMessage(err)
				return sum, nil
			}
			var limited *slack.RateLimitError
			if errors.As(err, &limited) {
				p.rateLimited(limited.RetryAfter, th)
				return sum, nil
			}
			p.log().Warn("slack: could not read a thread; it is read again next cycle",
				"thread", th.ThreadTS, "work_item", th.Ref, "channel", channel, "error", loop.ErrorMessage(err))
			continue
		}
		if len(replies) > 0 && !asked {
			asked = true
			if self, err = client.AuthTest(ctx); err != nil {
				p.log().Warn("slack: auth.test failed; only messages with a bot_id count as the bot's own", "error", loop.ErrorMessage(err))
			}
		}
		for _, r := range replies {
			in := Inbound{Thread: th.ThreadTS, TS: r.TS, Author: r.User, Text: r.Text,
				IsBot: r.BotID != "" || r.Subtype == "bot_message" || (self != "" && r.User == self)}
			outcome, err := p.process(ctx, cfg, in)
			if err != nil {
				return sum, err
			}
			switch outcome {
			case outcomeSkipped:
				continue
			case outcomeDelivered:
				sum.Delivered++
				sum.Processed++
			case outcomeProcessed:
				sum.Processed++
			default:
				sum.Dropped++
			}
			sum.Replies++
		}
	}
	return sum, nil
}

// readOrder is the order a cycle reads threads in: bound to a live
// session, newest binding first; then bound to a closed work item; then
// tombstones (Ref "": their session was deleted), each newest first.
func readOrder(threads []loop.BoundThread) []loop.BoundThread {
	var live, ended, tombs []loop.BoundThread
	for _, th := range slices.Backward(threads) { // Threads is oldest binding first
		switch {
		case th.Ref == "":
			tombs = append(tombs, th)
		case th.Closed:
			ended = append(ended, th)
		default:
			live = append(live, th)
		}
	}
	return append(append(live, ended...), tombs...)
}

// rateLimited ends the cycle's reading for wait (Slack's Retry-After, or
// DefaultRetryAfter) and records it once: a warning event and a log line.
// p.mu is held.
func (p *Poller) rateLimited(wait time.Duration, th loop.BoundThread) {
	if wait <= 0 {
		wait = DefaultRetryAfter
	}
	p.retryAt = p.now().Add(wait)
	p.log().Warn("slack: rate limited; polling pauses until Slack's Retry-After has passed",
		"retry_after", wait.String(), "until", p.retryAt.UTC().Format(time.RFC3339), "thread", th.ThreadTS)
	ev := p.Threads.NewEvent("channel.rate_limited", loop.LevelWarning, loop.F("channel", ChannelSlack),
		loop.F("retry_after_seconds", int(wait.Round(time.Second)/time.Second)), loop.F("thread", th.ThreadTS))
	if err := p.Threads.Emit(ev); err != nil {
		p.log().Warn("channels: could not record channel.rate_limited", "error", err.Error())
	}
}

// Outcomes of one reply beyond the drop reasons.
const (
	outcomeSkipped   = "" // another cycle took it
	outcomeProcessed = "processed"
	outcomeDelivered = "delivered"
)

// process takes one reply through the pipeline (original §9.4
// process_reply): unmapped → bot → allow-list → channel.reply_received →
// mirror → deliver. Everything up to the mirror step is recorded in one
// transaction with the cursor's advance, before any delivery (decisions
// D25). It returns the outcome: a drop reason, processed or delivered.
func (p *Poller) process(ctx context.Context, cfg *config.Config, in Inbound) (string, error) {
	svc := p.Threads
	authorized := slices.Contains(cfg.Slack.AuthorizedUsers, in.Author)
	outcome := outcomeSkipped
	ref, taken, err := svc.RecordReply(ctx, in.Thread, in.TS, func(ref string) []loop.Event {
		ch := loop.F("channel", ChannelSlack)
		switch {
		case ref == "":
			outcome = ReasonUnmapped
			return []loop.Event{svc.NewEvent("channel.dropped", loop.LevelInfo, ch,
				loop.F("reason", ReasonUnmapped), loop.F("thread", in.Thread))}
		case in.IsBot:
			outcome = ReasonSelfAuthored
			return []loop.Event{svc.NewEvent("channel.dropped", loop.LevelInfo, ch,
				loop.F("reason", ReasonSelfAuthored), loop.F("work_item", ref))}
		case !authorized: // an empty allow-list admits nobody (decisions D25)
			outcome = ReasonUnauthorized
			return []loop.Event{svc.NewEvent("channel.dropped", loop.LevelWarning, ch,
				loop.F("reason", ReasonUnauthorized), loop.F("actor", in.Author), loop.F("work_item", ref))}
		}
		outcome = outcomeProcessed
		evs := []loop.Event{svc.NewEvent("channel.reply_received", loop.LevelInfo, ch,
			loop.F("work_item", ref), loop.F("actor", in.Author))}
		if _, standing := loop.ParseStandingRef(ref); standing {
			// A standing session has no work item to mirror onto: the event
			// log keeps the paper trail (original §9.4).
			evs = append(evs, svc.NewEvent("channel.mirror_skipped", loop.LevelInfo, ch,
				loop.F("work_item", ref), loop.F("reason", ReasonStandingSession)))
		}
		return evs
	})
	if err != nil || !taken {
		return outcomeSkipped, err
	}
	if outcome != outcomeProcessed {
		return outcome, nil
	}
	in.WorkItem = ref
	actor := "slack:" + in.Author
	var delivered bool
	var why string
	if name, standing := loop.ParseStandingRef(ref); standing {
		res, err := p.Standing.Say(ctx, loop.StandingSayRequest{Name: name, Text: in.Text, Actor: actor})
		switch {
		case err != nil:
			why = loop.ErrorMessage(err)
		case !res.Delivered:
			why = sayMessages(res)
		default:
			delivered = true
		}
	} else if p.WorkItems != nil {
		p.WorkItems.Mirror(ctx, cfg, in)
		ok, err := p.WorkItems.Reply(ctx, cfg, in)
		if delivered = ok && err == nil; !delivered && err != nil {
			why = loop.ErrorMessage(err)
		}
	} else {
		why = "no work-item session can take a Slack reply in this version of the-loop; the reply is recorded (channel.reply_received) but not delivered"
	}
	if delivered {
		return outcomeDelivered, nil
	}
	if why != "" {
		if err := svc.Emit(svc.NewEvent("channel.dropped", loop.LevelWarning, loop.F("channel", ChannelSlack),
			loop.F("reason", ReasonUndeliverable), loop.F("work_item", ref), loop.F("error", why))); err != nil {
			p.log().Warn("channels: could not record channel.dropped", "work_item", ref, "error", err.Error())
		}
	}
	return outcomeProcessed, nil
}

// sayMessages is a failed say's messages, one line.
func sayMessages(res loop.SayResult) string {
	var parts []string
	for _, m := range res.Messages {
		parts = append(parts, strings.TrimPrefix(m.Text, "error: "))
	}
	if len(parts) == 0 {
		return "the message was not delivered"
	}
	return strings.Join(parts, "; ")
}

// Run polls every channels.slack.read.intervalSeconds until ctx ends: wait
// an interval, then one cycle, while Slack is enabled with read.mode poll
// (decisions D22: the service hosts the loop). The config is read afresh
// for every cycle; a failing cycle is logged and the loop goes on.
func (p *Poller) Run(ctx context.Context, current func() *config.Config) {
	for {
		interval := current().Slack.PollInterval()
		if interval <= 0 {
			interval = 30 * time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		cfg := current()
		if Skipped(cfg) != "" || !p.limitedUntil().IsZero() {
			continue // a rate limit was logged once, when Slack imposed it
		}
		sum, err := p.Poll(ctx, cfg)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			p.log().Warn("slack: poll cycle failed", "error", loop.ErrorMessage(err))
		case sum.Skipped != "":
			p.log().Warn("slack: poll cycle skipped", "reason", sum.Skipped)
		case sum.Replies > 0:
			p.log().Info("slack: poll cycle", "replies", sum.Replies, "processed", sum.Processed,
				"delivered", sum.Delivered, "dropped", sum.Dropped)
		}
	}
}
