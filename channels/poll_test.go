package channels

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels/slack/fakeslack"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/store"
	"github.com/the-loop-dev/the-loop/talk"
	"github.com/the-loop-dev/the-loop/threadlog"
)

const token = "xoxb-channels-test-SECRET-42"

// syncBuffer is a log sink safe to read while a poll loop writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// world is the real pipeline (lifecycle service on a bbolt file, the Slack
// client, the announcer) against a fake Slack workspace and a fake tmux.
type world struct {
	t      *testing.T
	ws     *fakeslack.Workspace
	runner *fakeRunner
	svc    *lifecycle.Service
	log    *threadlog.Log // the thread log over svc's store
	cfg    *config.Config
	poller *Poller
	logs   *syncBuffer
}

// newWorld declares "supervisor" with Slack on in its own channel COWN
// (central channel CCENTRAL) and admits member UOPS.
func newWorld(t *testing.T) *world {
	t.Helper()
	ws := fakeslack.New(t, token)
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", token)
	db, err := store.Open(filepath.Join(t.TempDir(), "the-loop.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := newFakeRunner()
	svc := &lifecycle.Service{
		DB:        db,
		Runner:    func(string) loop.Runner { return r },
		Harness:   func(string, string) (loop.Harness, error) { return fakeHarness{}, nil },
		LookPath:  func(b string) (string, error) { return "/usr/bin/" + b, nil },
		Source:    "test",
		Announcer: Announcer{},
	}
	cfg := config.Default()
	cfg.Routing.Tmux.ResumeProbeSeconds = 0.05
	cfg.Routing.Tmux.HarnessKillGraceSeconds = 0
	cfg.Routing.Tmux.ReadySeconds = 1
	cfg.Slack.Enabled = true
	cfg.Slack.Channel = "CCENTRAL"
	cfg.Slack.APIURL = ws.URL()
	cfg.Slack.AuthorizedUsers = []string{"UOPS"}
	cfg.Standing = &config.StandingConfig{Enabled: true, Sessions: []loop.StandingDefinition{{
		Name: "supervisor", Harness: "claude", Cwd: t.TempDir(), AutoStart: true, Declared: true,
		SlackEnabled: true, SlackChannel: "COWN",
	}}}
	logs := &syncBuffer{}
	w := &world{t: t, ws: ws, runner: r, svc: svc, log: &threadlog.Log{DB: db, Events: svc}, cfg: cfg, logs: logs}
	w.poller = &Poller{Threads: w.log, Standing: svc.Standing(w.config), Log: slog.New(slog.NewTextHandler(logs, nil))}
	return w
}

// config is the world's config as it stands (tests change w.cfg).
func (w *world) config() *config.Config { return w.cfg }

func (w *world) start(name string) loop.StandingRow {
	w.t.Helper()
	res, err := w.svc.StartStanding(context.Background(), w.cfg, name, false)
	if err != nil || len(res.Sessions) != 1 {
		w.t.Fatalf("start %s: %+v %v", name, res, err)
	}
	return res.Sessions[0]
}

func (w *world) poll() loop.PollSummary {
	w.t.Helper()
	sum, err := w.poller.Poll(context.Background(), w.cfg)
	if err != nil {
		w.t.Fatalf("poll: %v", err)
	}
	return sum
}

func (w *world) events(types ...string) []loop.Event {
	w.t.Helper()
	var evs []loop.Event
	if err := w.svc.DB.View(func(tx *store.Tx) error {
		var err error
		evs, err = tx.Events(store.EventQuery{Types: types})
		return err
	}); err != nil {
		w.t.Fatal(err)
	}
	return evs
}

func names(evs []loop.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Event)
	}
	return out
}

func fields(e loop.Event) map[string]any {
	m := map[string]any{"level": e.Level}
	for _, f := range e.Fields {
		m[f.Key] = f.Value
	}
	return m
}

func framed(actor, text string) string { return talk.FrameSay("supervisor", actor, text) }

func want(t *testing.T, got, want loop.PollSummary) {
	t.Helper()
	if got != want {
		t.Fatalf("summary %+v, want %+v", got, want)
	}
}

