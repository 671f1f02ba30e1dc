package slack

import (
	"context"
	"testing"
)

// TestUnescape_IsWhatTheAuthorTyped: Slack's entities and
// <…> tokens never reach a pane or a ticket.
func TestUnescape_IsWhatTheAuthorTyped(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"if a &lt; b &amp;&amp; c &gt; d", "if a < b && c > d"},
		{"&amp;lt; stays an entity", "&lt; stays an entity"},
		{"ask <@U0123ABC> and <@U9|ann>", "ask @U0123ABC and @ann"},
		{"in <#C0123|general>, <#C0456|> and <#C0789>", "in #general, #C0456 and #C0789"},
		{"<!here> <!channel> <!everyone>", "@here @channel @everyone"},
		{"<!subteam^S012|@oncall> look", "@oncall look"},
		{"on <!date^1392734382^{date}|Feb 18, 2014>", "on Feb 18, 2014"},
		{"see <https://example.com/a?x=1&amp;y=2>", "see https://example.com/a?x=1&y=2"},
		{"see <https://example.com|example.com>", "see example.com"},
		{"see <https://example.com/docs|the docs>", "see the docs (https://example.com/docs)"},
		{"mail <mailto:a@b.c|a@b.c>", "mail a@b.c"},
		{"a lone < is kept", "a lone < is kept"},
		{"a&lt;b&gt;", "a<b>"},
		{"`&lt;tag&gt;` in code", "`<tag>` in code"},
	} {
		if got := Unescape(c.in); got != c.want {
			t.Errorf("Unescape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReplies_AreUnescaped(t *testing.T) {
	c, ws := newClient(t)
	ctx := context.Background()
	root, err := c.Post(ctx, "C1", "root")
	if err != nil {
		t.Fatal(err)
	}
	ws.Reply("C1", root, "U1", "run `ls &lt;dir&gt; &amp;&amp; echo ok` for <@U2>")
	got, err := c.Replies(ctx, "C1", root, root)
	if err != nil || len(got) != 1 || got[0].Text != "run `ls <dir> && echo ok` for @U2" {
		t.Fatalf("replies %+v, %v", got, err)
	}
}

func TestPostInThread_RepliesInTheThread(t *testing.T) {
	c, ws := newClient(t)
	ctx := context.Background()
	root, err := c.Post(ctx, "C1", "root")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := c.PostInThread(ctx, "C1", root, "a note")
	if err != nil {
		t.Fatal(err)
	}
	posts := ws.Posts()
	if len(posts) != 2 || posts[1].TS != ts || posts[1].ThreadTS != root || posts[1].Text != "a note" {
		t.Fatalf("posts %+v", posts)
	}
	if _, err := c.PostInThread(ctx, "C1", "", "x"); err == nil {
		t.Fatal("posted in no thread")
	}
}
