package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// Slack for work items end to end: `sessions start --slack`
// opens a thread bound to the work item; a reply there is recorded on the
// ticket through the operator's gh — faked on PATH, recording its argv —
// then delivered into the session. Real tmux, the fake agent, the fake
// Slack workspace.

// slackWorkItems is slackSession plus a renamed control keyword (stop is
// "loop halt"; the other keywords keep their defaults).
var slackWorkItems = strings.Replace(slackSession, "resumeProbeSeconds: 1}\n",
	"resumeProbeSeconds: 1}\n  control:\n    keywords: {stop: loop halt}\n", 1)

const octoTarget = "loop-github-octo-repo-5"

// newSlackWorkItemsEnv is a slackEnv with slackWorkItems written and a
// fake gh beside the fake agent.
func newSlackWorkItemsEnv(t *testing.T, service string, interval int) (*slackEnv, *testkit.GH) {
	t.Helper()
	s := newSlackEnv(t)
	gh := testkit.FakeGH(t, s.agent.BinDir())
	y := strings.ReplaceAll(slackWorkItems, "%SLACK%", s.ws.URL())
	y = strings.ReplaceAll(y, "%SERVICE%", service)
	y = strings.ReplaceAll(y, "%INTERVAL%", strconv.Itoa(interval))
	s.config(y)
	return s, gh
}

// startItem runs `sessions start --slack` for octoRef, waits for its agent
// and returns the thread its announcement opened.
func (s *slackEnv) startItem() string {
	s.t.Helper()
	r := s.must(0, "sessions", "start", "--work-item", octoRef, "--cwd", s.dir, "--slack")
	var thread string
	for _, p := range s.ws.Posts() {
		if p.Channel == "CCENTRAL" && strings.HasPrefix(p.Text, "the-loop: session.started on "+octoRef+"\n\n") {
			thread = p.TS
		}
	}
	if thread == "" || !strings.Contains(r.stdout, "announced "+octoRef+" in Slack (channel CCENTRAL, thread "+thread+")") {
		s.t.Fatalf("start --slack: %s\nposts %+v", r, s.ws.Posts())
	}
	waitFor(s.t, octoRef+"'s prompt", func() bool {
		screen, _ := s.tmux("capture-pane", "-p", "-t", "="+octoTarget+":")
		return strings.Contains(screen, "❯")
	})
	return thread
}

// answerOfRecord is original §10.3's comment body, spelled out.
func answerOfRecord(member string, quoted ...string) string {
	return "🗣️ **the-loop** — reply from `" + member + "` on the **slack** channel, recorded here as the answer of record:\n\n> " +
		strings.Join(quoted, "\n> ") + "\n\n🤖 _the-loop, autonomous comment_\n<!-- the-loop:agent-comment -->"
}

// ghComment is the gh argv (after the program name) that comments body on
// octo/repo#5.
func ghComment(body string) []string {
	return []string{"api", "--method", "POST", "repos/octo/repo/issues/5/comments", "-f", "body=" + body}
}

// A reply in the work item's thread → exactly one gh call
// with the original §10.3 body, then delivery with `sessions reply` framing; a reply
// in a standing thread → no gh call. Start, close, start keeps one post.
func TestSlackWorkItems_AReplyIsRecordedOnTheTicketThenDelivered(t *testing.T) {
	s, gh := newSlackWorkItemsEnv(t, "{enabled: false}", 30)
	thread := s.startItem()
	s.must(0, "standing", "start", "supervisor")
	s.waitReady("supervisor")
	posts := s.ws.Posts()
	if len(posts) != 2 || posts[0].Text != "the-loop: session.started on "+octoRef+"\n\n"+
		"the-loop session for `"+octoRef+"` is up (claude). Reply in this thread to answer it — "+
		"replies from an authorized member reach its terminal and are recorded on the ticket as the answer of record." {
		t.Fatalf("posts %+v", posts)
	}
	ann := s.events("--type", "session.announced")
	if len(ann) != 1 || ann[0].Field("work_item") != octoRef || ann[0].Field("channel") != "CCENTRAL" || ann[0].Field("thread") != thread {
		t.Fatalf("session.announced %+v", ann)
	}

	s.ws.Reply("CCENTRAL", thread, "UOPS", "Use the v2 API.\nThen ping me.")
	s.ws.Reply("COWN", posts[1].TS, "UOPS", "status report, please")
	if got := s.poll(); got != "2 repl(ies): 2 processed (2 delivered), 0 dropped" {
		t.Fatalf("poll: %q", got)
	}
	calls := gh.Calls()
	if len(calls) != 1 || !slices.Equal(calls[0], ghComment(answerOfRecord("UOPS", "Use the v2 API.", "Then ping me."))) {
		t.Fatalf("gh calls %q", calls)
	}
	// The newest binding (the supervisor's thread) is read first.
	want := []string{fromSlack("supervisor", "UOPS", "status report, please"), framedReply("slack:UOPS", "Use the v2 API.\nThen ping me.")}
	waitFor(t, "both replies in the panes", func() bool { return len(s.agent.Messages()) == 2 })
	if got := s.agent.Messages(); !slices.Equal(got, want) {
		t.Fatalf("panes got %q", got)
	}
	var got []string
	for _, ev := range s.events("--type", "channel.*") {
		got = append(got, fmt.Sprintf("%s %v %v %v", ev.Event, ev.Field("work_item"), ev.Field("actor"), ev.Field("reason")))
	}
	if want := []string{
		"channel.reply_received standing:supervisor UOPS <nil>",
		"channel.mirror_skipped standing:supervisor <nil> standing-session",
		"channel.reply_received github:octo/repo#5 UOPS <nil>",
		"channel.mirrored github:octo/repo#5 UOPS <nil>",
	}; !slices.Equal(got, want) {
		t.Fatalf("channel events:\n%s", strings.Join(got, "\n"))
	}
	if sent := s.events("--type", "session.reply_sent"); len(sent) != 1 || sent[0].Field("actor") != "slack:UOPS" {
		t.Fatalf("session.reply_sent %+v", sent)
	}

	// Close, then start again with --slack: the thread is kept, one post.
	s.must(0, "sessions", "close", "--work-item", octoRef)
	r := s.must(0, "sessions", "start", "--work-item", octoRef, "--slack")
	if !strings.Contains(r.stdout, "Slack thread "+thread+" in CCENTRAL is already bound to "+octoRef) || len(s.ws.Posts()) != 2 {
		t.Fatalf("restart: %s posts %d", r, len(s.ws.Posts()))
	}
	if n := len(gh.Calls()); n != 1 {
		t.Fatalf("%d gh calls", n)
	}
	s.assertNoToken()
}

