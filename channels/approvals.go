package channels

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// Approvals from Slack (decisions D35). In a standing session's thread an
// authorized member's whole reply — trimmed, case-insensitive — that reads
//
//	approve             the session's one pending approval
//	approve ID
//	deny                the one pending, no reason given
//	deny ID <reason>
//	deny <reason>       the one pending
//
// decides an approval as slack:<member> and is never pasted into the pane.
// An ID is 8 hex digits (the hearing room's ids); after deny, a first word
// of that shape is the ID only when an approval of that id is recorded —
// else it is the reason's first word. The thread is told what came of it:
// the decision, nothing pending, several pending (their ids), an input
// too long to show in Slack (decided with the CLI or the dashboard), or
// the service's refusal.

// maxDecidableText is hearing.MaxDecidableText: an approval whose input
// text is longer, in bytes, is not shown whole in Slack, and so is not
// decided from it (channels does not import hearing; a test holds the two
// equal).
const maxDecidableText = 3000

// approvalID is the shape of an approval's id.
var approvalID = regexp.MustCompile(`^[0-9a-f]{8}$`)

// slackDecision is a reply read as a decision.
type slackDecision struct {
	decision string // loop.DecisionAllow or loop.DecisionDeny
	// id is the approval named ("" for the session's one pending); for a
	// deny it is only a candidate until resolve: it may be the reason's
	// first word.
	id string
	// message is a deny's reason after the id; whole is the reason were
	// the candidate id its first word.
	message, whole string
}

// parseDecision reads text, a whole reply, as a decision; ok false for
// any other reply (it is delivered as it is).
func parseDecision(text string) (d slackDecision, ok bool) {
	verb, rest := firstWord(strings.TrimSpace(text))
	switch strings.ToLower(verb) {
	case "approve":
		id := strings.ToLower(rest)
		if rest != "" && !approvalID.MatchString(id) {
			return slackDecision{}, false
		}
		return slackDecision{decision: loop.DecisionAllow, id: id}, true
	case "deny":
		d = slackDecision{decision: loop.DecisionDeny, message: rest, whole: rest}
		if word, after := firstWord(rest); approvalID.MatchString(strings.ToLower(word)) {
			d.id, d.message = strings.ToLower(word), after
		}
		return d, true
	}
	return slackDecision{}, false
}