// A start posts once in its channel; an authorized reply is pasted.
func TestStart_PostsOnceInItsChannelAndAnAuthorizedReplyIsPasted(t *testing.T) {
	w := newWorld(t)
	row := w.start("supervisor")
	posts := w.ws.Posts()
	if len(posts) != 1 || posts[0].Channel != "COWN" || posts[0].ThreadTS != "" {
		t.Fatalf("posts %+v", posts)
	}
	wantText := "the-loop: standing.started on standing:supervisor\n\n" +
		"the-loop standing session `supervisor` is up (claude). Reply in this thread to talk to it — " +
		"replies from an authorized member are pasted straight into its terminal."
	if posts[0].Text != wantText {
		t.Fatalf("announcement %q", posts[0].Text)
	}
	thread := posts[0].TS
	if row.SlackThread != thread || row.SlackChannel != "COWN" {
		t.Fatalf("row %+v", row)
	}
	th, _ := w.log.Threads(context.Background())
	if len(th) != 1 || th[0].ThreadTS != thread || th[0].Ref != "standing:supervisor" || th[0].Channel != "COWN" {
		t.Fatalf("bindings %+v", th)
	}

	w.ws.Reply("COWN", thread, "UOPS", "status report, please")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	if got := w.runner.Messages(); !slices.Equal(got, []string{framed("slack:UOPS", "status report, please")}) {
		t.Fatalf("pasted %q", got)
	}
	evs := w.events("channel.*", "standing.said")
	if got := names(evs); !slices.Equal(got, []string{"channel.reply_received", "channel.mirror_skipped", "standing.said"}) {
		t.Fatalf("events %v", got)
	}
	if f := fields(evs[0]); f["channel"] != "slack" || f["work_item"] != "standing:supervisor" || f["actor"] != "UOPS" {
		t.Fatalf("reply_received %v", f)
	}
	if f := fields(evs[1]); f["channel"] != "slack" || f["work_item"] != "standing:supervisor" || f["reason"] != "standing-session" {
		t.Fatalf("mirror_skipped %v", f)
	}
	if f := fields(evs[2]); f["actor"] != "slack:UOPS" {
		t.Fatalf("standing.said %v", f)
	}
	if n := w.ws.Calls("chat.postMessage"); n != 1 {
		t.Fatalf("%d posts: a reply must post nothing anywhere", n)
	}
}

func TestStart_UsesTheCentralChannelWithoutItsOwn(t *testing.T) {
	w := newWorld(t)
	w.cfg.Standing.Sessions[0].SlackChannel = ""
	w.start("supervisor")
	if posts := w.ws.Posts(); len(posts) != 1 || posts[0].Channel != "CCENTRAL" {
		t.Fatalf("posts %+v", posts)
	}
	if evs := w.events("standing.announced"); len(evs) != 1 || evs[0].Field("channel") != "CCENTRAL" {
		t.Fatalf("announced %+v", evs)
	}
}

// Bots, the bot itself and unauthorized members are dropped.
func TestPoll_DropsBotsSelfAndUnauthorizedMembers(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	w.ws.Reply("COWN", thread, "UEVIL", "rm -rf /")
	w.ws.Add(fakeslack.Message{Channel: "COWN", ThreadTS: thread, User: fakeslack.BotUserID, Text: "the bot's own words"})
	w.ws.Add(fakeslack.Message{Channel: "COWN", ThreadTS: thread, User: "UOPS", BotID: "BOTHER", Text: "an app posting as a member"})
	w.ws.Add(fakeslack.Message{Channel: "COWN", ThreadTS: thread, Subtype: "bot_message", BotID: "BOTHER", Text: "a bot_message"})
	want(t, w.poll(), loop.PollSummary{Replies: 4, Dropped: 4})
	if got := w.runner.Messages(); len(got) != 0 {
		t.Fatalf("pasted %q", got)
	}
	evs := w.events("channel.*")
	var got []string
	for _, e := range evs {
		f := fields(e)
		got = append(got, e.Event+" "+f["reason"].(string)+" "+e.Level)
		if f["channel"] != "slack" || f["work_item"] != "standing:supervisor" {
			t.Fatalf("%v", f)
		}
	}
	wantEvs := []string{
		"channel.dropped unauthorized-actor warning",
		"channel.dropped self-authored info",
		"channel.dropped self-authored info",
		"channel.dropped self-authored info",
	}
	if !slices.Equal(got, wantEvs) || evs[0].Field("actor") != "UEVIL" {
		t.Fatalf("events %v", got)
	}
}

