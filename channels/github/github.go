package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels"
	"github.com/the-loop-dev/the-loop/config"
)

// Timeout bounds one `gh api` call: a hung gh never holds a poll
// cycle for longer.
const Timeout = 60 * time.Second

// Mirror is the pipeline's work-item side (channels.WorkItems; original §9.4
// _mirror and _deliver, original §10.3): a reply that cleared the drops and the
// allow-list is posted on its work item as a comment — the answer of
// record — through the operator's own gh (integrations.github.cli.binary,
// run without a shell), then delivered into the work item's session with
// `sessions reply` framing. A mirror that fails still delivers.
type Mirror struct {
	// WorkItems delivers the reply into the work item's session.
	WorkItems loop.WorkItemService
	// Events records channel.mirrored and channel.mirror_failed.
	Events loop.EventWriter
}

var _ channels.WorkItems = (*Mirror)(nil)

// Mirror posts r on its work item and records channel.mirrored, or
// channel.mirror_failed (warning, with the error): a ref that is not a
// GitHub issue, a gh that is missing, fails or times out. It never panics
// on a bad ref and reports whether the comment was posted.
func (m *Mirror) Mirror(ctx context.Context, cfg *config.Config, r channels.Inbound) bool {
	ch, item, actor := loop.F("channel", channels.ChannelSlack), loop.F("work_item", r.WorkItem), loop.F("actor", r.Author)
	err := m.post(ctx, cfg, r)
	ev := m.Events.NewEvent("channel.mirrored", loop.LevelInfo, ch, item, actor)
	if err != nil {
		ev = m.Events.NewEvent("channel.mirror_failed", loop.LevelWarning, ch, item, actor, loop.F("error", Scrub(loop.ErrorMessage(err))))
	}
	_ = m.Events.Emit(ev) // the pipeline goes on to deliver whatever the log says
	return err == nil
}

// Reply delivers r into its work item's session (loop.WorkItemService.Reply:
// the operator's framing, actor slack:<member id>; it never spawns). A
// delivery refused or failed is an error saying why, for channel.dropped.
func (m *Mirror) Reply(ctx context.Context, cfg *config.Config, r channels.Inbound) (bool, error) {
	res, err := m.WorkItems.Reply(ctx, loop.WorkItemReplyRequest{Ref: r.WorkItem, Text: r.Text, Actor: "slack:" + r.Author})
	if err != nil {
		return false, err
	}
	if !res.Delivered {
		return false, errors.New(messagesLine(res.Messages))
	}
	return true, nil
}

// post runs gh to comment on r's work item.
func (m *Mirror) post(ctx context.Context, cfg *config.Config, r channels.Inbound) error {
	ref, err := loop.ParseWorkItemRef(r.WorkItem)
	if err != nil {
		return err
	}
	argv, err := CommentArgv(cfg.GitHubBinary, ref, CommentBody(r.Author, r.Text, cfg.Routing.ControlKeywords))
	if err != nil {
		return err
	}
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		return loop.Invalid("GitHub CLI '%s' not found (integrations.github.cli.binary) — install gh, or point the key at it", argv[0])
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Env = withoutVars(os.Environ(), cfg.Slack.BotTokenEnv, cfg.Slack.AppTokenEnv, cfg.Service.TokenEnv)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		detail := strings.Join(strings.Fields(stderr.String()), " ")
		if len(detail) > 300 {
			detail = detail[:300] + "…"
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return loop.Internal("%s api did not answer within %s", argv[0], Timeout)
		}
		if detail != "" {
			return loop.Internal("%s api failed (%v): %s", argv[0], err, detail)
		}
		return loop.Internal("%s api failed (%v)", argv[0], err)
	}
	return nil
}

// CommentArgv is the gh call that comments body on ref's issue (original
// §10.3): `<binary> api --method POST repos/<owner>/<repo>/issues/<n>/comments
// -f body=<body>`, with `--hostname <host>` after `api` for a host other
// than github.com. A ref that is not a GitHub issue is EINVALID.
func CommentArgv(binary string, ref loop.WorkItemRef, body string) ([]string, error) {
	if ref.Provider != "github" {
		return nil, loop.Invalid("work item %s is not a GitHub issue (provider '%s'): there is no ticket to record the reply on", ref, ref.Provider)
	}
	if ref.URL() == "" {
		return nil, loop.Invalid("work item %s does not name a GitHub repository (owner '%s', repo '%s')", ref, ref.Owner, ref.Repo)
	}
	if binary == "" {
		binary = "gh"
	}
	argv := []string{binary, "api"}
	if ref.Host != "" && ref.Host != loop.DefaultGitHubHost {
		argv = append(argv, "--hostname", ref.Host)
	}
	return append(argv, "--method", "POST",
		fmt.Sprintf("repos/%s/%s/issues/%d/comments", ref.Owner, ref.Repo, ref.Number),
		"-f", "body="+body), nil
}

