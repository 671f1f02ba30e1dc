// Package slack is the Slack Web API client of the-loop's Slack channel: the
// only importer of github.com/slack-go/slack. It posts a message, reads a
// thread's replies (every page) and asks who the bot is; it renders
// outbound messages as the original does (original §9.1, §9.2), and turns
// an inbound message's escaped text back into what its author typed.
//
// The bot token is read from the environment variable the config names
// (channels.slack.botTokenEnv) at every call, and never appears in an error
// this package returns.
package slack

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	goslack "github.com/slack-go/slack"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// DefaultTimeout bounds one Web API call.
const DefaultTimeout = 30 * time.Second

// maxPages bounds one thread's read: a server that keeps handing out
// cursors cannot hold a poll cycle forever.
const maxPages = 1000

// pageLimit is the page size asked of conversations.replies.
const pageLimit = 200

// ErrNoToken is wrapped by the error a call returns when the token's
// environment variable is empty or unset.
var ErrNoToken = errors.New("slack: no bot token")

// Client talks to one Slack workspace's Web API. It is safe for concurrent
// use. The zero value is not usable: build it with New.
type Client struct {
	tokenEnv string
	apiURL   string // "" is Slack's own; else ends with "/"
	http     *http.Client
	getenv   func(string) string

	mu      sync.Mutex
	selfFor [sha256.Size]byte // the token the cached id belongs to
	selfID  string
	selfOK  bool
}

// New builds a client from channels.slack: the token's variable
// (botTokenEnv) and the API's base URL (apiUrl; "" is Slack's public Web
// API). A base URL without its trailing "/" gets one.
func New(cfg config.Slack) *Client {
	api := strings.TrimSpace(cfg.APIURL)
	if api != "" && !strings.HasSuffix(api, "/") {
		api += "/"
	}
	return &Client{
		tokenEnv: cfg.BotTokenEnv,
		apiURL:   api,
		http:     &http.Client{Timeout: DefaultTimeout},
		getenv:   os.Getenv,
	}
}

// TokenEnv is the environment variable the token is read from.
func (c *Client) TokenEnv() string { return c.tokenEnv }

// APIURL is the Web API base URL in use ("" is Slack's own).
func (c *Client) APIURL() string { return c.apiURL }

// token reads the bot token now (original §9.1: at each call).
func (c *Client) token() (string, error) {
	tok := strings.TrimSpace(c.getenv(c.tokenEnv))
	if tok == "" {
		return "", &loop.Error{Code: loop.EINVALID, Err: ErrNoToken,
			Message: "slack: no bot token — export " + c.tokenEnv + " (an xoxb- bot token with chat:write, and channels.history for reads)"}
	}
	return tok, nil
}

// CheckToken reports whether the token's variable holds a token now: nil,
// or the error a call would fail with (it names the variable, never a
// value).
func (c *Client) CheckToken() error {
	_, err := c.token()
	return err
}

// api builds the slack-go client for one call.
func (c *Client) api(tok string) *goslack.Client {
	opts := []goslack.Option{goslack.OptionHTTPClient(c.http)}
	if c.apiURL != "" {
		opts = append(opts, goslack.OptionAPIURL(c.apiURL))
	}
	return goslack.New(tok, opts...)
}

// RateLimitError is wrapped by the error a call returns when Slack
// answered 429: RetryAfter is how long it asks callers to wait (its
// Retry-After). errors.As finds it.
type RateLimitError struct {
	RetryAfter time.Duration
}

// Error says how long to wait.
func (e *RateLimitError) Error() string {
	return "slack: rate limited; retry after " + e.RetryAfter.String()
}

// failure is the error of a call that failed: what went wrong, with the
// token (should the cause quote it) blanked out, and no wrapped cause but a
// *RateLimitError.
func failure(what, tok string, err error) error {
	var limited *goslack.RateLimitedError
	if errors.As(err, &limited) {
		return &loop.Error{Code: loop.EINTERNAL, Err: &RateLimitError{RetryAfter: limited.RetryAfter},
			Message: "slack: " + what + ": rate limited; Slack asks to retry after " + limited.RetryAfter.String()}
	}
	msg := err.Error()
	if tok != "" {
		msg = strings.ReplaceAll(msg, tok, "[redacted]")
	}
	return loop.Internal("slack: %s: %s", what, msg)
}

