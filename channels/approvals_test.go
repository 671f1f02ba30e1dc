package channels

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels/slack/fakeslack"
	"github.com/the-loop-dev/the-loop/hearing"
	"github.com/the-loop-dev/the-loop/store"
)

// decideCall is one Decide the fake approvals service was asked.
type decideCall struct {
	id string
	d  loop.ApprovalDecision
	by string
}

// fakeApprovals is an approvals service over a list: Decide settles a
// pending approval of the list as the hearing room does (unknown: not
// found; settled or another session's: conflict), or fails with err.
type fakeApprovals struct {
	mu      sync.Mutex
	list    []loop.Approval
	err     error // Decide's, when set
	listed  int   // how many times Approvals was called
	decided []decideCall
}

func (f *fakeApprovals) Approvals(_ context.Context, session string) ([]loop.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listed++
	var out []loop.Approval
	for _, a := range f.list {
		if session == "" || a.Session == session {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeApprovals) Decide(_ context.Context, id string, d loop.ApprovalDecision, by string) (loop.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decided = append(f.decided, decideCall{id: id, d: d, by: by})
	if f.err != nil {
		return loop.Approval{}, f.err
	}
	i := slices.IndexFunc(f.list, func(a loop.Approval) bool { return a.ID == id })
	switch {
	case i < 0:
		return loop.Approval{}, loop.NotFound("no approval %q is recorded: `the-loop standing approvals` lists them", id)
	case d.Session != "" && f.list[i].Session != d.Session:
		return loop.Approval{}, loop.Conflict("approval %s is standing session %s's, not %s's", id, f.list[i].Session, d.Session)
	case f.list[i].Status != loop.ApprovalPending:
		return loop.Approval{}, loop.Conflict("approval %s is %s already", id, f.list[i].Status)
	}
	f.list[i].Status, f.list[i].By, f.list[i].Message = map[string]string{loop.DecisionAllow: loop.ApprovalAllowed, loop.DecisionDeny: loop.ApprovalDenied}[d.Decision], by, d.Message
	return f.list[i], nil
}

func (f *fakeApprovals) calls() []decideCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.decided)
}

// pendingBash is a pending approval of session to run command in Bash.
func pendingBash(id, session, command string) loop.Approval {
	in, _ := json.Marshal(map[string]string{"command": command})
	return loop.Approval{ID: id, Session: session, Tool: "Bash", Input: in, Status: loop.ApprovalPending}
}

// approvalWorld is the world with supervisor started and the fake
// approvals service holding list; thread is supervisor's thread.
func approvalWorld(t *testing.T, list ...loop.Approval) (w *world, f *fakeApprovals, thread string) {
	w = newWorld(t)
	thread = w.start("supervisor").SlackThread
	f = &fakeApprovals{list: list}
	w.poller.Approvals = f
	return w, f, thread
}

// threadPosts are the bot's posts in thread.
func (w *world) threadPosts(thread string) []string {
	var out []string
	for _, m := range w.ws.Posts() {
		if m.ThreadTS == thread {
			out = append(out, m.Text)
		}
	}
	return out
}

// toldOnce fails unless thread holds exactly one post of the bot and it
// holds every one of wants; it returns the post.
func (w *world) toldOnce(thread string, wants ...string) string {
	w.t.Helper()
	posts := w.threadPosts(thread)
	if len(posts) != 1 {
		w.t.Fatalf("%d posts in the thread, want 1: %q", len(posts), posts)
	}
	for _, s := range wants {
		if !strings.Contains(posts[0], s) {
			w.t.Fatalf("the thread was told %q; want it to hold %q", posts[0], s)
		}
	}
	return posts[0]
}

