// Package fakeslack is a Slack workspace for tests: slack-go's slacktest
// server, extended through its binder hook with chat.postMessage,
// conversations.replies (paginated) and auth.test backed by an in-memory
// workspace. Every message gets a real, unique Slack timestamp
// ("1700000000.000100", …), unlike slacktest's own postMessage whose
// whole-second ts collides. It lives under channels/slack, the only room
// that imports slack-go; tests anywhere point channels.slack.apiUrl at URL().
package fakeslack

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	goslack "github.com/slack-go/slack"
	"github.com/slack-go/slack/slacktest"
)

// Identities of the workspace's bot.
const (
	BotUserID = "UBOT0THELOOP"
	BotID     = "BTHELOOP"
)

// Message is one message of the workspace.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // "" for a top-level message
	User     string
	BotID    string
	Subtype  string
	Text     string
}

// Workspace is the in-memory workspace and the server in front of it.
type Workspace struct {
	token string
	srv   *slacktest.Server

	mu       sync.Mutex
	seq      int
	messages []Message
	calls    map[string]int
	pageSize int
	failPost string
	// limited is how many conversations.replies calls still answer 429,
	// with Retry-After retryAfter seconds.
	limited    int
	retryAfter int
	// onReplies runs (outside the lock) before conversations.replies answers.
	onReplies func(channel, thread string)
}

// New starts a workspace that accepts token (every call with another token
// fails invalid_auth) and stops it when the test ends.
func New(t testing.TB, token string) *Workspace {
	t.Helper()
	w := &Workspace{token: token, calls: map[string]int{}, pageSize: 100}
	w.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/chat.postMessage", w.postMessage)
		c.Handle("/conversations.replies", w.replies)
		c.Handle("/auth.test", w.authTest)
	})
	w.srv.Start()
	t.Cleanup(w.srv.Stop)
	return w
}

// URL is the Web API base URL (ends with "/"): channels.slack.apiUrl.
func (w *Workspace) URL() string { return w.srv.GetAPIURL() }

// SetPageSize sets how many messages one conversations.replies page holds
// at most (default 100).
func (w *Workspace) SetPageSize(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pageSize = n
}

// FailPosts makes every chat.postMessage answer {"ok": false, "error":
// code}; "" restores posting.
func (w *Workspace) FailPosts(code string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failPost = code
}

// RateLimitReplies makes the next n conversations.replies calls answer
// HTTP 429 with Retry-After: seconds, as Slack does when a method's tier is
// exhausted.
func (w *Workspace) RateLimitReplies(n, seconds int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.limited, w.retryAfter = n, seconds
}

// OnReplies runs fn before each conversations.replies answer (e.g. to
// change the-loop's state between its read and its processing).
func (w *Workspace) OnReplies(fn func(channel, thread string)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onReplies = fn
}

// nextTS is the next unique timestamp: 1700000000.000100, .000200, …
func (w *Workspace) nextTS() string {
	w.seq++
	micros := int64(w.seq) * 100
	return fmt.Sprintf("%d.%06d", 1700000000+micros/1_000_000, micros%1_000_000)
}

// add stores m with a fresh ts and returns it.
func (w *Workspace) add(m Message) Message {
	w.mu.Lock()
	defer w.mu.Unlock()
	m.TS = w.nextTS()
	w.messages = append(w.messages, m)
	return m
}

// Reply adds a member's reply in a thread and returns its ts.
func (w *Workspace) Reply(channel, thread, user, text string) string {
	return w.add(Message{Channel: channel, ThreadTS: thread, User: user, Text: text}).TS
}

// Add adds any message (a bot's, one with a subtype…) and returns its ts.
func (w *Workspace) Add(m Message) string { return w.add(m).TS }

// Posts returns what the bot posted through chat.postMessage, oldest first.
func (w *Workspace) Posts() []Message {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Message
	for _, m := range w.messages {
		if m.BotID == BotID && m.User == BotUserID {
			out = append(out, m)
		}
	}
	return out
}

// Calls is how many times method (e.g. "auth.test") was called.
func (w *Workspace) Calls(method string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[method]
}

// TotalCalls is how many Web API calls the workspace answered.
func (w *Workspace) TotalCalls() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.calls {
		n += c
	}
	return n
}

