package channels

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels/slack"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/redact"
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
	Channel  string // the thread's channel id
	TS       string // the reply's ts
	WorkItem string // the ref the thread is bound to (set once recorded)
	Author   string // the member id
	Text     string // as its author typed it (Slack's escaping undone)
	IsBot    bool   // posted by a bot, or by the-loop's own bot user
}

// WorkItems is the work-item side of the pipeline: mirroring a reply onto
// its work item (the answer of record) and delivering it into the work
// item's session (github.Mirror implements it). With none, a reply to a work item
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
	// Approvals decides the approvals a member's approve or deny in a
	// standing session's thread names (approvals.go); nil: such a reply is
	// still not delivered, and its thread is told to decide elsewhere.
	Approvals loop.ApprovalService
	// Log receives the cycle's warnings (a thread that could not be read,
	// auth.test failing); nil discards them. Nothing logged holds the token.
	Log *slog.Logger
	// Clock is the time a rate limit is measured against (nil: time.Now).
	Clock loop.Clock
	// Secrets are the values a post of an agent's answer never carries
	// (credential.SecretValues); nil: none.
	Secrets func(cfg *config.Config) []string
	// Redactor redacts every text the poller posts (answers, attention
	// notes, notices): the service's secrets and the credential shapes.
	// Nil: Secrets and the shapes only.
	Redactor *redact.Redactor
	// Observe, when set, hears of every cycle's end (the service's
	// metrics): why it was skipped ("" when it ran), how many threads could
	// not be read, and its error.
	Observe func(skipped string, threadErrors int, err error)

	mu        sync.Mutex // one cycle at a time
	client    *slack.Client
	clientKey string
	// retryAt is when Slack's last rate limit lifts: cycles before it are
	// skipped (read under mu, or through limitedUntil).
	retryAt time.Time
	// resume is the thread a rate limit stopped the last cycle at (""
	// when it read every thread): the next cycle starts there and wraps
	// around, so that under a rate limit every thread gets its turn.
	resume string
	// notices are the ts of the posts this poller made to tell a thread
	// its replies were dropped: read back, they only move the cursor.
	notices map[string]bool
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

// Poll runs one cycle (http.Poller). First it retries the replies kept
// for sessions that could not take them (retryKept). Then, for each bound
// thread, it reads the replies after the thread's cursor (every page) and
// processes them in order. Threads bound to a live session come first,
// newest binding first, then threads of closed work items, then tombstones
// (threads of deleted sessions), so that what matters most is read before
// Slack's rate limit can end a cycle; a cycle that a rate limit ended
// leaves the next one to start at the thread it stopped at, so every
// thread gets its turn. A 429 from Slack ends the cycle, records
// channel.rate_limited (a warning, once) and skips the reading until its
// Retry-After has passed (the kept replies are still retried). A disabled
// channel, a read mode other than poll or a missing token skip the cycle;
// no bound thread means no Slack call at all. A thread that cannot be read
// is logged and left for the next cycle. Only a store failure is an error.
//
// The summary counts the replies read this cycle; Delivered and Dropped
// also count the kept replies delivered or dropped.
func (p *Poller) Poll(ctx context.Context, cfg *config.Config) (loop.PollSummary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	threadErrors := 0
	sum, err := p.poll(ctx, cfg, &threadErrors)
	if p.Observe != nil {
		p.Observe(sum.Skipped, threadErrors, err)
	}
	return sum, err
}

// poll is Poll's cycle, p.mu held; threadErrors counts the threads that
// could not be read. Each step that can end the cycle early does so in the
// order Poll documents: the channel's settings, the kept replies, Slack's
// rate limit, the outbox, the bound threads, the token; then every thread
// is read in readOrder.
func (p *Poller) poll(ctx context.Context, cfg *config.Config, threadErrors *int) (loop.PollSummary, error) {
	var sum loop.PollSummary
	if why := Skipped(cfg); why != "" {
		sum.Skipped = why
		return sum, nil
	}
	if err := p.retryKept(ctx, cfg, &sum); err != nil {
		return sum, err
	}
	if now := p.now(); now.Before(p.retryAt) {
		sum.Skipped = "Slack rate-limited the poller; reading again after " + p.retryAt.UTC().Format(time.RFC3339)
		return sum, nil
	}
	if err := p.postOutbox(ctx, cfg); err != nil {
		return sum, err
	}
	threads, err := p.Threads.Threads(ctx)
	if err != nil || len(threads) == 0 {
		return sum, err
	}
	threads = p.readOrder(threads)
	client := p.clientFor(cfg.Slack)
	if err := client.CheckToken(); err != nil {
		sum.Skipped = loop.ErrorMessage(err)
		return sum, nil
	}
	c := &cycle{p: p, cfg: cfg, client: client, sum: &sum, threadErrors: threadErrors}
	for _, th := range threads {
		if stop, err := c.readThread(ctx, th); stop {
			return sum, err
		}
	}
	p.resume = "" // every thread had its turn
	return sum, nil
}