// A member's approve decides the session's one pending approval as
// slack:<member>; nothing reaches the pane, the thread is told, and the
// notice read back only moves the cursor (nothing is decided twice).
func TestApprovals_AMembersApproveDecides(t *testing.T) {
	w, f, thread := approvalWorld(t, pendingBash("1a2b3c4d", "supervisor", "ls -la"), pendingBash("99999999", "helper", "pwd"))
	w.ws.Reply("COWN", thread, "UOPS", "  Approve \n")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	wantCalls := []decideCall{{id: "1a2b3c4d", d: loop.ApprovalDecision{Decision: loop.DecisionAllow, Session: "supervisor"}, by: "slack:UOPS"}}
	if got := f.calls(); !slices.Equal(got, wantCalls) {
		t.Fatalf("decided %+v, want %+v", got, wantCalls)
	}
	if got := w.runner.Messages(); len(got) != 0 {
		t.Fatalf("pasted %q: a decision is never pasted", got)
	}
	w.toldOnce(thread, "`1a2b3c4d`", "allowed by slack:UOPS")
	if got := names(w.events("channel.*", "standing.said")); !slices.Equal(got, []string{"channel.reply_received", "channel.mirror_skipped"}) {
		t.Fatalf("events %v", got)
	}
	want(t, w.poll(), loop.PollSummary{})
	if n := len(f.calls()); n != 1 {
		t.Fatalf("%d decisions, want 1", n)
	}
}

// approve ID names the approval, case-insensitively, among several.
func TestApprovals_ApproveIDDecidesThatOne(t *testing.T) {
	w, f, thread := approvalWorld(t, pendingBash("1a2b3c4d", "supervisor", "ls"), pendingBash("5e6f7a8b", "supervisor", "pwd"))
	w.ws.Reply("COWN", thread, "UOPS", "APPROVE 5E6F7A8B")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	if got := f.calls(); len(got) != 1 || got[0].id != "5e6f7a8b" || got[0].d.Decision != loop.DecisionAllow || got[0].by != "slack:UOPS" {
		t.Fatalf("decided %+v", got)
	}
	w.toldOnce(thread, "`5e6f7a8b`", "allowed")
}

// deny's reason reaches the decision as the member wrote it, with or
// without an id; a first word of an id's shape that names no recorded
// approval is the reason's.
func TestApprovals_DenyWithAReasonPassesTheMessage(t *testing.T) {
	for _, c := range []struct{ reply, id, message string }{
		{"DENY 1a2b3c4d Not on prod,\nplease", "1a2b3c4d", "Not on prod,\nplease"},
		{"deny use the Staging box", "1a2b3c4d", "use the Staging box"},
		{"deny deadbeef is not a command to run", "1a2b3c4d", "deadbeef is not a command to run"},
		{"Deny", "1a2b3c4d", ""},
	} {
		t.Run(c.reply, func(t *testing.T) {
			w, f, thread := approvalWorld(t, pendingBash("1a2b3c4d", "supervisor", "rm -rf build"))
			w.ws.Reply("COWN", thread, "UOPS", c.reply)
			want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
			wantCalls := []decideCall{{id: c.id, d: loop.ApprovalDecision{Decision: loop.DecisionDeny, Message: c.message, Session: "supervisor"}, by: "slack:UOPS"}}
			if got := f.calls(); !slices.Equal(got, wantCalls) {
				t.Fatalf("decided %+v, want %+v", got, wantCalls)
			}
			if got := w.runner.Messages(); len(got) != 0 {
				t.Fatalf("pasted %q", got)
			}
			w.toldOnce(thread, "denied by slack:UOPS")
		})
	}
}

