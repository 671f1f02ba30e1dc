package main

import (
	"fmt"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// Through the service, a pending approval's attention post in the
// session's thread shows the command and says how to answer; a
// non-member's `approve` changes nothing, the member's decides — the
// waiting hook prints the allow, recorded by slack:<member> — and neither
// reply reaches the pane.
func TestSlack_AMembersApproveDecidesThroughTheService(t *testing.T) {
	s := newSlackEnv(t)
	port := freePort(t)
	s.slackConfig(fmt.Sprintf("{host: 127.0.0.1, port: %d}", port), 3600)
	s.serve(port)
	s.must(0, "standing", "start", "supervisor")
	s.waitReady("supervisor")
	thread := s.ws.Posts()[0].TS
	waitActivity(t, s.env, "the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	id := s.rows()["supervisor"].HarnessSessionID
	answer := awaitHook(t, s.env, id, "make deploy")
	var pending []loop.Approval
	waitFor(t, "the approval to be pending", func() bool { pending = pendingApprovals(t, s.env); return len(pending) == 1 })

	s.poll() // posts the attention note
	posts := threadPosts(s, thread)
	if len(posts) != 1 || !strings.Contains(posts[0].Text, "make deploy") || !strings.Contains(posts[0].Text, "Reply `approve "+pending[0].ID) {
		t.Fatalf("the thread's posts %+v, want the approval's attention post", posts)
	}
	s.ws.Reply("COWN", thread, "USTRANGER", "approve")
	s.poll()
	if got := pendingApprovals(t, s.env); len(got) != 1 || got[0].ID != pending[0].ID {
		t.Fatalf("after a non-member's approve the pending approvals are %+v", got)
	}
	s.ws.Reply("COWN", thread, "UOPS", "  Approve ")
	s.poll()
	if out := <-answer; !strings.Contains(out, `"behavior":"allow"`) {
		t.Fatalf("the hook printed %q, want the allow", out)
	}
	all := s.must(0, "standing", "approvals", "--all", "--format", "json").stdout
	if !strings.Contains(all, `"by": "slack:UOPS"`) && !strings.Contains(all, `"by":"slack:UOPS"`) {
		t.Errorf("the approval is not recorded by slack:UOPS:\n%s", all)
	}
	if got := s.agent.Messages(); len(got) != 0 {
		t.Errorf("the pane got %q; a decision is never pasted", got)
	}
}