// authorized counts the call and checks its token (form field or bearer).
func (w *Workspace) authorized(method string, r *http.Request) bool {
	_ = r.ParseForm()
	w.mu.Lock()
	w.calls[method]++
	w.mu.Unlock()
	tok := r.FormValue("token")
	if tok == "" {
		tok = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	return tok == w.token
}

func answer(rw http.ResponseWriter, v any) {
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(v)
}

func fail(rw http.ResponseWriter, code string) {
	answer(rw, map[string]any{"ok": false, "error": code})
}

func (w *Workspace) authTest(rw http.ResponseWriter, r *http.Request) {
	if !w.authorized("auth.test", r) {
		fail(rw, "invalid_auth")
		return
	}
	answer(rw, map[string]any{"ok": true, "url": "https://fake.slack.test/", "team": "fake", "team_id": "T0FAKE",
		"user": "the-loop", "user_id": BotUserID, "bot_id": BotID})
}

func (w *Workspace) postMessage(rw http.ResponseWriter, r *http.Request) {
	if !w.authorized("chat.postMessage", r) {
		fail(rw, "invalid_auth")
		return
	}
	w.mu.Lock()
	code := w.failPost
	w.mu.Unlock()
	if code != "" {
		fail(rw, code)
		return
	}
	channel := r.FormValue("channel")
	if channel == "" {
		fail(rw, "channel_not_found")
		return
	}
	m := w.add(Message{Channel: channel, ThreadTS: r.FormValue("thread_ts"), User: BotUserID, BotID: BotID, Text: r.FormValue("text")})
	answer(rw, map[string]any{"ok": true, "channel": channel, "ts": m.TS, "message": wire(m)})
}

// wire is m as the Web API shows it.
func wire(m Message) goslack.Message {
	var out goslack.Message
	out.Type = "message"
	out.Timestamp, out.ThreadTimestamp = m.TS, m.ThreadTS
	out.User, out.BotID, out.SubType, out.Text = m.User, m.BotID, m.Subtype, m.Text
	return out
}

// replies answers conversations.replies: the root first, then the replies
// after oldest (exclusive unless inclusive=1), page by page.
func (w *Workspace) replies(rw http.ResponseWriter, r *http.Request) {
	if !w.authorized("conversations.replies", r) {
		fail(rw, "invalid_auth")
		return
	}
	w.mu.Lock()
	hook := w.onReplies
	limited := w.limited > 0
	if limited {
		w.limited--
	}
	retry := w.retryAfter
	w.mu.Unlock()
	if limited {
		rw.Header().Set("Retry-After", strconv.Itoa(retry))
		rw.WriteHeader(http.StatusTooManyRequests)
		return
	}
	channel, thread := r.FormValue("channel"), r.FormValue("ts")
	if hook != nil {
		hook(channel, thread)
	}
	oldest, inclusive := r.FormValue("oldest"), r.FormValue("inclusive") == "1"
	w.mu.Lock()
	var all []Message
	found := false
	for _, m := range w.messages {
		if m.Channel != channel {
			continue
		}
		if m.TS == thread && m.ThreadTS == "" {
			found = true
			all = append([]Message{m}, all...)
			continue
		}
		if m.ThreadTS != thread {
			continue
		}
		if oldest != "" {
			c := compare(m.TS, oldest)
			if c < 0 || (c == 0 && !inclusive) {
				continue
			}
		}
		all = append(all, m)
	}
	size := w.pageSize
	w.mu.Unlock()
	if !found {
		fail(rw, "thread_not_found")
		return
	}
	if limit, err := strconv.Atoi(r.FormValue("limit")); err == nil && limit > 0 && limit < size {
		size = limit
	}
	start := 0
	if c := r.FormValue("cursor"); c != "" {
		raw, err := base64.StdEncoding.DecodeString(c)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(raw), "next:"))
		if err != nil || err2 != nil || n < 0 || n > len(all) {
			fail(rw, "invalid_cursor")
			return
		}
		start = n
	}
	end := min(start+size, len(all))
	page := make([]goslack.Message, 0, end-start)
	for _, m := range all[start:end] {
		page = append(page, wire(m))
	}
	resp := map[string]any{"ok": true, "messages": page, "has_more": end < len(all)}
	if end < len(all) {
		resp["response_metadata"] = map[string]any{"next_cursor": base64.StdEncoding.EncodeToString([]byte("next:" + strconv.Itoa(end)))}
	}
	answer(rw, resp)
}

// compare orders Slack timestamps numerically.
func compare(a, b string) int {
	am, bm := micros(a), micros(b)
	switch {
	case am < bm:
		return -1
	case am > bm:
		return 1
	}
	return 0
}

// micros is a Slack ts ("1700000000.000100") in microseconds.
func micros(ts string) int64 {
	sec, frac, _ := strings.Cut(ts, ".")
	s, _ := strconv.ParseInt(sec, 10, 64)
	frac = (frac + "000000")[:6]
	f, _ := strconv.ParseInt(frac, 10, 64)
	return s*1_000_000 + f
}