func TestPoll_AnEmptyAllowListAdmitsNobody(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	w.cfg.Slack.AuthorizedUsers = nil
	w.ws.Reply("COWN", thread, "UOPS", "hello")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Dropped: 1})
	if evs := w.events("channel.*"); len(evs) != 1 || evs[0].Field("reason") != "unauthorized-actor" || len(w.runner.Messages()) != 0 {
		t.Fatalf("events %v pasted %q", names(evs), w.runner.Messages())
	}
}

// A reply whose thread is unbound by the time it is recorded
// (its session deleted mid-cycle) is dropped as unmapped.
func TestPoll_AThreadUnboundMidCycleIsDroppedUnmapped(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.svc.CreateStanding(ctx, w.cfg, loop.StandingCreateRequest{Name: "helper", Cwd: t.TempDir(), SlackEnabled: true, Start: true}); err != nil {
		t.Fatal(err)
	}
	thread := w.ws.Posts()[0].TS
	w.ws.Reply("CCENTRAL", thread, "UOPS", "are you there?")
	w.ws.OnReplies(func(string, string) {
		w.ws.OnReplies(nil)
		if res, err := w.svc.DeleteStanding(ctx, w.cfg, "helper"); err != nil || !res.OK {
			t.Errorf("delete %+v %v", res, err)
		}
	})
	want(t, w.poll(), loop.PollSummary{Replies: 1, Dropped: 1})
	evs := w.events("channel.*")
	if len(evs) != 1 || evs[0].Field("reason") != "unmapped" || evs[0].Field("thread") != thread || len(w.runner.Messages()) != 0 {
		t.Fatalf("events %+v pasted %q", evs, w.runner.Messages())
	}
}

// Each reply at most once, across cycles and across a crash between the
// record and the paste.
func TestPoll_AReplyIsProcessedAtMostOnce(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	w.ws.Reply("COWN", thread, "UOPS", "one")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	want(t, w.poll(), loop.PollSummary{})

	// The process dies in the middle of the paste.
	w.ws.Reply("COWN", thread, "UOPS", "two")
	w.runner.DeliverHook = func(context.Context, string) error { panic("the process died mid-paste") }
	func() {
		defer func() { _ = recover() }()
		_, _ = w.poller.Poll(context.Background(), w.cfg)
		t.Fatal("the poll should have died")
	}()
	w.runner.DeliverHook = nil
	restarted := &Poller{Threads: w.log, Standing: w.svc.Standing(w.config)}
	sum, err := restarted.Poll(context.Background(), w.cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, sum, loop.PollSummary{})
	if got := w.runner.Messages(); !slices.Equal(got, []string{framed("slack:UOPS", "one")}) {
		t.Fatalf("pasted %q", got)
	}
	if n := len(w.events("channel.reply_received")); n != 2 {
		t.Fatalf("%d replies recorded, want 2 (each once)", n)
	}
}