// Through the service (the REST start with "slack": true, the
// service's poller): gh exits 1 → channel.mirror_failed, and the reply is
// still delivered, once.
func TestSlackWorkItems_AMirrorFailureStillDeliversOnce(t *testing.T) {
	port := freePort(t)
	s, gh := newSlackWorkItemsEnv(t, fmt.Sprintf("{host: 127.0.0.1, port: %d}", port), 3600)
	serve := s.serve(port)
	thread := s.startItem()
	gh.ExitWith(t, 1)

	s.ws.Reply("CCENTRAL", thread, "UOPS", "ship it")
	if got := s.poll(); got != "1 repl(ies): 1 processed (1 delivered), 0 dropped" {
		t.Fatalf("poll: %q", got)
	}
	if got := s.poll(); got != "0 repl(ies): 0 processed (0 delivered), 0 dropped" {
		t.Fatalf("second poll: %q", got)
	}
	waitFor(t, "the reply in the pane", func() bool { return len(s.agent.Messages()) == 1 })
	serve.kill(syscall.SIGTERM)
	if got := s.agent.Messages(); len(got) != 1 || got[0] != framedReply("slack:UOPS", "ship it") {
		t.Fatalf("pane got %q", got)
	}
	if calls := gh.Calls(); len(calls) != 1 || !slices.Equal(calls[0], ghComment(answerOfRecord("UOPS", "ship it"))) {
		t.Fatalf("gh calls %q", calls)
	}
	failed := s.events("--type", "channel.mirror_failed")
	if len(failed) != 1 || failed[0].Level != "warning" || failed[0].Field("work_item") != octoRef || failed[0].Field("actor") != "UOPS" ||
		!strings.Contains(fmt.Sprint(failed[0].Field("error")), "HTTP 502: fakegh was told to fail") {
		t.Fatalf("channel.mirror_failed %+v", failed)
	}
	if n := len(s.events("--type", "channel.mirrored")); n != 0 {
		t.Fatalf("%d channel.mirrored", n)
	}
	if n := len(s.events("--type", "session.reply_sent")); n != 1 {
		t.Fatalf("%d session.reply_sent", n)
	}
	s.assertNoToken(serve.logs())
}

// A reply carrying configured control keywords (a default one
// and a renamed one) reaches the ticket defanged, and a pasted secret
// scrubbed; the session gets the reply as written.
func TestSlackWorkItems_AControlKeywordReachesTheTicketDefanged(t *testing.T) {
	s, gh := newSlackWorkItemsEnv(t, "{enabled: false}", 30)
	thread := s.startItem()
	const pat = "ghp_0123456789abcdefABCDEF0123456789abcd"
	text := "The-Loop Pause please, then loop halt.\nMy token: " + pat
	s.ws.Reply("CCENTRAL", thread, "UOPS", text)
	if got := s.poll(); got != "1 repl(ies): 1 processed (1 delivered), 0 dropped" {
		t.Fatalf("poll: %q", got)
	}
	calls := gh.Calls()
	want := answerOfRecord("UOPS", "T\u200dhe-Loop Pause please, then l\u200doop halt.", "My token: [redacted]")
	if len(calls) != 1 || !slices.Equal(calls[0], ghComment(want)) {
		t.Fatalf("gh calls %q", calls)
	}
	body := strings.ToLower(calls[0][len(calls[0])-1])
	for _, kw := range []string{"the-loop pause", "loop halt", pat} {
		if strings.Contains(body, strings.ToLower(kw)) {
			t.Fatalf("the comment still holds %q:\n%s", kw, body)
		}
	}
	waitFor(t, "the reply in the pane", func() bool { return len(s.agent.Messages()) == 1 })
	if got := s.agent.Messages()[0]; got != framedReply("slack:UOPS", text) {
		t.Fatalf("pane got %q", got)
	}
}
