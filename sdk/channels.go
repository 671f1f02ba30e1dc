package sdk

import (
	"context"
	"net/http"

	loop "github.com/the-loop-dev/the-loop"
)

// Channels is the channel namespace of a Client (client.Channels.Poll).
// What the service sees of Slack (whether it has the bot token) is in
// Client.Status's service row.
type Channels struct {
	c *conn
}

// Poll asks the service to run one inbound poll cycle now (POST
// /api/v1/channels/poll, decisions D22). A cycle that did nothing says why
// in Skipped.
func (ch *Channels) Poll(ctx context.Context) (loop.PollSummary, error) {
	var sum loop.PollSummary
	err := ch.c.do(ctx, http.MethodPost, "/api/v1/channels/poll", nil, struct{}{}, &sum)
	return sum, err
}
