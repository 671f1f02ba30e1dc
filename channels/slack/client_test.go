package slack

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels/slack/fakeslack"
	"github.com/the-loop-dev/the-loop/config"
)

const token = "xoxb-test-0123456789-SECRET"

// newClient points a client at a fake workspace, with the token exported
// under the default variable.
func newClient(t *testing.T) (*Client, *fakeslack.Workspace) {
	t.Helper()
	ws := fakeslack.New(t, token)
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", token)
	cfg := config.Default().Slack
	cfg.APIURL = strings.TrimSuffix(ws.URL(), "/") // the trailing "/" is added
	return New(cfg), ws
}

func TestPost_ReturnsTheNewThreadsTS(t *testing.T) {
	c, ws := newClient(t)
	ctx := context.Background()
	a, err := c.Post(ctx, "C1", "hello")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Post(ctx, "C1", "again")
	if err != nil || a == b || loop.CompareTS(a, b) >= 0 {
		t.Fatalf("ts %q then %q (%v): two posts must not collide", a, b, err)
	}
	posts := ws.Posts()
	if len(posts) != 2 || posts[0].Channel != "C1" || posts[0].Text != "hello" || posts[0].TS != a {
		t.Fatalf("posts %+v", posts)
	}
}

func TestPost_RefusesWithoutChannelOrToken(t *testing.T) {
	c, ws := newClient(t)
	if _, err := c.Post(context.Background(), "", "x"); err == nil || !strings.Contains(err.Error(), "no channel id configured") {
		t.Fatalf("no channel: %v", err)
	}
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", "")
	_, err := c.Post(context.Background(), "C1", "x")
	if !errors.Is(err, ErrNoToken) || !strings.Contains(err.Error(), "export THE_LOOP_SLACK_BOT_TOKEN") {
		t.Fatalf("no token: %v", err)
	}
	if ws.TotalCalls() != 0 {
		t.Fatalf("%d calls reached Slack", ws.TotalCalls())
	}
}

func TestErrors_NeverQuoteTheToken(t *testing.T) {
	c, ws := newClient(t)
	ws.FailPosts("token_revoked:" + token) // a server that echoes the token back
	_, err := c.Post(context.Background(), "C1", "x")
	if err == nil || strings.Contains(err.Error(), token) || strings.Contains(loop.ErrorMessage(err), token) {
		t.Fatalf("error %v", err)
	}
	if errors.Unwrap(err) != nil {
		t.Fatalf("the error wraps a cause that may quote the token: %v", errors.Unwrap(err))
	}
	if !strings.HasPrefix(err.Error(), "slack: post failed: token_revoked:") {
		t.Fatalf("error %q", err)
	}
	// A wrong token is refused by the workspace; the message names neither.
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", "xoxb-wrong-TOKEN")
	if _, err := c.AuthTest(context.Background()); err == nil || strings.Contains(err.Error(), "xoxb-wrong-TOKEN") || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("wrong token: %v", err)
	}
}

func TestReplies_ReadsEveryPageInOrderAfterTheCursor(t *testing.T) {
	c, ws := newClient(t)
	ws.SetPageSize(2)
	ctx := context.Background()
	root, _ := c.Post(ctx, "C1", "root")
	var want []string
	for i := range 7 {
		want = append(want, ws.Reply("C1", root, "U1", string(rune('a'+i))))
	}
	ws.Reply("C1", "1.1", "U1", "another thread")
	got, err := c.Replies(ctx, "C1", root, root)
	if err != nil {
		t.Fatal(err)
	}
	var ts []string
	for _, r := range got {
		ts = append(ts, r.TS)
		if r.ThreadTS != root || r.User != "U1" {
			t.Fatalf("reply %+v", r)
		}
	}
	if !slices.Equal(ts, want) || got[0].Text != "a" || got[6].Text != "g" {
		t.Fatalf("replies %v, want %v", ts, want)
	}
	if n := ws.Calls("conversations.replies"); n != 4 {
		t.Fatalf("%d pages read, want 4 (root + 7 replies, 2 a page)", n)
	}
	after, err := c.Replies(ctx, "C1", root, want[4])
	if err != nil || len(after) != 2 || after[0].TS != want[5] {
		t.Fatalf("after the cursor: %+v %v", after, err)
	}
}

func TestAuthTest_AskedOncePerToken(t *testing.T) {
	c, ws := newClient(t)
	for range 3 {
		id, err := c.AuthTest(context.Background())
		if err != nil || id != fakeslack.BotUserID {
			t.Fatalf("%q %v", id, err)
		}
	}
	if n := ws.Calls("auth.test"); n != 1 {
		t.Fatalf("auth.test called %d times", n)
	}
}