// A non-member's approve is dropped unauthorized like any of their
// replies: nothing is listed, decided, pasted or posted.
func TestApprovals_ANonMembersApproveChangesNothing(t *testing.T) {
	w, f, thread := approvalWorld(t, pendingBash("1a2b3c4d", "supervisor", "ls"))
	w.ws.Reply("COWN", thread, "UEVIL", "approve")
	w.ws.Reply("COWN", thread, "UEVIL", "approve 1a2b3c4d")
	want(t, w.poll(), loop.PollSummary{Replies: 2, Dropped: 2})
	f.mu.Lock()
	listed, decided, status := f.listed, len(f.decided), f.list[0].Status
	f.mu.Unlock()
	if listed != 0 || decided != 0 || status != loop.ApprovalPending {
		t.Fatalf("listed %d, decided %d, status %s: a non-member changes nothing", listed, decided, status)
	}
	if posts := w.threadPosts(thread); len(posts) != 0 || len(w.runner.Messages()) != 0 {
		t.Fatalf("posted %q, pasted %q", posts, w.runner.Messages())
	}
	evs := w.events("channel.*")
	if len(evs) != 2 || evs[0].Field("reason") != ReasonUnauthorized || evs[0].Field("actor") != "UEVIL" {
		t.Fatalf("events %+v", evs)
	}
}

// With nothing pending the thread is told so; the reply is not pasted.
func TestApprovals_NothingPendingTellsTheThread(t *testing.T) {
	settled := pendingBash("1a2b3c4d", "supervisor", "ls")
	settled.Status = loop.ApprovalAllowed
	w, f, thread := approvalWorld(t, settled, pendingBash("5e6f7a8b", "helper", "ls"))
	w.ws.Reply("COWN", thread, "UOPS", "approve")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	if got := f.calls(); len(got) != 0 {
		t.Fatalf("decided %+v", got)
	}
	if got := w.runner.Messages(); len(got) != 0 {
		t.Fatalf("pasted %q", got)
	}
	w.toldOnce(thread, "nothing is pending", "`supervisor`")
}

// Several pending and no id: the thread is told their ids; nothing is
// decided.
func TestApprovals_SeveralPendingWithoutAnIDListTheirIDs(t *testing.T) {
	w, f, thread := approvalWorld(t, pendingBash("1a2b3c4d", "supervisor", "ls"), pendingBash("5e6f7a8b", "supervisor", "pwd"))
	w.ws.Reply("COWN", thread, "UOPS", "deny not now")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	if got := f.calls(); len(got) != 0 {
		t.Fatalf("decided %+v", got)
	}
	w.toldOnce(thread, "2 pending approvals", "`1a2b3c4d`", "`5e6f7a8b`", "approve ID")
}

// An input longer than Slack shows cannot be decided from Slack: the
// thread is told to use the CLI; an input cut at MaxApprovalInput neither.
func TestApprovals_ATooLongInputIsRefused(t *testing.T) {
	cut := pendingBash("5e6f7a8b", "supervisor", "ls")
	cut.InputTruncated = true
	for _, a := range []loop.Approval{pendingBash("1a2b3c4d", "supervisor", strings.Repeat("x", maxDecidableText+1)), cut} {
		t.Run(a.ID, func(t *testing.T) {
			w, f, thread := approvalWorld(t, a)
			w.ws.Reply("COWN", thread, "UOPS", "approve "+a.ID)
			want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
			if got := f.calls(); len(got) != 0 {
				t.Fatalf("decided %+v", got)
			}
			w.toldOnce(thread, "`"+a.ID+"`", "longer than the 3000 characters", "the-loop standing approve supervisor "+a.ID)
		})
	}
}

// The service's refusal (settled already, another session's) is told in
// the thread.
func TestApprovals_ARefusalIsToldInTheThread(t *testing.T) {
	settled := pendingBash("1a2b3c4d", "supervisor", "ls")
	settled.Status = loop.ApprovalDenied
	w, f, thread := approvalWorld(t, settled, pendingBash("5e6f7a8b", "helper", "ls"))
	w.ws.Reply("COWN", thread, "UOPS", "approve 1a2b3c4d")
	w.ws.Reply("COWN", thread, "UOPS", "deny 5e6f7a8b wrong thread")
	want(t, w.poll(), loop.PollSummary{Replies: 2, Processed: 2})
	if got := f.calls(); len(got) != 2 || got[1].id != "5e6f7a8b" || got[1].d.Session != "supervisor" || got[1].d.Message != "wrong thread" {
		t.Fatalf("decided %+v", got)
	}
	posts := w.threadPosts(thread)
	if len(posts) != 2 || !strings.Contains(posts[0], "denied already") || !strings.Contains(posts[1], "standing session helper's, not supervisor's") {
		t.Fatalf("told %q", posts)
	}
	if got := w.runner.Messages(); len(got) != 0 {
		t.Fatalf("pasted %q", got)
	}
}