// cycle is the state one poll cycle carries from thread to thread while
// it reads them: the summary it adds to, the count of threads that could
// not be read, and the bot's own member id, asked of Slack (auth.test) at
// most once, when the first replies arrive.
type cycle struct {
	p            *Poller
	cfg          *config.Config
	client       *slack.Client
	sum          *loop.PollSummary
	threadErrors *int
	self         string // the bot's member id ("" until asked, or when auth.test failed)
	asked        bool   // whether auth.test was called this cycle
}

// readThread reads the replies of th after its cursor (every page) and
// processes them in order. It reports stop when the cycle ends at th: the
// context ended, the token went missing, Slack rate-limited the poller, or
// the store failed (err). A thread that could not be read otherwise is
// counted, logged and left for the next cycle.
func (c *cycle) readThread(ctx context.Context, th loop.BoundThread) (stop bool, err error) {
	channel := th.Channel
	if channel == "" {
		channel = c.cfg.Slack.Channel
	}
	replies, err := c.client.Replies(ctx, channel, th.ThreadTS, th.Cursor)
	if err != nil {
		return c.readFailed(ctx, th, channel, err)
	}
	if len(replies) > 0 {
		c.learnSelf(ctx)
	}
	for _, r := range replies {
		if err := c.take(ctx, th, channel, r); err != nil {
			return true, err
		}
	}
	return false, nil
}

// readFailed decides what a failed read of th means for the cycle: the
// context's end is its error; a missing token skips the rest of the
// cycle; a rate limit ends it where it stands (rateLimited), so the next
// cycle starts at th; anything else is this thread's alone — counted,
// logged, and read again next cycle while the others are read now.
func (c *cycle) readFailed(ctx context.Context, th loop.BoundThread, channel string, err error) (stop bool, _ error) {
	if ctx.Err() != nil {
		return true, ctx.Err()
	}
	if errors.Is(err, slack.ErrNoToken) {
		c.sum.Skipped = loop.ErrorMessage(err)
		return true, nil
	}
	var limited *slack.RateLimitError
	if errors.As(err, &limited) {
		c.p.rateLimited(limited.RetryAfter, th)
		return true, nil
	}
	*c.threadErrors++
	c.p.log().Warn("slack: could not read a thread; it is read again next cycle",
		"thread", th.ThreadTS, "work_item", th.Ref, "channel", channel, "error", loop.ErrorMessage(err))
	return false, nil
}

// learnSelf asks Slack for the bot's own member id the first time a cycle
// has replies to judge, so that the bot's posts without a bot_id are known
// as its own too. When auth.test fails, only a bot_id marks them.
func (c *cycle) learnSelf(ctx context.Context) {
	if c.asked {
		return
	}
	c.asked = true
	var err error
	if c.self, err = c.client.AuthTest(ctx); err != nil {
		c.p.log().Warn("slack: auth.test failed; only messages with a bot_id count as the bot's own", "error", loop.ErrorMessage(err))
	}
}

// take processes one reply read from th and counts its outcome. A reply
// that is one of the poller's own notices only moves the thread's cursor.
// Only a store failure is an error.
func (c *cycle) take(ctx context.Context, th loop.BoundThread, channel string, r slack.Reply) error {
	p := c.p
	if p.notices[r.TS] {
		delete(p.notices, r.TS)
		_, _, err := p.Threads.RecordReply(ctx, th.ThreadTS, r.TS, func(string) []loop.Event { return nil })
		return err
	}
	in := Inbound{Thread: th.ThreadTS, Channel: channel, TS: r.TS, Author: r.User, Text: r.Text,
		IsBot: r.BotID != "" || r.Subtype == "bot_message" || (c.self != "" && r.User == c.self)}
	outcome, err := p.process(ctx, c.cfg, in)
	if err != nil {
		return err
	}
	countOutcome(c.sum, outcome)
	return nil
}