// firstWord splits s (trimmed) at its first run of white space.
func firstWord(s string) (word, rest string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// decides reports whether in, a member's reply bound to a standing
// session, is a decision; when it is, it is decided (Approvals) and its
// thread told how that went — it is not delivered.
func (p *Poller) decides(ctx context.Context, cfg *config.Config, in Inbound) bool {
	name, standing := loop.ParseStandingRef(in.WorkItem)
	if !standing {
		return false
	}
	d, ok := parseDecision(in.Text)
	if !ok {
		return false
	}
	p.tell(ctx, cfg, in, p.decide(ctx, in, name, d))
	return true
}

// decide decides d for standing session name as slack:<author> and says
// what came of it, for the thread.
func (p *Poller) decide(ctx context.Context, in Inbound, name string, d slackDecision) string {
	verb := map[string]string{loop.DecisionAllow: "approve", loop.DecisionDeny: "deny"}[d.decision]
	if p.Approvals == nil {
		return fmt.Sprintf("`%s` was not decided: this poll has no approvals to decide (a `the-loop channels poll` without the service holds no waiting hook); "+
			"reply again once `the-loop serve` polls the thread, or decide with `the-loop standing %[1]s %s`", verb, name)
	}
	list, err := p.Approvals.Approvals(ctx, name)
	if err != nil {
		return fmt.Sprintf("`%s` was not decided: the approvals of standing session `%s` could not be listed: %s", verb, name, loop.ErrorMessage(err))
	}
	a, why := p.resolve(ctx, name, &d, list)
	if why != "" {
		return why
	}
	if a != nil && a.Status == loop.ApprovalPending && !decidable(a) {
		return fmt.Sprintf("approval `%s` of standing session `%s` was not decided: its %s input is longer than the %d characters Slack shows, and nothing is decided unseen; "+
			"decide it with `the-loop standing %s %s %s` (see it with `the-loop standing approvals %[2]s`) or on the dashboard", a.ID, name, a.Tool, maxDecidableText, verb, name, a.ID)
	}
	by := "slack:" + in.Author
	out, err := p.Approvals.Decide(ctx, d.id, loop.ApprovalDecision{Decision: d.decision, Message: d.message, Session: name}, by)
	if err != nil {
		return fmt.Sprintf("approval `%s` was not decided: %s", d.id, loop.ErrorMessage(err))
	}
	if d.decision == loop.DecisionAllow {
		return fmt.Sprintf("approval `%s` of standing session `%s` (%s): allowed by %s — the tool runs.", out.ID, name, out.Tool, by)
	}
	return fmt.Sprintf("approval `%s` of standing session `%s` (%s): denied by %s — the model reads the message as the tool's error.", out.ID, name, out.Tool, by)
}

// resolve settles d's id against list, session name's approvals: a deny's
// candidate id that names no recorded approval (this session's or any
// other's) is its reason's first word; with no id, the session's one
// pending approval is the one decided. It returns that approval when list
// holds it, or why nothing is decided (for the thread).
func (p *Poller) resolve(ctx context.Context, name string, d *slackDecision, list []loop.Approval) (*loop.Approval, string) {
	if d.id != "" {
		if a := find(list, d.id); a != nil {
			return a, ""
		}
		if d.decision == loop.DecisionDeny && !p.recorded(ctx, d.id) {
			d.id, d.message = "", d.whole
		} else {
			return nil, "" // the service says what is wrong with it
		}
	}
	var pending []loop.Approval
	for _, a := range list {
		if a.Status == loop.ApprovalPending {
			pending = append(pending, a)
		}
	}
	switch len(pending) {
	case 0:
		return nil, fmt.Sprintf("nothing is pending: standing session `%s` has no approval waiting for a decision (`the-loop standing approvals --all %[1]s` lists the settled ones)", name)
	case 1:
		d.id = pending[0].ID
		return &pending[0], ""
	}
	ids := make([]string, len(pending))
	for i, a := range pending {
		ids[i] = "`" + a.ID + "`"
	}
	return nil, fmt.Sprintf("nothing was decided: standing session `%s` has %d pending approvals (%s); name one: reply `approve ID` or `deny ID <reason>`",
		name, len(pending), strings.Join(ids, ", "))
}

// recorded reports whether an approval id is recorded for any session (a
// listing that fails counts it recorded: the service then says why).
func (p *Poller) recorded(ctx context.Context, id string) bool {
	all, err := p.Approvals.Approvals(ctx, "")
	return err != nil || find(all, id) != nil
}

// find is the approval id of list (nil when none).
func find(list []loop.Approval, id string) *loop.Approval {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}

// decidable reports whether a's input is shown whole in its Slack post:
// not cut at MaxApprovalInput, and its text (hearing.ApprovalInputText: a
// Bash command as it is, else the input's JSON) at most maxDecidableText.
func decidable(a *loop.Approval) bool {
	if a.InputTruncated {
		return false
	}
	text := string(a.Input)
	var in map[string]any
	if json.Unmarshal(a.Input, &in) == nil {
		if c, ok := in["command"].(string); ok && a.Tool == "Bash" {
			text = c
		}
	}
	return len(text) <= maxDecidableText
}

// tell posts text (redacted, then escaped for Slack) in in's thread as one of
// the poller's notices: read back, it only moves the thread's cursor. A
// post that fails is logged and recorded (channel.notice_failed); it is
// not tried again.
func (p *Poller) tell(ctx context.Context, cfg *config.Config, in Inbound, text string) {
	var secrets []string
	if p.Secrets != nil {
		secrets = p.Secrets(cfg)
	}
	p.postNotice(ctx, cfg, in.Channel, in.Thread, in.WorkItem, EscapeText(p.redact(text, secrets)), "what came of its approve or deny")
}
