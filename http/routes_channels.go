package http

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// Poller runs one inbound poll cycle (the Slack channel's bound threads).
type Poller interface {
	Poll(ctx context.Context, cfg *config.Config) (loop.PollSummary, error)
}

// channelRoutes are the channel operations (decisions D4, D22).
func (s *Server) channelRoutes(v1 string) []route {
	return []route{
		{Route{http.MethodPost, v1 + "/channels/poll", "pollChannels"}, s.pollChannels},
	}
}

// pollChannels answers POST /api/v1/channels/poll: one cycle, now.
func (s *Server) pollChannels(c echo.Context) error {
	if s.opt.Poller == nil {
		return writeJSON(c, http.StatusOK, loop.PollSummary{Skipped: "channels are not hosted by this service"})
	}
	sum, err := s.opt.Poller.Poll(verbContext(c), configOf(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, sum)
}
