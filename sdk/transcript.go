package sdk

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
)

type (
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
// first — what it was told and what it answered. A session not started
// yet, or whose transcript file is missing, has none. ErrNotFound for an
// unknown name, ErrInvalid for a harness whose transcript the-loop cannot
// read.
func (s *Standing) Transcript(ctx context.Context, name string, last int) ([]TranscriptEntry, error) {
	res, err := s.c.TranscriptStanding(ctx, name, last)
	if err != nil {
		return nil, wrap(err)
	}
	return res.Entries, nil
}

// Peek returns the last `lines` lines (0: the service's default, 40; at
// most 2000) of a standing session's agent pane: what its terminal shows,
// a permission dialog included. ErrNotFound when it has no pane of the-loop's.
func (s *Standing) Peek(ctx context.Context, name string, lines int) (Peek, error) {
	res, err := s.c.PeekStanding(ctx, name, lines)
	return res, wrap(err)
}
