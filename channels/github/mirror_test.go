package github

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels"
	"github.com/the-loop-dev/the-loop/channels/slack/fakeslack"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/store"
	"github.com/the-loop-dev/the-loop/talk"
	"github.com/the-loop-dev/the-loop/threadlog"
)

const (
	octo  = "github:octo/repo#5"
	token = "xoxb-github-test-SECRET-42"
)

// world is the real pipeline (lifecycle service on a bbolt file, the Slack
// client, the announcer, the poller) against a fake Slack workspace and a
// fake tmux.
type world struct {
	t      *testing.T
	ws     *fakeslack.Workspace
	runner *testkit.FakeTmux
	svc    *lifecycle.Service
	log    *threadlog.Log // the thread log over svc's store
	cfg    *config.Config
	poller *channels.Poller
}

// mirrorWorld is the pipeline with the mirror wired in and a fake gh on
// PATH: "supervisor" has Slack on in its own channel COWN (central
// channel CCENTRAL) and member UOPS is admitted.
func mirrorWorld(t *testing.T) (*world, *testkit.GH) {
	t.Helper()
	ws := fakeslack.New(t, token)
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", token)
	db, err := store.Open(filepath.Join(t.TempDir(), "the-loop.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := testkit.NewFakeTmux()
	svc := &lifecycle.Service{
		DB:        db,
		Runner:    func(string) loop.Runner { return r },
		Harness:   func(string, string) (loop.Harness, error) { return testkit.FakeHarness{}, nil },
		LookPath:  func(b string) (string, error) { return "/usr/bin/" + b, nil },
		Source:    "test",
		Announcer: channels.Announcer{},
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
	w := &world{t: t, ws: ws, runner: r, svc: svc, log: &threadlog.Log{DB: db, Events: svc}, cfg: cfg}
	current := func() *config.Config { return w.cfg }
	w.poller = &channels.Poller{Threads: w.log, Standing: svc.Standing(current), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	w.poller.WorkItems = &Mirror{WorkItems: svc.WorkItems(current), Events: svc}
	bin := filepath.Join(t.TempDir(), "bin")
	gh := testkit.FakeGH(t, bin)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return w, gh
}

// startItem starts octo's session with --slack and returns its thread.
func (w *world) startItem() string {
	w.t.Helper()
	res, err := w.svc.StartWorkItem(context.Background(), w.cfg, loop.WorkItemStartRequest{Ref: octo, Cwd: w.t.TempDir(), Slack: true})
	if err != nil || res.Outcome == loop.OutcomeFailed {
		w.t.Fatalf("start: %+v %v", res, err)
	}
	var thread string
	for _, th := range mustThreads(w.t, w.log) {
		if th.Ref == octo {
			thread = th.ThreadTS
		}
	}
	if thread == "" {
		w.t.Fatalf("no thread bound to %s: %+v", octo, res.Messages)
	}
	return thread
}

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

func want(t *testing.T, got, want loop.PollSummary) {
	t.Helper()
	if got != want {
		t.Fatalf("summary %+v, want %+v", got, want)
	}
}

func mustThreads(t *testing.T, log *threadlog.Log) []loop.BoundThread {
	t.Helper()
	th, err := log.Threads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestMirror_AWorkItemReplyIsCommentedThenDelivered(t *testing.T) {
	w, gh := mirrorWorld(t)
	thread := w.startItem()
	posts := w.ws.Posts()
	if len(posts) != 1 || posts[0].Channel != "CCENTRAL" || posts[0].TS != thread ||
		!strings.HasPrefix(posts[0].Text, "the-loop: session.started on "+octo+"\n\nthe-loop session for `"+octo+"` is up (claude).") {
		t.Fatalf("posts %+v", posts)
	}
	if evs := w.events("session.announced"); len(evs) != 1 || evs[0].Field("work_item") != octo ||
		evs[0].Field("channel") != "CCENTRAL" || evs[0].Field("thread") != thread {
		t.Fatalf("session.announced %+v", evs)
	}

	w.ws.Reply("CCENTRAL", thread, "UOPS", "Use the v2 API.")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	calls := gh.Calls()
	wantArgv := []string{"api", "--method", "POST", "repos/octo/repo/issues/5/comments", "-f",
		"body=" + CommentBody("UOPS", "Use the v2 API.", w.cfg.Routing.ControlKeywords)}
	if len(calls) != 1 || !slices.Equal(calls[0], wantArgv) {
		t.Fatalf("gh calls %q", calls)
	}
	if got := w.runner.Messages(); !slices.Equal(got, []string{talk.FrameReply(octo, "slack:UOPS", "Use the v2 API.")}) {
		t.Fatalf("pasted %q", got)
	}
	evs := w.events("channel.*", "session.reply_sent")
	if got := names(evs); !slices.Equal(got, []string{"channel.reply_received", "channel.mirrored", "session.reply_sent"}) {
		t.Fatalf("events %v", got)
	}
	if f := fields(evs[1]); f["channel"] != "slack" || f["work_item"] != octo || f["actor"] != "UOPS" || f["level"] != "info" {
		t.Fatalf("channel.mirrored %v", f)
	}
	if f := fields(evs[2]); f["actor"] != "slack:UOPS" {
		t.Fatalf("session.reply_sent %v", f)
	}
	if n := w.ws.Calls("chat.postMessage"); n != 1 {
		t.Fatalf("%d posts: a reply posts nothing in Slack", n)
	}
}

func TestMirror_AFailureStillDeliversOnce(t *testing.T) {
	w, gh := mirrorWorld(t)
	thread := w.startItem()
	gh.ExitWith(t, 1)
	w.ws.Reply("CCENTRAL", thread, "UOPS", "ship it")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	want(t, w.poll(), loop.PollSummary{})
	if n := len(gh.Calls()); n != 1 {
		t.Fatalf("%d gh calls", n)
	}
	evs := w.events("channel.mirror_failed")
	if len(evs) != 1 || evs[0].Level != "warning" || evs[0].Field("work_item") != octo ||
		!strings.Contains(evs[0].Field("error").(string), "HTTP 502: fakegh was told to fail") {
		t.Fatalf("mirror_failed %+v", evs)
	}
	if got := w.runner.Messages(); len(got) != 1 || got[0] != talk.FrameReply(octo, "slack:UOPS", "ship it") {
		t.Fatalf("pasted %q", got)
	}
}

func TestMirror_AMissingGhOrANonGitHubRefFailsAndNeverPanics(t *testing.T) {
	w, gh := mirrorWorld(t)
	thread := w.startItem()
	w.cfg.GitHubBinary = "no-such-gh-for-the-loop"
	w.ws.Reply("CCENTRAL", thread, "UOPS", "first")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	evs := w.events("channel.mirror_failed")
	if len(evs) != 1 || !strings.Contains(evs[0].Field("error").(string), "GitHub CLI 'no-such-gh-for-the-loop' not found (integrations.github.cli.binary)") {
		t.Fatalf("mirror_failed %+v", evs)
	}

	// A thread bound to a work item on another provider: nothing to
	// comment on, and no session to deliver to.
	w.ws.Add(fakeslack.Message{Channel: "CCENTRAL", User: fakeslack.BotUserID, BotID: fakeslack.BotID, Text: "root"})
	root := w.ws.Posts()[1].TS
	if err := w.svc.DB.Update(func(tx *store.Tx) error { return tx.BindThread(root, "gitlab:o/r#1", "CCENTRAL") }); err != nil {
		t.Fatal(err)
	}
	w.ws.Reply("CCENTRAL", root, "UOPS", "hello?")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	evs = w.events("channel.mirror_failed", "channel.dropped")
	if len(evs) != 3 || !strings.Contains(evs[1].Field("error").(string), "is not a GitHub issue (provider 'gitlab')") ||
		evs[2].Field("reason") != "undeliverable" {
		t.Fatalf("events %+v", evs)
	}
	if n := len(gh.Calls()); n != 0 {
		t.Fatalf("%d gh calls", n)
	}
}

func TestMirror_AStandingReplyNeverCallsGh(t *testing.T) {
	w, gh := mirrorWorld(t)
	thread := w.start("supervisor").SlackThread
	w.ws.Reply("COWN", thread, "UOPS", "the-loop stop")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	if n := len(gh.Calls()); n != 0 {
		t.Fatalf("%d gh calls for a standing reply", n)
	}
	if got := names(w.events("channel.*")); !slices.Equal(got, []string{"channel.reply_received", "channel.mirror_skipped"}) {
		t.Fatalf("events %v", got)
	}
}

func TestMirror_ReplyToAClosedSessionIsMirroredThenDropped(t *testing.T) {
	w, gh := mirrorWorld(t)
	thread := w.startItem()
	if res, err := w.svc.CloseWorkItem(context.Background(), w.cfg, octo, nil); err != nil || !res.Closed {
		t.Fatalf("close %+v %v", res, err)
	}
	w.ws.Reply("CCENTRAL", thread, "UOPS", "too late?")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	if n := len(gh.Calls()); n != 1 {
		t.Fatalf("%d gh calls: the ticket still records the answer", n)
	}
	evs := w.events("channel.dropped")
	if len(evs) != 1 || evs[0].Field("reason") != "undeliverable" || !strings.Contains(evs[0].Field("error").(string), "a reply never spawns one") {
		t.Fatalf("dropped %+v", evs)
	}
	// Starting it again keeps the thread: still one post.
	if again := w.startItem(); again != thread || len(w.ws.Posts()) != 1 {
		t.Fatalf("thread %s, was %s; posts %d", again, thread, len(w.ws.Posts()))
	}
}

// A work item's reply is recorded on the ticket at once and delivered into
// its session once the session is back.
func TestMirror_AReplyWhileTheWorkItemsPaneIsGoneIsMirroredOnceAndDeliveredWhenItIsBack(t *testing.T) {
	w, gh := mirrorWorld(t)
	thread := w.startItem()
	item, _ := loop.ParseWorkItemRef(octo)
	w.runner.Mu.Lock()
	delete(w.runner.Panes, item.TmuxTarget()) // the agent's pane died
	w.runner.Mu.Unlock()
	w.ws.Reply("CCENTRAL", thread, "UOPS", "use the v2 API")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	if n := len(gh.Calls()); n != 1 {
		t.Fatalf("%d gh calls: the ticket records the answer at once", n)
	}
	if q := w.events("channel.reply_queued"); len(q) != 1 || q[0].Field("work_item") != octo {
		t.Fatalf("reply_queued %+v", q)
	}
	if again := w.startItem(); again != thread {
		t.Fatalf("thread %s, was %s", again, thread)
	}
	want(t, w.poll(), loop.PollSummary{Delivered: 1})
	if got := w.runner.Messages(); !slices.Equal(got, []string{talk.FrameReply(octo, "slack:UOPS", "use the v2 API")}) {
		t.Fatalf("pasted %q", got)
	}
	if n := len(gh.Calls()); n != 1 {
		t.Fatalf("%d gh calls: mirrored once", n)
	}
}

// The ticket's answer of record is unescaped too.
func TestMirror_TheTicketReadsTheReplyUnescaped(t *testing.T) {
	w, gh := mirrorWorld(t)
	thread := w.startItem()
	w.ws.Reply("CCENTRAL", thread, "UOPS", "keep `a &lt; b` &amp; ship")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	calls := gh.Calls()
	if len(calls) != 1 || calls[0][len(calls[0])-1] != "body="+CommentBody("UOPS", "keep `a < b` & ship", w.cfg.Routing.ControlKeywords) {
		t.Fatalf("gh calls %q", calls)
	}
	if got := w.runner.Messages(); !slices.Equal(got, []string{talk.FrameReply(octo, "slack:UOPS", "keep `a < b` & ship")}) {
		t.Fatalf("pasted %q", got)
	}
}
