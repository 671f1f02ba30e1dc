package channels

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/redact"
)

// Answers back in Slack: the posts lifecycle put in the
// standing sessions' outboxes — a turn's answer to a reply from the thread
// (postReplies), a needs-attention note — are taken once per cycle and
// posted in their threads.

// Bounds of an answer posted in a thread.
const (
	PostPartChars = 3000
	PostMaxParts  = 3
)

// Redacted replaces a secret's value in a posted answer.
const Redacted = redact.Mark

// postOutbox takes the waiting posts and posts each in its thread; one
// that fails is a warning event and goes back for the next cycle.
func (p *Poller) postOutbox(ctx context.Context, cfg *config.Config) error {
	posts, err := p.Threads.TakePosts(ctx)
	if err != nil || len(posts) == 0 {
		return err
	}
	var secrets []string
	if p.Secrets != nil {
		secrets = p.Secrets(cfg)
	}
	client := p.clientFor(cfg.Slack)
	svc := p.Threads
	for _, post := range posts {
		if post.Kind == loop.PostAnswer && !cfg.PostReplies(post.Standing) {
			continue // turned off since the reply was delivered
		}
		channel := post.Channel
		if channel == "" {
			channel = cfg.Slack.Channel
		}
		what := "standing.reply_posted"
		if post.Kind == loop.PostAttention {
			what = "standing.attention_posted"
		}
		parts := p.postParts(post, secrets)
		posted := 0
		var failed error
		for _, part := range parts {
			ts, err := client.PostInThread(ctx, channel, post.Thread, part)
			if err != nil {
				failed = err
				break
			}
			if p.notices == nil {
				p.notices = map[string]bool{}
			}
			p.notices[ts] = true // read back, it only moves the cursor
			posted++
		}
		fields := []loop.Field{loop.F("channel", ChannelSlack), loop.F("standing", post.Standing), loop.F("thread", post.Thread)}
		if post.PromptID != "" {
			fields = append(fields, loop.F("prompt_id", post.PromptID))
		}
		if failed == nil {
			if err := svc.Emit(svc.NewEvent(what, loop.LevelInfo, append(fields, loop.F("parts", posted))...)); err != nil {
				p.log().Warn("channels: could not record "+what, "error", err.Error())
			}
			continue
		}
		msg := loop.ErrorMessage(failed)
		p.log().Warn("slack: could not post in a standing session's thread; it is tried again next cycle", "standing", post.Standing, "error", msg)
		if err := svc.Emit(svc.NewEvent("standing.post_failed", loop.LevelWarning, append(fields, loop.F("kind", post.Kind), loop.F("error", msg))...)); err != nil {
			p.log().Warn("channels: could not record standing.post_failed", "error", err.Error())
		}
		if posted == 0 { // a post cut half way is not posted again
			if err := svc.ReturnPost(ctx, post); err != nil {
				return err
			}
		}
	}
	return nil
}

// postParts is what post says in its thread, redacted: an answer in
// AnswerParts; a needs-attention note in one part, with how to answer it —
// an approval's own text says how (reply approve or deny in the thread, or
// decide it with the CLI when its input is too long to show), any other
// note names the attach that answers it at the terminal.
func (p *Poller) postParts(post loop.OutgoingPost, secrets []string) []string {
	if post.Kind != loop.PostAttention {
		return AnswerParts(p.redact(post.Text, secrets), post.Standing)
	}
	text := EscapeText(p.redact(post.Text, secrets))
	if post.Approval != "" {
		return []string{fmt.Sprintf(":warning: standing session `%s` needs attention: %s", post.Standing, text)}
	}
	return []string{fmt.Sprintf(":warning: standing session `%s` needs attention: %s — answer it with `the-loop standing attach %s --write`",
		post.Standing, text, post.Standing)}
}

// redact replaces every secret's value in text: secrets' (Poller.Secrets)
// and the Redactor's (the token file's value, agent credentials, the
// credential shapes).
func (p *Poller) redact(text string, secrets []string) string {
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, Redacted)
		}
	}
	return p.Redactor.String(text)
}

// EscapeText escapes text for a Slack message: &, < and > (so nothing in
// it becomes a mention, a link or a channel ping).
func EscapeText(text string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text)
}

// AnswerParts splits an answer (escaped for Slack) into at most
// PostMaxParts parts of PostPartChars characters; an answer longer than
// that ends its last part with a note naming the transcript.
func AnswerParts(answer, name string) []string {
	text := EscapeText(answer)
	if strings.TrimSpace(text) == "" {
		text = "(the answer was empty)"
	}
	note := "\n… truncated — `the-loop standing transcript " + name + "`"
	var parts []string
	for len(parts) < PostMaxParts && text != "" {
		limit := PostPartChars
		last := len(parts) == PostMaxParts-1
		if last && utf8.RuneCountInString(text) > PostPartChars {
			limit -= utf8.RuneCountInString(note)
		}
		head, rest := cutRunes(text, limit)
		if last && rest != "" {
			head += note
		}
		parts = append(parts, head)
		text = rest
	}
	return parts
}

// cutRunes splits s after n characters, not inside an escape (&amp;).
func cutRunes(s string, n int) (head, rest string) {
	i := 0
	for pos := range s {
		if i == n {
			head, rest = s[:pos], s[pos:]
			if amp := strings.LastIndexByte(head, '&'); amp >= 0 && amp > len(head)-5 && !strings.Contains(head[amp:], ";") {
				head, rest = s[:amp], s[amp:]
			}
			return head, rest
		}
		i++
	}
	return s, ""
}
