package loop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"unicode"
)

// Activity is what an agent does as its hooks report it.
type Activity string

// Activities of an agent as its hooks report them. A row shows
// ActivityUnknown for a harness without hooks or a session spawned before
// the-loop installed them.
const (
	ActivityStarting Activity = "starting" // spawned, no SessionStart yet
	ActivityIdle     Activity = "idle"     // after SessionStart or a Stop
	ActivityWorking  Activity = "working"  // after UserPromptSubmit or PostToolUse, until the turn's Stop
	ActivityWaiting  Activity = "waiting"  // a permission or elicitation dialog during the turn
	ActivityExited   Activity = "exited"   // the pane is dead, or SessionEnd (not clear)
	ActivityUnknown  Activity = "unknown"
)

// KeptAnswers is how many of its last answers a record keeps.
const KeptAnswers = 5

// Answer is one turn's answer as its Stop hook carried it.
type Answer struct {
	PromptID string `json:"promptId"`
	Text     string `json:"text"`
	At       string `json:"at"` // RecordTimeFormat
	// Truncated marks an answer cut with its payload (over 1 MiB).
	Truncated bool `json:"truncated,omitempty"`
}

// MaxAwaited bounds a record's Awaited and Outbox: the oldest go first.
const MaxAwaited = 10

// AwaitedAnswer is a delivered message whose answer a thread waits for.
type AwaitedAnswer struct {
	// PromptID is the turn's, once known (a submitted message); "" for a
	// queued one, found at its Stop by its Sum in the transcript.
	PromptID string `json:"promptId,omitempty"`
	Sum      string `json:"sum"`
	At       string `json:"at"`
}

// Kinds of OutgoingPost.
const (
	PostAnswer    = "answer"
	PostAttention = "attention"
)

// OutgoingPost is a post waiting to go out in a standing session's thread:
// a turn's answer, or a needs-attention note.
type OutgoingPost struct {
	Kind string `json:"kind"`
	// Standing, Channel and Thread say where: filled when it is taken.
	Standing string `json:"standing,omitempty"`
	Channel  string `json:"channel,omitempty"`
	Thread   string `json:"thread,omitempty"`
	PromptID string `json:"promptId,omitempty"`
	// Approval is the id of the pending approval an attention post asks
	// about (its thread decides it: approve or deny).
	Approval string `json:"approval,omitempty"`
	Text     string `json:"text"`
	At       string `json:"at"`
	Attempts int    `json:"attempts,omitempty"`
}

// HeardPrompt is one UserPromptSubmit as a say verifies it: the prompt's
// PromptSum, never its text.
type HeardPrompt struct {
	PromptID string `json:"promptId"`
	Sum      string `json:"sum"`
	// Queued marks a prompt submitted into a running turn: its own turn
	// follows under a new prompt id.
	Queued bool `json:"queued,omitempty"`
	// Truncated marks a payload cut short: its Sum is not the prompt's.
	Truncated bool   `json:"truncated,omitempty"`
	At        string `json:"at"` // RecordTimeFormat
}

// PromptSum is the fingerprint of a prompt a say compares: its words
// (whitespace of any kind collapsed, control characters dropped) hashed.
func PromptSum(text string) string {
	clean := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, text)
	sum := sha256.Sum256([]byte(strings.Join(strings.Fields(clean), " ")))
	return hex.EncodeToString(sum[:16])
}

