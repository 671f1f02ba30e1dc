package http

import (
	"context"
	"net/http"

	loop "github.com/the-loop-dev/the-loop"
)

// PollChannels asks the service to run one inbound poll cycle now (POST
// /api/v1/channels/poll, decisions D22). A cycle that did nothing says why
// in Skipped.
func (c *Client) PollChannels(ctx context.Context) (loop.PollSummary, error) {
	var sum loop.PollSummary
	err := c.do(ctx, http.MethodPost, "/api/v1/channels/poll", nil, struct{}{}, &sum)
	return sum, err
}