// A decision does not wait behind the replies its thread keeps for the
// session (a dialog is what keeps them waiting).
func TestApprovals_ADecisionIsNotKeptBehindWaitingReplies(t *testing.T) {
	w, f, thread := approvalWorld(t, pendingBash("1a2b3c4d", "supervisor", "ls"))
	w.stop("supervisor")
	w.ws.Reply("COWN", thread, "UOPS", "are you there?")
	w.ws.Reply("COWN", thread, "UOPS", "approve")
	want(t, w.poll(), loop.PollSummary{Replies: 2, Processed: 2})
	if got := f.calls(); len(got) != 1 || got[0].id != "1a2b3c4d" {
		t.Fatalf("decided %+v", got)
	}
	if kept := w.kept(); len(kept) != 1 || kept[0].Text != "are you there?" {
		t.Fatalf("kept %+v", kept)
	}
}

// A reply that only starts like a decision is an ordinary reply.
func TestApprovals_AReplyThatIsNotAWholeDecisionIsPasted(t *testing.T) {
	w, f, thread := approvalWorld(t, pendingBash("1a2b3c4d", "supervisor", "ls"))
	w.ws.Reply("COWN", thread, "UOPS", "approve it, please")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1, Delivered: 1})
	if got := f.calls(); len(got) != 0 {
		t.Fatalf("decided %+v", got)
	}
	if got := w.runner.Messages(); !slices.Equal(got, []string{framed("slack:UOPS", "approve it, please")}) {
		t.Fatalf("pasted %q", got)
	}
}

// Without an approvals service a decision is still not pasted: the thread
// is told where to decide.
func TestApprovals_WithoutAnApprovalsServiceTheThreadIsTold(t *testing.T) {
	w, _, thread := approvalWorld(t)
	w.poller.Approvals = nil
	w.ws.Reply("COWN", thread, "UOPS", "approve")
	want(t, w.poll(), loop.PollSummary{Replies: 1, Processed: 1})
	if got := w.runner.Messages(); len(got) != 0 {
		t.Fatalf("pasted %q", got)
	}
	w.toldOnce(thread, "was not decided", "the-loop standing approve supervisor")
}

func TestParseDecision_ReadsOnlyAWholeReply(t *testing.T) {
	for _, c := range []struct {
		text string
		ok   bool
		d    slackDecision
	}{
		{"approve", true, slackDecision{decision: loop.DecisionAllow}},
		{" Approve\t0A1B2C3D ", true, slackDecision{decision: loop.DecisionAllow, id: "0a1b2c3d"}},
		{"approve 0a1b2c3", false, slackDecision{}},
		{"approve 0a1b2c3d now", false, slackDecision{}},
		{"approved", false, slackDecision{}},
		{"please approve", false, slackDecision{}},
		{"deny", true, slackDecision{decision: loop.DecisionDeny}},
		{"deny 0a1b2c3d", true, slackDecision{decision: loop.DecisionDeny, id: "0a1b2c3d", whole: "0a1b2c3d"}},
		{"deny 0a1b2c3d too  wide", true, slackDecision{decision: loop.DecisionDeny, id: "0a1b2c3d", message: "too  wide", whole: "0a1b2c3d too  wide"}},
		{"denying it", false, slackDecision{}},
		{"deny: no", false, slackDecision{}},
	} {
		d, ok := parseDecision(c.text)
		if ok != c.ok || d != c.d {
			t.Errorf("parseDecision(%q) = %+v, %v; want %+v, %v", c.text, d, ok, c.d, c.ok)
		}
	}
}