// Hearing is what the-loop heard of an agent through its hooks, kept in
// both kinds of record (its keys inline).
type Hearing struct {
	// Activity is one of the Activity* values ("" before hooks: unknown).
	Activity Activity `json:"activity,omitempty"`
	// ActivityAt is when Activity last changed (RecordTimeFormat).
	ActivityAt string `json:"activityAt,omitempty"`
	// TurnPromptID is the prompt id of the running turn.
	TurnPromptID string `json:"turnPromptId,omitempty"`
	// Queued counts the messages queued into the running turn: each gets
	// a turn of its own after it, without a UserPromptSubmit of its own.
	Queued int `json:"queued,omitempty"`
	// Answers are the last KeptAnswers answers, oldest first.
	Answers []Answer `json:"answers,omitempty"`
	// Tokens are the conversation's totals, summed at each turn's end from
	// the transcript's tail.
	Tokens *TokenUsage `json:"tokens,omitempty"`
	// TokensThrough is the time (RFC 3339, nanoseconds) of the last
	// transcript answer counted into Tokens.
	TokensThrough string `json:"tokensThrough,omitempty"`
	// PaneTag is the tag of the running pane (the conversation it was
	// spawned for) once a /clear moved the record to another conversation;
	// "" while they are the same.
	PaneTag string `json:"paneTag,omitempty"`
	// Prompts are the last KeptAnswers prompts UserPromptSubmit carried,
	// oldest first: a say finds its own among them.
	Prompts []HeardPrompt `json:"prompts,omitempty"`
	// Awaited are the answers a Slack thread waits for: the replies from
	// it that were delivered (channels.slack.postReplies).
	Awaited []AwaitedAnswer `json:"awaited,omitempty"`
	// Outbox are the posts waiting to go out in the session's thread.
	Outbox []OutgoingPost `json:"outbox,omitempty"`
	// HookSeq is the name of the last spooled hook payload applied to the
	// record: a spool file at or before it is never applied again.
	HookSeq string `json:"hookSeq,omitempty"`
	// HookIDs are the delivery ids (HookDelivery.ID) of the last hooks
	// applied to the record, oldest first, at most MaxHookIDs: a delivery
	// whose id is among them was applied before and is ignored.
	HookIDs []string `json:"hookIds,omitempty"`
}

// MaxHookIDs is how many delivery ids a record keeps (Hearing.HookIDs): far
// more than the hooks one agent can have in flight (a hook command ends
// within 2 s) while every list decodes them.
const MaxHookIDs = 32

// TagFor is the tag the running pane of conversation id carries.
func (h *Hearing) TagFor(id string) string {
	if h.PaneTag != "" {
		return h.PaneTag
	}
	return id
}

// LastAnswerAt is the time of the last answer kept ("" when none).
func (h *Hearing) LastAnswerAt() string {
	if len(h.Answers) == 0 {
		return ""
	}
	return h.Answers[len(h.Answers)-1].At
}

// ActivityOf is the activity a row shows: the heard one, exited once the
// pane is not live, unknown when nothing was heard.
func (h *Hearing) ActivityOf(running bool) Activity {
	switch {
	case h.Activity == "":
		return ActivityUnknown
	case !running:
		return ActivityExited
	}
	return h.Activity
}

// RowFields are the hearing's fields as a row shows them.
func (h *Hearing) RowFields(running bool) (activity Activity, at, lastAnswer string, tokens TokenUsage) {
	activity = h.ActivityOf(running)
	if activity != ActivityUnknown {
		at = h.ActivityAt
	}
	if h.Tokens != nil {
		tokens = *h.Tokens
	}
	return activity, at, h.LastAnswerAt(), tokens
}

// HeardPromptFor is the prompt id of a turn heard for text sum among
// prompts that were not heard before (seen), one that ran as a turn of its
// own (not queued into another): how a say delivered into a busy Codex or
// Gemini finds the turn that took it, where no transcript entry names it.
//
// joins (codex) also takes a prompt that joined the running turn: that
// turn's Stop answers it.
func HeardPromptFor(prompts, seen []HeardPrompt, sum string, joins bool) string {
	for _, p := range prompts {
		if p.Sum == sum && (!p.Queued || joins) && p.PromptID != "" && !slices.Contains(seen, p) {
			return p.PromptID
		}
	}
	return ""
}

// Outcomes of a control verb, per row.
const (
	OutcomeStarted        = "started"
	OutcomeResumed        = "resumed"
	OutcomeAlreadyRunning = "already-running"
	OutcomeFailed         = "failed"
	OutcomeStopped        = "stopped"
	OutcomeNotRunning     = "not-running"
	OutcomeDeleted        = "deleted"
	OutcomeMisconfigured  = "misconfigured"
)