func TestPoll_ConcurrentCyclesTakeEachReplyOnce(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	for i := range 5 {
		w.ws.Reply("COWN", thread, "UOPS", string(rune('a'+i)))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			// Separate pollers: nothing but the store keeps them apart.
			p := &Poller{Threads: w.log, Standing: w.svc.Standing(w.config)}
			if _, err := p.Poll(context.Background(), w.cfg); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := w.runner.Messages(); len(got) != 5 {
		t.Fatalf("pasted %d times, want 5: %q", len(got), got)
	}
}

// More replies than a page holds, all delivered, in order.
func TestPoll_ReadsEveryPageInOrder(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	w.ws.SetPageSize(2)
	var wantMsgs []string
	for i := range 7 {
		text := "reply " + string(rune('a'+i))
		w.ws.Reply("COWN", thread, "UOPS", text)
		wantMsgs = append(wantMsgs, framed("slack:UOPS", text))
	}
	want(t, w.poll(), loop.PollSummary{Replies: 7, Processed: 7, Delivered: 7})
	if got := w.runner.Messages(); !slices.Equal(got, wantMsgs) {
		t.Fatalf("pasted %q", got)
	}
}

// Start, stop, start posts once: the thread is kept.
func TestStart_StopStartPostsOnce(t *testing.T) {
	w := newWorld(t)
	first := w.start("supervisor").SlackThread
	if _, err := w.svc.StopStanding(context.Background(), w.cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	row := w.start("supervisor")
	if row.Outcome != "resumed" || row.SlackThread != first || len(w.ws.Posts()) != 1 {
		t.Fatalf("row %+v posts %d", row, len(w.ws.Posts()))
	}
}

func TestStart_PostFailureKeepsTheSessionStarted(t *testing.T) {
	w := newWorld(t)
	w.ws.FailPosts("channel_not_found")
	row := w.start("supervisor")
	if row.Outcome != "started" || !row.Running || row.SlackThread != "" {
		t.Fatalf("row %+v", row)
	}
	evs := w.events("standing.*")
	if got := names(evs); !slices.Equal(got, []string{"standing.started", "standing.announce_failed"}) {
		t.Fatalf("events %v", got)
	}
	if e := evs[1]; e.Level != "warning" || e.Field("error") != "slack: post failed: channel_not_found" {
		t.Fatalf("announce_failed %+v", fields(e))
	}
}

func TestStart_SlackDisabledPostsNothing(t *testing.T) {
	w := newWorld(t)
	w.cfg.Slack.Enabled = false
	if row := w.start("supervisor"); row.Outcome != "started" {
		t.Fatalf("row %+v", row)
	}
	if n := w.ws.TotalCalls(); n != 0 {
		t.Fatalf("%d Slack calls with Slack disabled", n)
	}
	want(t, w.poll(), loop.PollSummary{Skipped: "Slack is disabled (channels.slack.enabled is false)"})
}

// Delete, then create again: the old thread's replies are dropped as unmapped, once.
func TestDelete_ThenRecreateGetsANewThreadAndTheOldOneIsDroppedUnmapped(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	req := loop.StandingCreateRequest{Name: "helper", Cwd: t.TempDir(), SlackEnabled: true, Start: true}
	if _, err := w.svc.CreateStanding(ctx, w.cfg, req); err != nil {
		t.Fatal(err)
	}
	old := w.ws.Posts()[0].TS
	if res, err := w.svc.DeleteStanding(ctx, w.cfg, "helper"); err != nil || !res.OK {
		t.Fatalf("delete %+v %v", res, err)
	}
	if _, err := w.svc.CreateStanding(ctx, w.cfg, req); err != nil {
		t.Fatal(err)
	}
	posts := w.ws.Posts()
	if len(posts) != 2 || posts[1].TS == old || posts[1].ThreadTS != "" {
		t.Fatalf("posts %+v", posts)
	}
	w.ws.Reply("CCENTRAL", old, "UOPS", "to the old session")
	w.ws.Reply("CCENTRAL", posts[1].TS, "UOPS", "to the new one")
	want(t, w.poll(), loop.PollSummary{Replies: 2, Processed: 1, Delivered: 1, Dropped: 1})
	if got := w.runner.Messages(); len(got) != 1 || !strings.HasSuffix(got[0], "to the new one") {
		t.Fatalf("pasted %q", got)
	}
	evs := w.events("channel.dropped")
	if len(evs) != 1 || evs[0].Field("reason") != "unmapped" || evs[0].Field("thread") != old {
		t.Fatalf("drops %+v", evs)
	}
	want(t, w.poll(), loop.PollSummary{})
}

// A reply to a stopped session waits channels.slack.retrySeconds for it;
// past that it is dropped with the reason.
func TestPoll_UndeliverableRepliesAreDroppedWithTheReason(t *testing.T) {
	w := newWorld(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w.poller.Clock = func() time.Time { return now }
	thread := w.start("supervisor").SlackThread
	if _, err := w.svc.StopStanding(context.Background(), w.cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	w.ws.Reply("COWN", thread, "UOPS", "anyone home?")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	now = now.Add(w.cfg.Slack.RetryWindow())
	want(t, w.poll(), loop.PollSummary{Dropped: 1})
	evs := w.events("channel.dropped")
	if len(evs) != 1 || evs[0].Level != "warning" || evs[0].Field("reason") != "undeliverable" ||
		!strings.Contains(evs[0].Field("error").(string), "no live tmux pane") {
		t.Fatalf("events %+v", evs)
	}
}

func TestPoll_AWorkItemThreadIsRecordedNotMirroredNorDelivered(t *testing.T) {
	w := newWorld(t)
	w.ws.Add(fakeslack.Message{Channel: "CCENTRAL", User: fakeslack.BotUserID, BotID: fakeslack.BotID, Text: "root"})
	root := w.ws.Posts()[0].TS
	if err := w.svc.DB.Update(func(tx *store.Tx) error { return tx.BindThread(root, "github:o/r#1", "CCENTRAL") }); err != nil {
		t.Fatal(err)
	}
	w.ws.Reply("CCENTRAL", root, "UOPS", "looks good")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	if got := names(w.events("channel.*")); !slices.Equal(got, []string{"channel.reply_received", "channel.dropped"}) {
		t.Fatalf("events %v", got)
	}
}

func TestPoll_SkipsAndNeedsNoTokenWithoutThreads(t *testing.T) {
	w := newWorld(t)
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", "")
	want(t, w.poll(), loop.PollSummary{}) // nothing bound: no call, no token needed
	if w.ws.TotalCalls() != 0 {
		t.Fatal("a poll without bound threads called Slack")
	}
	if err := w.svc.DB.Update(func(tx *store.Tx) error { return tx.BindThread("1700000000.000100", "standing:supervisor", "COWN") }); err != nil {
		t.Fatal(err)
	}
	sum := w.poll()
	if !strings.HasPrefix(sum.Skipped, "slack: no bot token — export THE_LOOP_SLACK_BOT_TOKEN") {
		t.Fatalf("summary %+v", sum)
	}
	w.cfg.Slack.ReadMode = "socket"
	if sum := w.poll(); !strings.Contains(sum.Skipped, "read.mode is socket") {
		t.Fatalf("socket: %+v", sum)
	}
	w.cfg.Slack.ReadMode = "off"
	if sum := w.poll(); !strings.Contains(sum.Skipped, "read.mode is off") {
		t.Fatalf("off: %+v", sum)
	}
}

func TestPoll_AThreadThatCannotBeReadIsLoggedAndTheRestGoOn(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	if err := w.svc.DB.Update(func(tx *store.Tx) error { return tx.BindThread("1600000000.000100", "standing:gone", "CNOWHERE") }); err != nil {
		t.Fatal(err)
	}
	w.ws.Reply("COWN", thread, "UOPS", "still here")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	if logs := w.logs.String(); !strings.Contains(logs, "thread_not_found") || !strings.Contains(logs, "1600000000.000100") {
		t.Fatalf("logs:\n%s", logs)
	}
}

// The token is in no event, log line or error.
func TestToken_NeverInEventsLogsOrErrors(t *testing.T) {
	w := newWorld(t)
	w.ws.FailPosts("echo:" + token)
	w.start("supervisor")
	w.ws.FailPosts("")
	w.cfg.Standing.Sessions[0].Name = "other"
	thread := w.start("other").SlackThread
	w.ws.Reply("COWN", thread, "UEVIL", "x")
	w.ws.Reply("COWN", thread, "UOPS", "y")
	w.poll()
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", "xoxb-rotated-WRONG")
	w.ws.Reply("COWN", thread, "UOPS", "z")
	w.poll()
	raw, err := json.Marshal(w.events())
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"events": string(raw), "logs": w.logs.String()} {
		if strings.Contains(text, token) || strings.Contains(text, "xoxb-rotated-WRONG") {
			t.Fatalf("the token is in the %s:\n%s", what, text)
		}
	}
	if !strings.Contains(string(raw), "[redacted]") || !strings.Contains(w.logs.String(), "invalid_auth") {
		t.Fatalf("the failures were not recorded:\n%s\n%s", raw, w.logs.String())
	}
}

// The service's loop (decisions D22): a cycle every interval, until ctx ends.
func TestRun_PollsEveryIntervalUntilCancelled(t *testing.T) {
	w := newWorld(t)
	thread := w.start("supervisor").SlackThread
	w.cfg.Slack.IntervalSeconds = 1
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.poller.Run(ctx, func() *config.Config { return w.cfg })
	}()
	w.ws.Reply("COWN", thread, "UOPS", "from the loop")
	testkit.Eventually(t, func() bool { return len(w.runner.Messages()) > 0 }, 10*time.Second, "the loop delivered nothing")
	cancel()
	testkit.Await(t, done, "Run to return after its context ended")
}

// TestPoll_ReadsLiveThreadsNewestFirstThenClosedThenTombstones: Slack's
// rate limit may end a cycle early, so what matters most is read first —
// threads of live sessions, newest binding first — and the threads of
// closed work items and of deleted sessions (tombstones) last.
func TestPoll_ReadsLiveThreadsNewestFirstThenClosedThenTombstones(t *testing.T) {
	w := newWorld(t)
	closed, err := loop.ParseWorkItemRef("github:o/r#9")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.svc.DB.Update(func(tx *store.Tx) error {
		for _, b := range [][2]string{
			{"1700000000.000100", "standing:old"},
			{"1700000000.000200", "standing:deleted"},
			{"1700000000.000300", closed.String()},
			{"1700000000.000400", "github:o/r#10"},
			{"1700000000.000500", "standing:new"},
		} {
			if err := tx.BindThread(b[0], b[1], "CCENTRAL"); err != nil {
				return err
			}
		}
		if _, err := tx.UnbindRef("standing:deleted"); err != nil {
			return err
		}
		return tx.PutWorkItem(closed.Slug(), &loop.WorkItemRecord{
			WorkItem: loop.WorkItemInfo{Ref: closed.String(), Provider: closed.Provider, Owner: closed.Owner, Repo: closed.Repo, Number: closed.Number},
			Harness:  "claude", HarnessSessionID: "x", Status: loop.SessionClosed,
		})
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	w.ws.OnReplies(func(_, thread string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, thread)
	})
	w.poll()
	want := []string{"1700000000.000500", "1700000000.000400", "1700000000.000100", "1700000000.000300", "1700000000.000200"}
	if !slices.Equal(order, want) {
		t.Fatalf("read order %v, want %v", order, want)
	}
}

// TestPoll_ARateLimitEndsTheCycleAndPausesUntilRetryAfter: Slack's 429
// ends the cycle at once (no thread after it is read), is recorded once as
// a warning, and the cycles until its Retry-After call Slack not at all.
func TestPoll_ARateLimitEndsTheCycleAndPausesUntilRetryAfter(t *testing.T) {
	w := newWorld(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w.poller.Clock = func() time.Time { return now }
	thread := w.start("supervisor").SlackThread
	if err := w.svc.DB.Update(func(tx *store.Tx) error { return tx.BindThread("1600000000.000100", "standing:older", "COWN") }); err != nil {
		t.Fatal(err)
	}
	w.ws.Reply("COWN", thread, "UOPS", "after the limit")
	w.ws.RateLimitReplies(1, 20)
	if sum := w.poll(); sum != (loop.PollSummary{}) {
		t.Fatalf("limited cycle %+v", sum)
	}
	if n := w.ws.Calls("conversations.replies"); n != 1 {
		t.Fatalf("%d conversations.replies calls: the cycle went on after the 429", n)
	}
	evs := w.events("channel.rate_limited")
	if len(evs) != 1 || evs[0].Level != loop.LevelWarning || jsonNumberOf(evs[0].Field("retry_after_seconds")) != "20" {
		t.Fatalf("rate-limit events %+v", evs)
	}
	if !strings.Contains(w.logs.String(), "rate limited") {
		t.Fatalf("logs:\n%s", w.logs)
	}
	now = now.Add(19 * time.Second)
	if sum := w.poll(); !strings.Contains(sum.Skipped, "rate-limited") || w.ws.Calls("conversations.replies") != 1 {
		t.Fatalf("a cycle within Retry-After: %+v, %d calls", sum, w.ws.Calls("conversations.replies"))
	}
	now = now.Add(2 * time.Second)
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	if n := len(w.events("channel.rate_limited")); n != 1 {
		t.Fatalf("%d rate-limit events, want the one", n)
	}
}

func jsonNumberOf(v any) string { return fmt.Sprint(v) }
