package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels/slack/fakeslack"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// answerSlackEnv is slackSession (service down) whose agent answers with
// answer, with postReplies as given ("" leaves it out).
func answerSlackEnv(t *testing.T, postReplies, answer string) (*slackEnv, string) {
	t.Helper()
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", slackToken)
	s := &slackEnv{env: newEnv(t, testkit.TurnTime(50*time.Millisecond), testkit.Answer(answer)), ws: fakeslack.New(t, slackToken)}
	s.extraEnv = append(s.extraEnv, "CLAUDE_CONFIG_DIR="+filepath.Join(s.dir, "claude-config"))
	y := strings.ReplaceAll(slackSession, "%SLACK%", s.ws.URL())
	y = strings.ReplaceAll(y, "%SERVICE%", "{enabled: false}")
	y = strings.ReplaceAll(y, "%INTERVAL%", "30")
	if postReplies != "" {
		y = strings.Replace(y, "    authorizedUsers: [UOPS]\n", "    authorizedUsers: [UOPS]\n    postReplies: "+postReplies+"\n", 1)
	}
	s.config(y)
	s.must(0, "standing", "start", "supervisor")
	waitActivity(t, s.env, "the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	return s, s.ws.Posts()[0].TS
}

// threadPosts are the bot's posts in thread after the announcement.
func threadPosts(s *slackEnv, thread string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, p := range s.ws.Posts() {
		if p.ThreadTS == thread {
			out = append(out, p)
		}
	}
	return out
}

func TestSlack_PostRepliesAnswersInTheThreadOnceSplitAndRedacted(t *testing.T) {
	long := strings.Repeat("0123456789", 1000) // 10,000 characters: more than three parts
	s, thread := answerSlackEnv(t, "true", "secret "+slackToken+" <!channel> & "+long)
	s.ws.Reply("COWN", thread, "UOPS", "status?")
	if got := s.poll(); got != "1 repl(ies): 1 processed (1 delivered), 0 dropped" {
		t.Fatalf("poll: %q", got)
	}
	waitFor(t, "the say's turn to end", func() bool { return len(s.events("--type", "standing.turn_ended")) == 2 })
	// A failed post is a warning and is tried again next cycle.
	s.ws.FailPosts("channel_not_found")
	s.poll()
	if evs := s.events("--type", "standing.post_failed"); len(evs) != 1 || evs[0].Level != loop.LevelWarning {
		t.Fatalf("post_failed %+v", evs)
	}
	s.ws.FailPosts("")
	s.poll()
	posts := threadPosts(s, thread)
	if len(posts) != 3 {
		t.Fatalf("%d posts in the thread, want 3 parts: %+v", len(posts), posts)
	}
	all := posts[0].Text + posts[1].Text + posts[2].Text
	if strings.Contains(all, slackToken) || !strings.HasPrefix(posts[0].Text, "secret [redacted] &lt;!channel&gt; &amp; 0123") {
		t.Fatalf("first part %q", posts[0].Text[:80])
	}
	for i, p := range posts {
		if n := len([]rune(p.Text)); n > 3000 {
			t.Fatalf("part %d has %d characters", i, n)
		}
	}
	if !strings.HasSuffix(posts[2].Text, "… truncated — `the-loop standing transcript supervisor`") {
		t.Fatalf("last part ends %q", posts[2].Text[len(posts[2].Text)-80:])
	}
	evs := s.events("--type", "standing.reply_posted")
	if len(evs) != 1 || evs[0].Field("thread") != thread {
		t.Fatalf("reply_posted %+v", evs)
	}
	s.poll()
	if n := len(threadPosts(s, thread)); n != 3 {
		t.Fatalf("posted again: %d posts", n)
	}
}

func TestSlack_WithoutPostRepliesNoAnswerIsPosted(t *testing.T) {
	s, thread := answerSlackEnv(t, "", "an answer")
	s.ws.Reply("COWN", thread, "UOPS", "status?")
	s.poll()
	waitFor(t, "the say's turn to end", func() bool { return len(s.events("--type", "standing.turn_ended")) == 2 })
	s.poll()
	if posts := threadPosts(s, thread); len(posts) != 0 {
		t.Fatalf("posts %+v", posts)
	}
}

func TestSlack_APermissionDialogPostsOneAttentionNote(t *testing.T) {
	s, thread := answerSlackEnv(t, "", "an answer")
	typeIn(t, s.env, testkit.FakeTool("Bash", "ls"))
	waitActivity(t, s.env, "waiting on the dialog", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWaiting })
	s.poll()
	s.poll()
	posts := threadPosts(s, thread)
	if len(posts) != 1 || !strings.Contains(posts[0].Text, "needs attention: Claude needs your permission to use Bash") {
		t.Fatalf("attention posts %+v", posts)
	}
	// The dialog answered and the turn over, a new dialog is a new episode.
	typeIn(t, s.env, "1")
	waitActivity(t, s.env, "idle after the tool", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle })
	typeIn(t, s.env, testkit.FakeTool("Bash", "pwd"))
	waitActivity(t, s.env, "waiting again", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityWaiting })
	s.poll()
	if posts := threadPosts(s, thread); len(posts) != 2 {
		t.Fatalf("attention posts %+v", posts)
	}
	if evs := s.events("--type", "standing.attention_posted"); len(evs) != 2 {
		t.Fatalf("attention_posted %+v", evs)
	}
}

func TestSlack_AnAnswerHoldingTheTokenFilesValueIsRedacted(t *testing.T) {
	const fileToken = "9d2b7c41e0a85f36b1c94e27d0f8a3b56c1e9f402d7a8b3c5e6f10a2b4c6d8e0"
	s, thread := answerSlackEnv(t, "true", "the operator token is "+fileToken+" and "+slackToken)
	if err := os.WriteFile(filepath.Join(s.dir, ".the-loop", "service.token"), []byte(fileToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.ws.Reply("COWN", thread, "UOPS", "what is the token?")
	s.poll()
	waitFor(t, "the say's turn to end", func() bool { return len(s.events("--type", "standing.turn_ended")) == 2 })
	s.poll()
	posts := threadPosts(s, thread)
	if len(posts) != 1 {
		t.Fatalf("%d posts in the thread, want the answer: %+v", len(posts), posts)
	}
	if strings.Contains(posts[0].Text, fileToken) || posts[0].Text != "the operator token is [redacted] and [redacted]" {
		t.Fatalf("posted %q", posts[0].Text)
	}
}
