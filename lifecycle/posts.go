package lifecycle

import (
	"context"
	"slices"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/store"
)

// Slack answers back: a reply from a standing session's thread
// that was delivered is awaited in the record (Say with AnswerToThread);
// the Stop that answers it moves the answer into the record's outbox, as
// a dialog's first notification moves a needs-attention note there; the
// poll cycle takes the outbox (TakePosts) and posts.

// maxPostAttempts is how many cycles a post that fails is tried in.
const maxPostAttempts = 5

// post appends p to h's outbox, the oldest going past MaxAwaited.
func (s *Service) post(h *loop.Hearing, p loop.OutgoingPost) {
	h.Outbox = append(slices.Clone(h.Outbox), p)
	if n := len(h.Outbox); n > loop.MaxAwaited {
		h.Outbox = h.Outbox[n-loop.MaxAwaited:]
	}
}

// answerAwaited moves the awaited message the Stop of promptID answers
// into the outbox: the one recorded with that prompt id, or a queued one
// whose text is the transcript's user entry of that prompt id.
func (s *Service) answerAwaited(h *hooked, promptID, text string) {
	if len(h.hear.Awaited) == 0 || promptID == "" {
		return
	}
	i := slices.IndexFunc(h.hear.Awaited, func(a loop.AwaitedAnswer) bool { return a.PromptID == promptID })
	if i < 0 && slices.ContainsFunc(h.hear.Awaited, func(a loop.AwaitedAnswer) bool { return a.PromptID == "" }) {
		if sum := s.promptSumOf(h, promptID); sum != "" {
			i = slices.IndexFunc(h.hear.Awaited, func(a loop.AwaitedAnswer) bool { return a.PromptID == "" && a.Sum == sum })
		}
	}
	if i < 0 {
		return
	}
	h.hear.Awaited = slices.Delete(slices.Clone(h.hear.Awaited), i, i+1)
	s.post(h.hear, loop.OutgoingPost{Kind: loop.PostAnswer, PromptID: promptID, Text: text, At: s.stamp()})
}

// promptSumOf is the PromptSum of the transcript's user entry of promptID
// ("" when none is found), reading only the recorded conversation's file.
func (s *Service) promptSumOf(h *hooked, promptID string) string {
	dir, err := harness.ClaudeConfigDir(s.Getenv, "")
	if err != nil || h.cwd == "" || *h.id == "" {
		return ""
	}
	return userEntrySum(harness.ClaudeTranscriptPath(dir, h.cwd, *h.id), promptID)
}

// TakePosts takes every standing session's outbox (loop.ThreadLog).
func (s *Service) TakePosts(ctx context.Context) ([]loop.OutgoingPost, error) {
	var out []loop.OutgoingPost
	any := false
	if err := s.DB.View(func(tx *store.Tx) error {
		recs, err := tx.ListStanding()
		any = slices.ContainsFunc(recs, func(r *loop.StandingRecord) bool { return len(r.Outbox) > 0 })
		return err
	}); err != nil || !any {
		return nil, err
	}
	err := s.DB.Update(func(tx *store.Tx) error {
		out = nil
		recs, err := tx.ListStanding()
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if len(rec.Outbox) == 0 {
				continue
			}
			if rec.SlackThread != "" {
				for _, p := range rec.Outbox {
					p.Standing, p.Channel, p.Thread = rec.Name, rec.SlackChannel, rec.SlackThread
					out = append(out, p)
				}
			}
			rec.Outbox = nil
			if err := tx.PutStanding(rec); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// ReturnPost puts a failed post back in its session's outbox
// (loop.ThreadLog); after maxPostAttempts it is dropped.
func (s *Service) ReturnPost(ctx context.Context, p loop.OutgoingPost) error {
	p.Attempts++
	if p.Attempts >= maxPostAttempts {
		return nil
	}
	return s.DB.Update(func(tx *store.Tx) error {
		rec, err := tx.Standing(p.Standing)
		if err != nil || rec == nil || rec.SlackThread != p.Thread {
			return err
		}
		p.Standing, p.Channel, p.Thread = "", "", ""
		rec.Outbox = append([]loop.OutgoingPost{p}, rec.Outbox...)
		return tx.PutStanding(rec)
	})
}

// SecretValues are the values of the secrets kept out of agents
// (credential.SecretEnv's variables, as getenv reads them): a post from an agent's
// answer never carries one.
func SecretValues(cfg *config.Config, getenv func(string) string) []string {
	var out []string
	for _, name := range credential.SecretEnv(cfg) {
		if v := getenv(name); len(v) >= 8 {
			out = append(out, v)
		}
	}
	return out
}