// AgentCommentMarker marks a comment as the-loop's own, so its ingress
// never reads it back as an operator's.
const AgentCommentMarker = "<!-- the-loop:agent-comment -->"

// CommentBody is the comment a reply becomes on its work item (original
// §10.3): a header naming the member and the channel, a blank line, the
// reply — secrets scrubbed (Scrub), control keywords defanged (Defang),
// leading and trailing blank lines dropped — quoted line by line with
// "> ", then the self-authored stamp: a blank line, "🤖 _the-loop,
// autonomous comment_" and the marker.
func CommentBody(member, text string, keywords []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\U0001F5E3\uFE0F **the-loop** — reply from `%s` on the **%s** channel, recorded here as the answer of record:\n\n",
		strings.ReplaceAll(member, "`", ""), channels.ChannelSlack)
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	text = strings.Trim(text, "\n")
	for i, line := range strings.Split(Defang(Scrub(text), keywords), "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("> " + line)
	}
	b.WriteString("\n\n\U0001F916 _the-loop, autonomous comment_\n" + AgentCommentMarker)
	return b.String()
}

// Redacted replaces a secret Scrub finds.
const Redacted = "[redacted]"

// secretPatterns are what Scrub redacts — the credentials an operator is
// most likely to paste by mistake: Slack tokens (xoxb-, xoxp-, xoxa-, …,
// xapp-), GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_),
// OpenAI/Anthropic-style keys (sk-…) and the credential of an
// `Authorization: Bearer …` header (the word Bearer is kept).
// They compile on first use, not in the package init every CLI start pays.
var secretPatterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`\b(?:xox[a-z]|xapp)-[A-Za-z0-9-]{6,}`),
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{16,}`),
		regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{16,}`),
		regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`),
	}
})

// bearerPattern is a bearer credential; its first group is kept.
var bearerPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/-]{8,}=*`)
})

// Scrub replaces every secret secretPatterns names in text with Redacted.
func Scrub(text string) string {
	for _, re := range secretPatterns() {
		text = re.ReplaceAllLiteralString(text, Redacted)
	}
	return bearerPattern().ReplaceAllString(text, "${1}"+Redacted)
}

// zwj is U+200D ZERO WIDTH JOINER.
const zwj = "\u200d"

// zeroWidth is the class of invisible characters a reply could hide inside
// a keyword to slip it past the defang (zero-width space, non-joiner and
// joiner, word joiner, byte-order mark, soft hyphen).
const zeroWidth = `[\x{200B}\x{200C}\x{200D}\x{2060}\x{FEFF}\x{00AD}]`

// stripZeroWidth removes zeroWidth's characters.
var stripZeroWidth = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(zeroWidth) })

// Defang makes every configured control keyword in text inert: the
// original matches a keyword as whole tokens, case-insensitively, anywhere
// in a comment, so a reply quoting "the-loop stop" would steer the work
// item as if its author had typed it on the ticket. Each occurrence —
// matched the same way, with any run of whitespace between its words
// (Unicode spaces such as NO-BREAK SPACE included), and with any
// zero-width characters inside it stripped first — gets a zero-width
// joiner (U+200D) after its first character ("t\u200dhe-loop stop"): it
// reads the same, and no longer matches. Zero-width characters elsewhere
// (an emoji's joiners) are left alone.
func Defang(text string, keywords []string) string {
	for _, kw := range keywords {
		words := strings.Fields(kw)
		if len(words) == 0 {
			continue
		}
		for i, w := range words {
			// Every character may be followed by hidden ones.
			var b strings.Builder
			for _, r := range w {
				b.WriteString(regexp.QuoteMeta(string(r)) + zeroWidth + "*")
			}
			words[i] = b.String()
		}
		sep := `(?:` + zeroWidth + `*[\s\p{Zs}])+` + zeroWidth + `*`
		re := regexp.MustCompile(`(?i)` + zeroWidth + `*` + strings.Join(words, sep))
		text = re.ReplaceAllStringFunc(text, func(m string) string {
			m = stripZeroWidth().ReplaceAllLiteralString(m, "")
			_, size := utf8.DecodeRuneInString(m)
			return m[:size] + zwj + m[size:]
		})
	}
	return text
}

// messagesLine is a failed verb's messages, one line.
func messagesLine(msgs []loop.Message) string {
	var parts []string
	for _, m := range msgs {
		parts = append(parts, strings.TrimPrefix(m.Text, "error: "))
	}
	if len(parts) == 0 {
		return "the reply was not delivered"
	}
	return strings.Join(parts, "; ")
}

// withoutVars is env without the variables named (the-loop's own secrets:
// gh needs none of them).
func withoutVars(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, n := range names {
			if n != "" && strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
