package sdk

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	loop "github.com/the-loop-dev/the-loop"
)

type (
	// Transcript is a standing session's conversation: its name and its
	// Entries, oldest first.
	Transcript = loop.TranscriptResult
	// TranscriptEntry is one prompt or one answer of an agent's
	// conversation: Role "user" or "assistant", Text, At, and an answer's
	// token Usage when the transcript has it.
	TranscriptEntry = loop.TranscriptEntry
	// TokenUsage counts an answer's tokens.
	TokenUsage = loop.TokenUsage
	// Peek is the last lines of a session's agent pane, and where it runs.
	Peek = loop.PeekResult
)

// Transcript returns the last `last` prompts and answers (0: the service's
// default, 20; at most 1000) of a standing session's conversation, oldest
// first — what it was told and what it answered (GET
// /api/v1/standing-sessions/transcript). A session not started yet, or
// whose transcript file is missing, has none (Entries []). ErrNotFound for
// an unknown name, ErrInvalid for a harness whose transcript the-loop
// cannot read.
func (s *Standing) Transcript(ctx context.Context, name string, last int) (Transcript, error) {
	res := loop.TranscriptResult{Entries: []loop.TranscriptEntry{}}
	err := s.c.do(ctx, http.MethodGet, "/api/v1/standing-sessions/transcript", countQuery(name, "last", last), nil, &res)
	return res, err
}

// Peek returns the last `lines` lines (0: the service's default, 40; at
// most 2000) of a standing session's agent pane: what its terminal shows,
// a permission dialog included, and where it runs (GET
// /api/v1/standing-sessions/peek). ErrNotFound when it has no pane of
// the-loop's.
func (s *Standing) Peek(ctx context.Context, name string, lines int) (Peek, error) {
	var res loop.PeekResult
	err := s.c.do(ctx, http.MethodGet, "/api/v1/standing-sessions/peek", countQuery(name, "lines", lines), nil, &res)
	return res, err
}

// countQuery is name=…, with key=n when n is set.
func countQuery(name, key string, n int) url.Values {
	q := url.Values{"name": {name}}
	if n != 0 {
		q.Set(key, strconv.Itoa(n))
	}
	return q
}
