package channels

import (
	"context"

	"github.com/the-loop-dev/the-loop/channels/slack"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle"
)

// Announcer posts standing sessions' announcements through the Slack bot
// (lifecycle.Announcer). Its zero value is ready to use: the client is
// built from the config of each call, so the token and apiUrl in force are
// the ones used.
type Announcer struct{}

// Announce posts the announcement (original §9.2: type standing.started on
// standing:<name>, rendered at channels.slack.verbosity) as a new message in
// a.Channel and returns its ts, the session's thread.
func (Announcer) Announce(ctx context.Context, cfg *config.Config, a lifecycle.Announcement) (string, error) {
	text := slack.Render(slack.StandingAnnouncement(a.Name, a.Harness, a.Target), cfg.Slack.Verbosity)
	return slack.New(cfg.Slack).Post(ctx, a.Channel, text)
}