// Post posts text as a new message in channel and returns its ts (the
// thread it starts).
func (c *Client) Post(ctx context.Context, channel, text string) (string, error) {
	if strings.TrimSpace(channel) == "" {
		return "", loop.Invalid("slack: no channel id configured — set channels.slack.channel (or the session's slack.channel) to a channel id (C…)")
	}
	tok, err := c.token()
	if err != nil {
		return "", err
	}
	_, ts, err := c.api(tok).PostMessageContext(ctx, channel, goslack.MsgOptionText(text, false))
	if err != nil {
		return "", failure("post failed", tok, err)
	}
	if ts == "" {
		return "", loop.Internal("slack: post failed: the channel returned no thread")
	}
	return ts, nil
}

// PostInThread posts text as a reply in channel's thread threadTS and
// returns its ts.
func (c *Client) PostInThread(ctx context.Context, channel, threadTS, text string) (string, error) {
	if strings.TrimSpace(channel) == "" {
		return "", loop.Invalid("slack: no channel id for thread %s — set channels.slack.channel (or the session's slack.channel) to a channel id (C…)", threadTS)
	}
	if strings.TrimSpace(threadTS) == "" {
		return "", loop.Invalid("slack: no thread to reply in")
	}
	tok, err := c.token()
	if err != nil {
		return "", err
	}
	_, ts, err := c.api(tok).PostMessageContext(ctx, channel, goslack.MsgOptionText(text, false), goslack.MsgOptionTS(threadTS))
	if err != nil {
		return "", failure("posting in thread "+threadTS+" failed", tok, err)
	}
	return ts, nil
}

// Reply is one message read from a thread.
type Reply struct {
	TS       string
	ThreadTS string
	User     string // the author's member id
	BotID    string // set when a bot (or an app) posted it
	Subtype  string
	// Text is what the author typed: Slack's escaping and its <…> tokens
	// undone (Unescape), so the pane and the ticket read the same.
	Text string
}

// Replies reads the replies in channel's thread threadTS that came after
// oldest (a Slack ts), through every page of conversations.replies, oldest
// first, their text unescaped. The thread's root, messages without a ts and any message at or
// before oldest are left out (compared numerically, whatever the server's
// idea of "oldest").
func (c *Client) Replies(ctx context.Context, channel, threadTS, oldest string) ([]Reply, error) {
	if strings.TrimSpace(channel) == "" {
		return nil, loop.Invalid("slack: no channel id for thread %s — set channels.slack.channel", threadTS)
	}
	tok, err := c.token()
	if err != nil {
		return nil, err
	}
	api := c.api(tok)
	var out []Reply
	cursor := ""
	seen := map[string]bool{}
	for page := 0; page < maxPages; page++ {
		msgs, more, next, err := api.GetConversationRepliesContext(ctx, &goslack.GetConversationRepliesParameters{
			ChannelID: channel, Timestamp: threadTS, Oldest: oldest, Cursor: cursor, Limit: pageLimit,
		})
		if err != nil {
			return nil, failure("reading thread "+threadTS+" failed", tok, err)
		}
		for _, m := range msgs {
			ts := m.Timestamp
			if ts == "" || ts == threadTS || seen[ts] || loop.CompareTS(ts, oldest) <= 0 {
				continue
			}
			seen[ts] = true
			out = append(out, Reply{TS: ts, ThreadTS: threadTS, User: m.User, BotID: m.BotID, Subtype: m.SubType, Text: Unescape(m.Text)})
		}
		if !more || next == "" || next == cursor {
			break
		}
		cursor = next
	}
	sort.SliceStable(out, func(i, j int) bool { return loop.CompareTS(out[i].TS, out[j].TS) < 0 })
	return out, nil
}

// AuthTest returns the bot's own member id (auth.test's user_id), asked
// once per token and cached.
func (c *Client) AuthTest(ctx context.Context) (string, error) {
	tok, err := c.token()
	if err != nil {
		return "", err
	}
	key := sha256.Sum256([]byte(tok))
	c.mu.Lock()
	if c.selfOK && c.selfFor == key {
		id := c.selfID
		c.mu.Unlock()
		return id, nil
	}
	c.mu.Unlock()
	resp, err := c.api(tok).AuthTestContext(ctx)
	if err != nil {
		return "", failure("auth.test failed", tok, err)
	}
	c.mu.Lock()
	c.selfFor, c.selfID, c.selfOK = key, resp.UserID, true
	c.mu.Unlock()
	return resp.UserID, nil
}