// countOutcome adds one processed reply's outcome to sum: a reply another
// cycle took is not counted; every other is a reply read, and processed,
// delivered (and processed) or dropped.
func countOutcome(sum *loop.PollSummary, outcome string) {
	switch outcome {
	case outcomeSkipped:
		return
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

// readOrder is the order a cycle reads threads in: bound to a live
// session, newest binding first; then bound to a closed work item; then
// tombstones (Ref "": their session was deleted), each newest first —
// started at the thread the last cycle's rate limit stopped at, when it is
// still bound, and wrapped around.
func (p *Poller) readOrder(threads []loop.BoundThread) []loop.BoundThread {
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
	order := append(append(live, ended...), tombs...)
	if i := slices.IndexFunc(order, func(th loop.BoundThread) bool { return th.ThreadTS == p.resume }); i > 0 {
		order = slices.Concat(order[i:], order[:i])
	}
	return order
}

// rateLimited ends the cycle's reading for wait (Slack's Retry-After, or
// DefaultRetryAfter) and records it once: a warning event and a log line.
// p.mu is held.
func (p *Poller) rateLimited(wait time.Duration, th loop.BoundThread) {
	if wait <= 0 {
		wait = DefaultRetryAfter
	}
	p.retryAt = p.now().Add(wait)
	p.resume = th.ThreadTS
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
// mirror → deliver; a standing session's approve or deny is decided
// instead of delivered, ahead of any reply its thread keeps. Everything up
// to the mirror step is recorded in one transaction with the cursor's
// advance, before any delivery (decisions D25). A reply its session
// cannot take yet — or one behind replies its thread already keeps — is
// kept for retryKept (channel.reply_queued). It returns the outcome: a
// drop reason, processed or delivered.
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
	if p.decides(ctx, cfg, in) { // approve or deny: a decision, never pasted
		return outcomeProcessed, nil
	}
	_, standing := loop.ParseStandingRef(ref)
	if !standing && p.WorkItems == nil {
		p.dropped(in.WorkItem, in.Thread, "no work-item session can take a Slack reply in this version of the-loop; the reply is recorded (channel.reply_received) but not delivered")
		return outcomeProcessed, nil
	}
	if !standing {
		p.WorkItems.Mirror(ctx, cfg, in) // the answer of record, once, whenever it is delivered
	}
	waiting, err := svc.Waiting(ctx, in.Thread)
	if err != nil {
		return outcomeProcessed, err
	}
	if waiting > 0 {
		why := fmt.Sprintf("%d earlier repl(ies) in this thread wait for the session; this one waits behind them", waiting)
		return outcomeProcessed, p.keep(ctx, cfg, in, why)
	}
	delivered, why, retry := p.deliver(ctx, cfg, in)
	switch {
	case delivered:
		return outcomeDelivered, nil
	case retry:
		return outcomeProcessed, p.keep(ctx, cfg, in, why)
	}
	p.dropped(in.WorkItem, in.Thread, why)
	return outcomeProcessed, nil
}

// deliver pastes in into its session: a standing session's say, or the
// work item's reply (WorkItems, which must be set for a work-item ref).
// When it is not delivered, why says so and retry whether it may be tried
// again: nothing reached the pane because the session was stopped,
// restarting or not ready (not one whose paste failed half way, nor an
// invalid message, nor a work item's that is closed).
func (p *Poller) deliver(ctx context.Context, cfg *config.Config, in Inbound) (delivered bool, why string, retry bool) {
	actor := "slack:" + in.Author
	if name, standing := loop.ParseStandingRef(in.WorkItem); standing {
		res, err := p.Standing.Say(ctx, loop.StandingSayRequest{Name: name, Text: in.Text, Actor: actor, AnswerToThread: cfg.PostReplies(name)})
		switch {
		case err != nil:
			return false, loop.ErrorMessage(err), retryable(err)
		case !res.Delivered:
			why := sayMessages(res)
			return false, why, strings.Contains(why, nothingDelivered)
		}
		return true, "", false
	}
	ok, err := p.WorkItems.Reply(ctx, cfg, in)
	switch {
	case err != nil:
		// A closed work item (or one with no session) is not coming back
		// by itself: its ticket has the answer of record.
		return false, loop.ErrorMessage(err), retryable(err) && p.Threads.WorkItemOpen(ctx, in.WorkItem)
	case !ok:
		return false, "the reply was not delivered", false
	}
	return true, "", false
}

// nothingDelivered is what lifecycle says when a say or a reply gave up
// before pasting (the agent not ready, or exited).
const nothingDelivered = "nothing was delivered"

// retryable reports whether a delivery that failed with err left the pane
// untouched for a reason that passes: no live session to paste into
// (ENOTFOUND: stopped, restarting, not started yet) or an agent not ready.
func retryable(err error) bool {
	return loop.ErrorCode(err) == loop.ENOTFOUND || strings.Contains(loop.ErrorMessage(err), nothingDelivered)
}

// keep stores in for a later delivery (channel.reply_queued, why naming
// the reason) in its thread's order; past the bounds it is dropped
// undeliverable instead. Only a store failure is an error.
func (p *Poller) keep(ctx context.Context, cfg *config.Config, in Inbound, why string) error {
	svc := p.Threads
	ch, item := loop.F("channel", ChannelSlack), loop.F("work_item", in.WorkItem)
	window := cfg.Slack.RetryWindow()
	pr := loop.PendingReply{Thread: in.Thread, TS: in.TS, Ref: in.WorkItem, Channel: in.Channel, Author: in.Author,
		Text: in.Text, QueuedAt: p.now(), Attempts: 1, Error: why}
	kept := svc.NewEvent("channel.reply_queued", loop.LevelInfo, ch, item, loop.F("thread", in.Thread),
		loop.F("actor", in.Author), loop.F("retry_seconds", int(window/time.Second)), loop.F("error", why))
	full := svc.NewEvent("channel.dropped", loop.LevelWarning, ch, loop.F("reason", ReasonUndeliverable), item,
		loop.F("error", fmt.Sprintf("%s; and no more replies can wait (at most %d per thread, %d in all)", why,
			loop.MaxPendingPerThread, loop.MaxPending)))
	_, err := svc.KeepReply(ctx, pr, []loop.Event{kept}, []loop.Event{full})
	return err
}

// dropped records channel.dropped (undeliverable, warning) for a reply to
// ref that cannot be delivered, saying why.
func (p *Poller) dropped(ref, thread, why string) {
	svc := p.Threads
	if err := svc.Emit(svc.NewEvent("channel.dropped", loop.LevelWarning, loop.F("channel", ChannelSlack),
		loop.F("reason", ReasonUndeliverable), loop.F("work_item", ref), loop.F("error", why))); err != nil {
		p.log().Warn("channels: could not record channel.dropped", "work_item", ref, "thread", thread, "error", err.Error())
	}
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
// for every cycle; a failing cycle is logged and the loop goes on. While
// Slack's rate limit lasts, a cycle only retries the kept replies.
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
		if Skipped(cfg) != "" {
			continue
		}
		// Under a rate limit the cycle still retries the kept replies; the
		// limit itself was logged once, when Slack imposed it.
		limited := !p.limitedUntil().IsZero()
		sum, err := p.pollSafely(ctx, cfg)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			p.log().Warn("slack: poll cycle failed", "error", loop.ErrorMessage(err))
		case sum.Skipped != "" && !limited:
			p.log().Warn("slack: poll cycle skipped", "reason", sum.Skipped)
		case sum.Replies > 0 || sum.Delivered > 0 || sum.Dropped > 0:
			p.log().Info("slack: poll cycle", "replies", sum.Replies, "processed", sum.Processed,
				"delivered", sum.Delivered, "dropped", sum.Dropped)
		}
	}
}

// pollSafely is one Poll whose panic (a bbolt fault, say) is recovered into
// an error, so the poller goroutine, and with it the service, lives on;
// the stack goes to the log.
func (p *Poller) pollSafely(ctx context.Context, cfg *config.Config) (sum loop.PollSummary, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.log().Error("slack: poll cycle panicked; the poller goes on", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = loop.Internal("slack: the poll cycle panicked: %v", r)
		}
	}()
	return p.Poll(ctx, cfg)
}
