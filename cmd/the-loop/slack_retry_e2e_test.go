package main

import (
	"strings"
	"testing"
)

// Through the CLI: a reply to a stopped session waits
// in the store and reaches the pane, unescaped and once, when the session
// is back; past channels.slack.retrySeconds one is dropped and its thread
// told so, once.
func TestSlack_AReplyToAStoppedSessionWaitsForItAndExpiresPastRetrySeconds(t *testing.T) {
	s := newSlackEnv(t)
	s.slackConfig("{enabled: false}", 30)
	s.must(0, "standing", "start", "supervisor")
	s.waitReady("supervisor")
	thread := s.ws.Posts()[0].TS

	s.must(0, "standing", "stop", "supervisor")
	s.ws.Reply("COWN", thread, "UOPS", "check `a &lt; b &amp;&amp; c` with <@U0ANN>")
	if got := s.poll(); got != "1 repl(ies): 1 processed (0 delivered), 0 dropped" {
		t.Fatalf("poll while stopped: %q", got)
	}
	if q := s.events("--type", "channel.reply_queued"); len(q) != 1 || q[0].Field("thread") != thread {
		t.Fatalf("reply_queued %+v", q)
	}
	if n := len(s.events("--type", "channel.dropped")); n != 0 {
		t.Fatalf("%d drops while the session is stopped", n)
	}
	s.must(0, "standing", "start", "supervisor")
	s.waitReady("supervisor")
	if got := s.poll(); got != "0 repl(ies): 0 processed (1 delivered), 0 dropped" {
		t.Fatalf("poll once it is back: %q", got)
	}
	waitFor(t, "the kept reply in the pane", func() bool { return len(s.agent.Messages()) == 1 })
	if got := s.agent.Messages()[0]; got != fromSlack("supervisor", "UOPS", "check `a < b && c` with @U0ANN") {
		t.Fatalf("pane got %q", got)
	}
	if got := s.poll(); got != "0 repl(ies): 0 processed (0 delivered), 0 dropped" {
		t.Fatalf("third poll: %q", got)
	}

	// A one-second window: the next reply to the stopped session expires.
	y := strings.ReplaceAll(slackSession, "%SLACK%", s.ws.URL())
	y = strings.ReplaceAll(y, "%SERVICE%", "{enabled: false}")
	y = strings.ReplaceAll(y, "%INTERVAL%", "30")
	s.config(strings.Replace(y, "authorizedUsers: [UOPS]", "authorizedUsers: [UOPS]\n    retrySeconds: 1", 1))
	s.must(0, "standing", "stop", "supervisor")
	s.ws.Reply("COWN", thread, "UOPS", "too late")
	if got := s.poll(); got != "1 repl(ies): 1 processed (0 delivered), 0 dropped" {
		t.Fatalf("poll while stopped: %q", got)
	}
	waitFor(t, "the reply to expire", func() bool { return s.poll() == "0 repl(ies): 0 processed (0 delivered), 1 dropped" })
	drops := s.events("--type", "channel.dropped")
	if len(drops) != 1 || drops[0].Field("reason") != "undeliverable" ||
		!strings.HasPrefix(drops[0].Field("error").(string), "not delivered within 1 s (channels.slack.retrySeconds)") {
		t.Fatalf("drops %+v", drops)
	}
	posts := s.ws.Posts()
	if len(posts) != 2 || posts[1].ThreadTS != thread || !strings.Contains(posts[1].Text, "Your reply in this thread was not delivered") {
		t.Fatalf("posts %+v", posts)
	}
	if got := s.poll(); got != "0 repl(ies): 0 processed (0 delivered), 0 dropped" {
		t.Fatalf("after the notice: %q", got)
	}
	if n := len(s.ws.Posts()); n != 2 {
		t.Fatalf("%d posts: the thread is told once", n)
	}
	s.assertNoToken()
}
