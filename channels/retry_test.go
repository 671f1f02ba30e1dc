package channels

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels/slack/fakeslack"
	"github.com/the-loop-dev/the-loop/store"
)

// A reply to a session that cannot take it yet is kept, in
// order, and delivered once the session is back, within
// channels.slack.retrySeconds; past it, the thread is told once.

// clocked gives the world's poller a clock the test moves.
func (w *world) clocked() *time.Time {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w.poller.Clock = func() time.Time { return now }
	return &now
}

func (w *world) stop(name string) {
	w.t.Helper()
	if _, err := w.svc.StopStanding(context.Background(), w.cfg, name); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) kept() []store.PendingReply {
	w.t.Helper()
	prs, err := w.log.PendingReplies(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return prs
}

func TestPoll_AReplyToAStoppedSessionWaitsAndIsDeliveredInOrderWhenItIsBack(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	w.stop("supervisor")
	w.ws.Reply("COWN", thread, "UOPS", "one")
	w.ws.Reply("COWN", thread, "UOPS", "two")
	want(t, w.poll(), loop.PollSummary{Replies: 2, Processed: 2})
	if n := len(w.events("channel.dropped")); n != 0 {
		t.Fatalf("%d drops: a stopped session's replies must wait", n)
	}
	queued := w.events("channel.reply_queued")
	if len(queued) != 2 || queued[0].Field("work_item") != "standing:supervisor" || queued[0].Field("thread") != thread ||
		!strings.Contains(queued[0].Field("error").(string), "no live tmux pane") ||
		!strings.Contains(queued[1].Field("error").(string), "earlier repl(ies) in this thread wait") ||
		fmt.Sprint(queued[0].Field("retry_seconds")) != "600" {
		t.Fatalf("reply_queued %+v", queued)
	}
	want(t, w.poll(), loop.PollSummary{}) // still stopped: they wait
	if n := len(w.kept()); n != 2 {
		t.Fatalf("%d kept, want 2", n)
	}

	w.start("supervisor")
	w.ws.Reply("COWN", thread, "UOPS", "three")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 3})
	wantMsgs := []string{framed("slack:UOPS", "one"), framed("slack:UOPS", "two"), framed("slack:UOPS", "three")}
	if got := w.runner.Messages(); !slices.Equal(got, wantMsgs) {
		t.Fatalf("pasted %q", got)
	}
	want(t, w.poll(), loop.PollSummary{})
	if got := w.runner.Messages(); len(got) != 3 || len(w.kept()) != 0 {
		t.Fatalf("pasted %d, kept %d: each reply once", len(got), len(w.kept()))
	}
	if posts := w.ws.Posts(); len(posts) != 1 {
		t.Fatalf("%d posts: a delivered reply posts nothing", len(posts))
	}
}

func TestPoll_AKeptReplyPastRetrySecondsIsDroppedAndTheThreadIsToldOnce(t *testing.T) {
	w := newWorld(t)
	now := w.clocked()
	w.cfg.Slack.RetrySeconds = 60
	thread := w.start("supervisor").SlackThread
	w.stop("supervisor")
	w.ws.Reply("COWN", thread, "UOPS", "one")
	w.ws.Reply("COWN", thread, "UOPS", "two")
	want(t, w.poll(), loop.PollSummary{Replies: 2, Processed: 2})
	*now = now.Add(59 * time.Second)
	want(t, w.poll(), loop.PollSummary{})
	*now = now.Add(time.Second)
	want(t, w.poll(), loop.PollSummary{Dropped: 2})

	drops := w.events("channel.dropped")
	if len(drops) != 2 || drops[0].Field("reason") != "undeliverable" || drops[0].Level != loop.LevelWarning ||
		drops[0].Field("thread") != thread || drops[0].Field("actor") != "UOPS" ||
		!strings.HasPrefix(drops[0].Field("error").(string), "not delivered within 60 s (channels.slack.retrySeconds): standing session 'supervisor' has no live tmux pane") {
		t.Fatalf("drops %+v", drops)
	}
	posts := w.ws.Posts()
	if len(posts) != 2 || posts[1].ThreadTS != thread || posts[1].Channel != "COWN" ||
		!strings.HasPrefix(posts[1].Text, "the-loop: channel.dropped on standing:supervisor\n\n2 replies in this thread were not delivered to `standing:supervisor` within 60 s") {
		t.Fatalf("posts %+v", posts)
	}
	// Told once; the post read back is no reply; and the session coming
	// back gets nothing.
	*now = now.Add(time.Hour)
	want(t, w.poll(), loop.PollSummary{})
	w.start("supervisor")
	want(t, w.poll(), loop.PollSummary{})
	if n, msgs := len(w.ws.Posts()), w.runner.Messages(); n != 2 || len(msgs) != 0 {
		t.Fatalf("%d posts, pasted %q", n, msgs)
	}
	if n := len(w.events("channel.dropped")); n != 2 {
		t.Fatalf("%d drops, want the 2", n)
	}
	// A later reply is delivered at once.
	w.ws.Reply("COWN", thread, "UOPS", "three")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
}