// decidable agrees with the hearing room's attention post: what the post
// says cannot be decided from Slack is what the poller refuses.
func TestDecidable_AgreesWithTheApprovalPost(t *testing.T) {
	if maxDecidableText != hearing.MaxDecidableText {
		t.Fatalf("maxDecidableText %d, hearing.MaxDecidableText %d", maxDecidableText, hearing.MaxDecidableText)
	}
	jsonOf := func(n int) json.RawMessage {
		in, _ := json.Marshal(map[string]string{"file_path": strings.Repeat("é", n)})
		return in
	}
	cut := pendingBash("1a2b3c4d", "s", "ls")
	cut.InputTruncated = true
	for _, a := range []loop.Approval{
		pendingBash("1a2b3c4d", "s", strings.Repeat("x", maxDecidableText)),
		pendingBash("1a2b3c4d", "s", strings.Repeat("x", maxDecidableText+1)),
		{ID: "1a2b3c4d", Session: "s", Tool: "Write", Input: jsonOf(1490)},
		{ID: "1a2b3c4d", Session: "s", Tool: "Write", Input: jsonOf(1495)},
		cut,
	} {
		undecidable := strings.Contains(hearing.ApprovalPostText(&a), "decide it with `the-loop standing approvals")
		if decidable(&a) == undecidable {
			t.Errorf("%s input of %d bytes (cut %v): decidable %v, but the post says undecidable %v", a.Tool, len(a.Input), a.InputTruncated, decidable(&a), undecidable)
		}
	}
}

// An approval's attention post says how to answer it in the thread (its
// own text), not the attach that answers other notes.
func TestPoll_AnApprovalsAttentionPostSaysToReplyInTheThread(t *testing.T) {
	w, _, thread := approvalWorld(t)
	a := pendingBash("1a2b3c4d", "supervisor", "make <all> && ls")
	if err := w.svc.DB.Update(func(tx *store.Tx) error {
		rec, err := tx.Standing("supervisor")
		if err != nil {
			return err
		}
		rec.Outbox = append(rec.Outbox, loop.OutgoingPost{Kind: loop.PostAttention, Approval: a.ID, Text: hearing.ApprovalPostText(&a), At: "2026-01-02T03:04:05Z"},
			loop.OutgoingPost{Kind: loop.PostAttention, Text: "Claude needs your permission to use Bash", At: "2026-01-02T03:04:05Z"})
		return tx.PutStanding(rec)
	}); err != nil {
		t.Fatal(err)
	}
	want(t, w.poll(), loop.PollSummary{})
	posts := w.threadPosts(thread)
	if len(posts) != 2 {
		t.Fatalf("posts %q", posts)
	}
	wantPost := ":warning: standing session `supervisor` needs attention: The agent asks to use Bash (approval 1a2b3c4d):\n```\nmake &lt;all&gt; &amp;&amp; ls\n```\n" +
		"Reply `approve 1a2b3c4d` or `deny 1a2b3c4d &lt;reason&gt;` in this thread."
	if posts[0] != wantPost {
		t.Fatalf("approval post %q\nwant %q", posts[0], wantPost)
	}
	if !strings.HasSuffix(posts[1], "— answer it with `the-loop standing attach supervisor --write`") {
		t.Fatalf("other note %q", posts[1])
	}
	w.ws.Add(fakeslack.Message{Channel: "COWN", ThreadTS: thread, User: fakeslack.BotUserID, Text: "unrelated"})
	want(t, w.poll(), loop.PollSummary{Replies: 1, Dropped: 1}) // the posts themselves are read back as notices
}
