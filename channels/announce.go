package channels

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels/slack"
	"github.com/the-loop-dev/the-loop/config"
)

// Announcer posts sessions' announcements (standing and work-item) through
// the Slack bot (lifecycle.Announcer). Its zero value is ready to use: the
// client is built from the config of each call, so the token and apiUrl in
// force are the ones used.
type Announcer struct{}

// Announce posts the announcement (original §9.2: type standing.started on
// standing:<name>; for a work item's session, original §9.1: session.started on its
// ref — rendered at channels.slack.verbosity) as a new message in a.Channel
// and returns its ts, the session's thread.
func (Announcer) Announce(ctx context.Context, cfg *config.Config, a loop.Announcement) (string, error) {
	ev := slack.StandingAnnouncement(a.Name, a.Harness, a.Target)
	if a.WorkItem != "" {
		url := ""
		if ref, err := loop.ParseWorkItemRef(a.WorkItem); err == nil {
			url = ref.URL()
		}
		ev = slack.WorkItemAnnouncement(a.WorkItem, a.Harness, a.Target, url)
	}
	return slack.New(cfg.Slack).Post(ctx, a.Channel, slack.Render(ev, cfg.Slack.Verbosity))
}
