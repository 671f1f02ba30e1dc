package slack

import (
	"fmt"
	"strings"
)

// Detail is one `key: value` line of a verbose message, in order.
type Detail struct {
	Key, Value string
}

// Outbound is an event the bot posts (the original's OutboundEvent): its
// type, the work item (or "standing:<name>") it concerns, an optional URL,
// its gist and its details.
type Outbound struct {
	Type     string
	WorkItem string
	URL      string
	Text     string
	Detail   []Detail
}

// Render is the message text at a verbosity (original §9.1):
//
//	quiet    the-loop: <type> on <work item>[ — <url>]
//	normal   quiet, a blank line, the text
//	verbose  normal, a blank line, one `key: value` line per detail
//
// An unknown verbosity renders as normal.
func Render(ev Outbound, verbosity string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the-loop: %s on %s", ev.Type, ev.WorkItem)
	if ev.URL != "" {
		b.WriteString(" — " + ev.URL)
	}
	if verbosity == "quiet" {
		return b.String()
	}
	if ev.Text != "" {
		b.WriteString("\n\n" + ev.Text)
	}
	if verbosity == "verbose" && len(ev.Detail) > 0 {
		b.WriteString("\n")
		for _, d := range ev.Detail {
			b.WriteString("\n" + d.Key + ": " + d.Value)
		}
	}
	return b.String()
}

// StandingAnnouncement is the post that opens a standing session's thread
// (original §9.2): type standing.started on standing:<name>, whatever the
// session's start (fresh or resumed), with the harness and tmux target as
// details.
func StandingAnnouncement(name, harness, target string) Outbound {
	return Outbound{
		Type:     "standing.started",
		WorkItem: "standing:" + name,
		Text: fmt.Sprintf("the-loop standing session `%s` is up (%s). Reply in this thread to talk to it — "+
			"replies from an authorized member are pasted straight into its terminal.", name, harness),
		Detail: []Detail{{"harness", harness}, {"tmux", target}},
	}
}

// WorkItemAnnouncement is the post that opens a work item's thread
// (`sessions start --slack`; original §9.1): type session.started on the
// ref, with the harness, the tmux target and the work item's URL (when it
// has one) as details.
func WorkItemAnnouncement(ref, harness, target, url string) Outbound {
	detail := []Detail{{"harness", harness}, {"tmux", target}}
	if url != "" {
		detail = append(detail, Detail{"url", url})
	}
	return Outbound{
		Type:     "session.started",
		WorkItem: ref,
		Text: fmt.Sprintf("the-loop session for `%s` is up (%s). Reply in this thread to answer it — "+
			"replies from an authorized member reach its terminal and are recorded on the ticket as the answer of record.", ref, harness),
		Detail: detail,
	}
}

// UndeliveredNotice is the post that tells a thread its replies were
// dropped: n replies to ref, kept while its session could
// not take them, were not delivered within window (seconds), why naming the
// last reason. Type channel.dropped on the ref, as the event log says.
func UndeliveredNotice(ref string, n, window int, why string) Outbound {
	what, verb := "Your reply in this thread was", "is"
	if n != 1 {
		what, verb = fmt.Sprintf("%d replies in this thread were", n), "are"
	}
	text := fmt.Sprintf("%s not delivered to `%s` within %d s (channels.slack.retrySeconds) and %s dropped: %s. "+
		"Send again once the session is back.", what, ref, window, verb, why)
	return Outbound{Type: "channel.dropped", WorkItem: ref, Text: text,
		Detail: []Detail{{"replies", fmt.Sprint(n)}, {"retrySeconds", fmt.Sprint(window)}}}
}