// readyHarness is fakeHarness whose agent is ready only while ready holds.
type readyHarness struct {
	fakeHarness
	ready *atomic.Bool
}

func (h readyHarness) Ready(loop.PaneSnapshot) bool { return h.ready.Load() }

func TestPoll_AReplyWhileTheAgentIsNotReadyIsDeliveredOnceItIs(t *testing.T) {
	w := newWorld(t)
	var ready atomic.Bool
	ready.Store(true)
	w.svc.Harness = func(string, string) (loop.Harness, error) { return readyHarness{ready: &ready}, nil }
	w.cfg.Routing.Tmux.ReadySeconds = 0.1
	thread := w.start("supervisor").SlackThread
	ready.Store(false)
	w.ws.Reply("COWN", thread, "UOPS", "when you are free")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	if q := w.events("channel.reply_queued"); len(q) != 1 || !strings.Contains(q[0].Field("error").(string), "is not ready for input") {
		t.Fatalf("reply_queued %+v", q)
	}
	want(t, w.poll(), loop.PollSummary{})
	if prs := w.kept(); len(prs) != 1 || prs[0].Attempts != 2 {
		t.Fatalf("kept %+v", prs)
	}
	ready.Store(true)
	want(t, w.poll(), loop.PollSummary{Delivered: 1})
	if got := w.runner.Messages(); !slices.Equal(got, []string{framed("slack:UOPS", "when you are free")}) {
		t.Fatalf("pasted %q", got)
	}
}

// The kept reply leaves the store before the paste: a crash mid-paste
// loses it rather than delivering it twice.
func TestPoll_AKeptReplyIsDeliveredAtMostOnceAcrossACrash(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	w.stop("supervisor")
	w.ws.Reply("COWN", thread, "UOPS", "once")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	w.start("supervisor")
	w.runner.Mu.Lock()
	w.runner.DeliverHook = func(context.Context, string) error { panic("the process died mid-paste") }
	w.runner.Mu.Unlock()
	func() {
		defer func() { _ = recover() }()
		_, _ = w.poller.Poll(context.Background(), w.cfg)
		t.Fatal("the poll should have died")
	}()
	w.runner.Mu.Lock()
	w.runner.DeliverHook = nil
	w.runner.Mu.Unlock()
	restarted := &Poller{Threads: w.log, Standing: w.svc.Standing(w.config)}
	sum, err := restarted.Poll(context.Background(), w.cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, sum, loop.PollSummary{})
	if got, prs := w.runner.Messages(), w.kept(); len(got) != 0 || len(prs) != 0 {
		t.Fatalf("pasted %q, kept %+v", got, prs)
	}
}

func TestPoll_KeptRepliesAreBoundedPerThread(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	w.stop("supervisor")
	for i := range store.MaxPendingPerThread + 1 {
		w.ws.Reply("COWN", thread, "UOPS", fmt.Sprintf("reply %d", i))
	}
	n := store.MaxPendingPerThread + 1
	want(t, w.poll(), loop.PollSummary{Replies: n, Processed: n})
	drops := w.events("channel.dropped")
	if len(drops) != 1 || drops[0].Field("reason") != "undeliverable" ||
		!strings.Contains(drops[0].Field("error").(string), "no more replies can wait (at most 20 per thread, 200 in all)") {
		t.Fatalf("drops %+v", drops)
	}
	w.start("supervisor")
	want(t, w.poll(), loop.PollSummary{Delivered: store.MaxPendingPerThread})
	got := w.runner.Messages()
	if len(got) != store.MaxPendingPerThread || got[0] != framed("slack:UOPS", "reply 0") ||
		got[len(got)-1] != framed("slack:UOPS", fmt.Sprintf("reply %d", store.MaxPendingPerThread-1)) {
		t.Fatalf("pasted %d: %q…", len(got), got[:min(2, len(got))])
	}
}

