package lifecycle

import (
	"context"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

func slackStart(t *testing.T) loop.WorkItemStartRequest {
	req := startReq(t, octo)
	req.Slack = true
	return req
}

func TestStartWorkItem_SlackAnnouncesOnceAndBindsTheThreadToTheRef(t *testing.T) {
	s, _ := newItemService(t)
	ann := &fakeAnnouncer{}
	s.Announcer = ann
	cfg := slackConfig(t)
	ctx := context.Background()

	res := mustStart(t, s, cfg, slackStart(t), "started")
	if ann.count() != 1 {
		t.Fatalf("announcements %d", ann.count())
	}
	if a := ann.calls[0]; a.WorkItem != octo || a.Name != "" || a.Channel != "CCENTRAL" || a.Harness != "claude" || a.Target != octoTarget {
		t.Fatalf("announcement %+v", a)
	}
	if last := res.Messages[len(res.Messages)-1]; last.Stream != "out" || last.Text != "announced "+octo+" in Slack (channel CCENTRAL, thread 1700000000.000100)" {
		t.Fatalf("messages %+v", res.Messages)
	}
	th := threads(t, s)
	if len(th) != 1 || th[0].ThreadTS != "1700000000.000100" || th[0].Ref != octo || th[0].Channel != "CCENTRAL" {
		t.Fatalf("bindings %+v", th)
	}
	evs := events(t, s, store.EventQuery{})
	if got := eventNames(evs); !slices.Equal(got, []string{"session.started", "session.announced"}) {
		t.Fatalf("events %v", got)
	}
	if e := evs[1]; e.Field("work_item") != octo || e.Field("channel") != "CCENTRAL" || e.Field("thread") != "1700000000.000100" {
		t.Fatalf("session.announced %+v", e.Fields)
	}

	// Already running, then close and start again: the work item keeps its
	// one thread.
	mustStart(t, s, cfg, slackStart(t), "already-running")
	if _, err := s.CloseWorkItem(ctx, cfg, octo, nil); err != nil {
		t.Fatal(err)
	}
	res = mustStart(t, s, cfg, slackStart(t), "resumed")
	if ann.count() != 1 || len(threads(t, s)) != 1 {
		t.Fatalf("announcements %d bindings %+v", ann.count(), threads(t, s))
	}
	if last := res.Messages[len(res.Messages)-1]; !strings.Contains(last.Text, "is already bound to "+octo) {
		t.Fatalf("messages %+v", res.Messages)
	}
}

func TestStartWorkItem_WithoutSlackOrWithSlackDisabledPostsNothing(t *testing.T) {
	s, _ := newItemService(t)
	ann := &fakeAnnouncer{}
	s.Announcer = ann
	mustStart(t, s, slackConfig(t), startReq(t, octo), "started")
	cfg := testConfig(t) // channels.slack disabled
	res := mustStart(t, s, cfg, slackStart(t), "already-running")
	if ann.count() != 0 || len(threads(t, s)) != 0 {
		t.Fatalf("announcements %d", ann.count())
	}
	if last := res.Messages[len(res.Messages)-1]; last.Stream != "err" || !strings.Contains(last.Text, "Slack is disabled (channels.slack.enabled is false)") {
		t.Fatalf("messages %+v", res.Messages)
	}
}

func TestStartWorkItem_AnnounceFailureNeverStopsTheSession(t *testing.T) {
	s, w := newItemService(t)
	s.Announcer = &fakeAnnouncer{err: loop.Internal("slack: post failed: not_in_channel")}
	res := mustStart(t, s, slackConfig(t), slackStart(t), "started")
	if res.ExitCode != 0 || w.pane(octoTarget) != loop.PaneLive || len(threads(t, s)) != 0 {
		t.Fatalf("result %+v", res)
	}
	if last := res.Messages[len(res.Messages)-1]; last.Stream != "err" || last.Text != "warning: could not announce "+octo+" in Slack: slack: post failed: not_in_channel" {
		t.Fatalf("messages %+v", res.Messages)
	}
	evs := events(t, s, store.EventQuery{Types: []string{"session.announce_failed"}})
	if len(evs) != 1 || evs[0].Level != "warning" || evs[0].Field("work_item") != octo || evs[0].Field("error") != "slack: post failed: not_in_channel" {
		t.Fatalf("announce_failed %+v", evs)
	}
}

func TestStartWorkItem_AFailedStartIsNotAnnounced(t *testing.T) {
	s, _ := newItemService(t)
	ann := &fakeAnnouncer{}
	s.Announcer = ann
	req := slackStart(t)
	req.Cwd = "/no/such/dir/for/the-loop"
	mustStart(t, s, slackConfig(t), req, "failed")
	if ann.count() != 0 {
		t.Fatalf("announcements %d", ann.count())
	}
}
