package http

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// The read side of an agent: its transcript and its pane. Both are GETs,
// so neither is written to the event log.

// transcriptStanding answers GET /standing-sessions/transcript?name=&last=:
// {"name", "entries"} — the conversation's last `last` (default 20) user and
// assistant entries, oldest first; [] when there are none (yet).
func (s *Server) transcriptStanding(c echo.Context) error {
	name, n, err := nameAndCount(c, "last")
	if err != nil {
		return err
	}
	res, err := s.opt.Standing.Transcript(c.Request().Context(), name, n)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, res)
}

// peekStanding answers GET /standing-sessions/peek?name=&lines=: the agent
// pane's last `lines` (default 40) lines, exactly as tmux renders them.
func (s *Server) peekStanding(c echo.Context) error {
	name, n, err := nameAndCount(c, "lines")
	if err != nil {
		return err
	}
	res, err := s.opt.Standing.Peek(c.Request().Context(), name, n)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, res)
}

// nameAndCount reads the required name and the optional count parameter
// (0 when absent: the verb's default). A missing name or a count that is
// not a positive integer is unprocessable (422).
func nameAndCount(c echo.Context, count string) (string, int, error) {
	q := c.QueryParams()
	names, ok := q["name"]
	if !ok || len(names) == 0 {
		return "", 0, unprocessable("query.name: field required")
	}
	n := 0
	if v, ok := q[count]; ok && len(v) > 0 {
		i, err := strconv.Atoi(v[0])
		if err != nil || i < 1 {
			return "", 0, unprocessable("query.%s: expected a positive integer, got '%s'", count, v[0])
		}
		n = i
	}
	return names[0], n, nil
}
