package hearing

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
)

// Slack answers back: a reply from a standing session's thread
// that was delivered is awaited in the record (Say with AnswerToThread);
// the Stop that answers it moves the answer into the record's outbox, as
// a dialog's first notification moves a needs-attention note there; the
// poll cycle takes the outbox (TakePosts) and posts.

// post appends p to h's outbox, the oldest going past MaxAwaited.
func (s *Hearer) post(h *loop.Hearing, p loop.OutgoingPost) {
	h.Outbox = append(slices.Clone(h.Outbox), p)
	if n := len(h.Outbox); n > loop.MaxAwaited {
		h.Outbox = h.Outbox[n-loop.MaxAwaited:]
	}
}

// answerAwaited moves the awaited message the Stop of promptID answers
// into the outbox: the one recorded with that prompt id, or a queued one
// whose text is the transcript's user entry of that prompt id.
func (s *Hearer) answerAwaited(h *hooked, promptID, text string) {
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
func (s *Hearer) promptSumOf(h *hooked, promptID string) string {
	dir, err := harness.ClaudeConfigDir(s.Getenv, "")
	if err != nil || h.cwd == "" || *h.id == "" {
		return ""
	}
	return userEntrySum(harness.ClaudeTranscriptPath(dir, h.cwd, *h.id), promptID)
}

// userEntrySum is the PromptSum of the text of the last user entry of
// promptID in the transcript's last 1 MiB ("" when there is none).
func userEntrySum(path, promptID string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 1<<20 {
		_, _ = f.Seek(fi.Size()-1<<20, io.SeekStart)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return ""
	}
	sum := ""
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		var e struct {
			Type     string `json:"type"`
			PromptID string `json:"promptId"`
			Message  struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) == nil && e.Type == "user" && e.PromptID == promptID {
			if text := contentText(e.Message.Content); text != "" {
				sum = loop.PromptSum(text)
			}
		}
	}
	return sum
}

// contentText is a transcript message's text: a string, or its text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