// A kept reply whose session is deleted meanwhile is dropped as unmapped.
func TestPoll_AKeptReplyOfADeletedSessionIsDroppedUnmapped(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.svc.CreateStanding(ctx, w.cfg, loop.StandingCreateRequest{Name: "helper", Cwd: t.TempDir(), SlackEnabled: true, Start: true}); err != nil {
		t.Fatal(err)
	}
	thread := w.ws.Posts()[0].TS
	w.stop("helper")
	w.ws.Reply("CCENTRAL", thread, "UOPS", "are you there?")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	if res, err := w.svc.DeleteStanding(ctx, w.cfg, "helper"); err != nil || !res.OK {
		t.Fatalf("delete %+v %v", res, err)
	}
	want(t, w.poll(), loop.PollSummary{Dropped: 1})
	drops := w.events("channel.dropped")
	if len(drops) != 1 || drops[0].Field("reason") != "unmapped" || drops[0].Field("thread") != thread || len(w.kept()) != 0 {
		t.Fatalf("drops %+v", drops)
	}
}

// Slack's rate limit ends a cycle early; the next one starts
// where it stopped, so the oldest live thread is read too.
func TestPoll_UnderARateLimitEveryThreadGetsItsTurn(t *testing.T) {
	w := newWorld(t)
	now := w.clocked()
	var roots []string
	for _, name := range []string{"old", "mid", "new"} {
		root := w.ws.Add(fakeslackRoot("CCENTRAL", name))
		roots = append(roots, root)
		if err := w.svc.DB.Update(func(tx *store.Tx) error { return tx.BindThread(root, "standing:"+name, "CCENTRAL") }); err != nil {
			t.Fatal(err)
		}
		w.ws.Reply("CCENTRAL", root, "UOPS", "to "+name)
	}
	var mu sync.Mutex
	var reads []string
	armed := false
	w.ws.OnReplies(func(_, thread string) {
		// Slack lets one read through per cycle, then answers 429.
		mu.Lock()
		defer mu.Unlock()
		reads = append(reads, thread)
		if !armed {
			armed = true
			w.ws.RateLimitReplies(1, 1)
		}
	})
	arm := func(v bool) {
		mu.Lock()
		defer mu.Unlock()
		armed = v
	}
	for range 3 {
		arm(false)
		w.poll()
		*now = now.Add(2 * time.Second)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(reads, []string{roots[2], roots[1], roots[0]}) {
		t.Fatalf("reads %v, want the newest, then the middle, then the oldest thread (%v)", reads, roots)
	}
	if n := len(w.events("channel.reply_received")); n != 3 {
		t.Fatalf("%d replies recorded, want one per thread", n)
	}
	// A cycle that reads every thread starts from the top again.
	reads, armed = nil, true
	mu.Unlock()
	w.poll()
	mu.Lock()
	if !slices.Equal(reads, []string{roots[2], roots[1], roots[0]}) {
		t.Fatalf("reads %v after a full cycle", reads)
	}
}

// The pane reads what the member typed, not Slack's escaping.
func TestPoll_SlackEscapingNeverReachesThePane(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	w.ws.Reply("COWN", thread, "UOPS", "run `test &lt;x&gt; &amp;&amp; make` as <@U0ANN> said in <#C0DEV|dev>, see <https://example.com/a?b=1&amp;c=2|the docs>")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	wantText := "run `test <x> && make` as @U0ANN said in #dev, see the docs (https://example.com/a?b=1&c=2)"
	if got := w.runner.Messages(); !slices.Equal(got, []string{framed("slack:UOPS", wantText)}) {
		t.Fatalf("pasted %q", got)
	}
}

func fakeslackRoot(channel, name string) fakeslack.Message {
	return fakeslack.Message{Channel: channel, User: fakeslack.BotUserID, BotID: fakeslack.BotID, Text: "root of " + name}
}