// Message is one line a verb has for the operator, on stdout ("out") or
// stderr ("err").
type Message struct {
	Stream string `json:"stream"`
	Text   string `json:"text"`
}

// SayResult is what say returns (original §5.10).
type SayResult struct {
	Name      string `json:"name"`
	Delivered bool   `json:"delivered"`
	// Outcome is one of the Say* outcomes ("" for a say that failed
	// before it was decided).
	Outcome string `json:"outcome"`
	// Reply is the turn's answer to the message once a waiting say got it;
	// "" until answered.
	Reply    string    `json:"reply"`
	ExitCode int       `json:"exitCode"`
	Messages []Message `json:"messages"`
}

// Outcomes of a say or a reply, decided in this order.
const (
	// SayQueued: the agent was working when the text was pasted and when
	// it was submitted; the agent queued it for a turn of its own.
	SayQueued = "queued"
	// SaySubmitted: a UserPromptSubmit holding the text arrived in time.
	SaySubmitted = "submitted"
	// SayDelivered: pasted and submitted into an agent without hooks.
	SayDelivered = "delivered"
	// SayNotReady: the agent waits on a dialog, or its prompt is not up;
	// nothing was pasted.
	SayNotReady = "not-ready"
	// SayNotSubmitted: no evidence after one more submit key; the text is
	// left in the input box.
	SayNotSubmitted = "not-submitted"
)

// AgentIdentity is the session an agent credential belongs to: exactly one
// of Standing and WorkItem is set.
type AgentIdentity struct {
	// Standing is the standing session's name.
	Standing string
	// WorkItem is the work item's ref (e.g. github:owner/repo#12).
	WorkItem string
	// HarnessSessionID is the conversation the credential was made for.
	HarnessSessionID string
}

// String names the session: "standing:<name>" or "work-item:<ref>".
func (a AgentIdentity) String() string {
	if a.Standing != "" {
		return "standing:" + a.Standing
	}
	return "work-item:" + a.WorkItem
}

// AgentAuthenticator finds the running agent a credential belongs to.
type AgentAuthenticator interface {
	// AgentFor returns the identity of the running session token was made
	// for; false when it is no running agent's (never an error: a store
	// that cannot be read admits nobody).
	AgentFor(ctx context.Context, token string) (AgentIdentity, bool)
}

// PaneAgents finds the agent whose pane a process runs in: a socket peer
// in an agent's pane tree has an agent's rights.
type PaneAgents interface {
	// AgentOfProcess returns the running session one of whose agent
	// panes' pids is in chain (a process and its ancestors, nearest
	// first); false when none is (never an error: a tmux server that does
	// not answer makes no agent).
	AgentOfProcess(ctx context.Context, chain []int) (AgentIdentity, bool)
}

// Claim is an in-flight transition held by one process.
type Claim struct {
	Op  string `json:"op"` // "start" or "stop"
	PID int    `json:"pid"`
	// PIDStart is the start time of process PID (the system's own unit,
	// runner.ProcessStart): a claim is live while that very process runs,
	// never merely while some process holds the pid.
	PIDStart         uint64 `json:"pidStart,omitempty"`
	Since            string `json:"since"`
	HarnessSessionID string `json:"harnessSessionId,omitempty"`
	Resume           bool   `json:"resume,omitempty"`
	// HeardID is, for a fresh start of a CLI that chooses its own
	// conversation id (codex), the id its SessionStart hook named from the
	// spawned pane while the start still reads it back: the hooks of that
	// id are the start's. HarnessSessionID stays the pane's tag.
	HeardID string `json:"heardId,omitempty"`
	// Held is what the agent's hooks said while a start held the claim:
	// appended to the log after the start's own event, when the claim is
	// released, so a started or resumed event precedes its first turn.
	Held []Event `json:"held,omitempty"`
}

// MaxHeldEvents bounds Claim.Held; the hooks' events past it go to the log
// at once.
const MaxHeldEvents = 64

// TrustEntry is one trust entry the-loop added to an agent CLI's config:
// the harness whose file holds it and the directory it trusts.
type TrustEntry struct {
	Harness string `json:"harness"`
	Dir     string `json:"dir"`
}
