package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultGitHubHost is the host a github ref means when it names none; a
// ref writes its host only when it is somewhere else.
const DefaultGitHubHost = "github.com"

// WorkItemTargetPrefix starts the tmux session name of a work item's
// session ("loop-<slug>").
const WorkItemTargetPrefix = "loop-"

// SessionStatus is the stored status of a work item's session.
type SessionStatus string

// Work-item session statuses (original §4.2). The Go version records active
// and closed; paused is the original's, accepted by list filters.
const (
	SessionActive SessionStatus = "active"
	SessionPaused SessionStatus = "paused"
	SessionClosed SessionStatus = "closed"
	// SessionBroken is a stored record that does not decode:
	// listed, with a detail naming its key, never acted on.
	SessionBroken SessionStatus = "broken"
)

// The grammars below compile on first use, not in the package init every
// CLI start pays.
var (
	// workItemRE is the ref grammar: <provider>:<path>#<number>.
	workItemRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-z][a-z0-9-]*):([^#]+)#([0-9]+)$`) })
	// hostRE is a host in a ref: dotted (with an optional port), or a bare
	// name with an explicit port — what tells host/owner/repo from a typo.
	hostRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::[0-9]+)?|[A-Za-z0-9-]+:[0-9]+)$`)
	})
	// slugUnsafeRE is what a slug rewrites to "-".
	slugUnsafeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })
	// githubNameRE is an owner or repository name GitHub accepts.
	githubNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+$`) })
)

// WorkItemRef names a work item: <provider>:[<host>/]<owner>/<repo>#<number>
// (original §10.1). A github ref's Host is github.com when the ref does not
// name one, so two spellings of one work item are equal.
type WorkItemRef struct {
	Provider string
	Host     string
	Owner    string
	Repo     string
	Number   int
}

// ParseWorkItemRef parses a work-item ref (surrounding whitespace ignored).
// A malformed ref is EINVALID with the original's message. The provider
// "standing" is refused: "standing:" belongs to standing sessions
// (ParseStandingRef), so neither namespace can address the other — not even
// through a tmux name: a ref whose tmux target starts with loop-standing-
// (e.g. standing-ops:acme/web#7) is refused too.
func ParseWorkItemRef(s string) (WorkItemRef, error) {
	ref := strings.TrimSpace(s)
	m := workItemRE().FindStringSubmatch(ref)
	if m == nil {
		return WorkItemRef{}, Invalid("invalid work-item ref '%s'; expected <provider>:[<host>/]<owner>/<repo>#<number> "+
			"(e.g. github:octo/repo#15, github:ghe.corp.example/octo/repo#15)", s)
	}
	if m[1] == "standing" {
		return WorkItemRef{}, Invalid("invalid work-item ref '%s'; the provider 'standing' is reserved — "+
			"standing:<name> names a standing session (the-loop standing …), never a work item", s)
	}
	number, err := strconv.Atoi(m[3])
	if err != nil {
		return WorkItemRef{}, Invalid("invalid work-item ref '%s'; the number after '#' is out of range", s)
	}
	var host, owner, repo string
	switch parts := strings.Split(m[2], "/"); len(parts) {
	case 2:
		owner, repo = parts[0], parts[1]
	case 3:
		host, owner, repo = parts[0], parts[1], parts[2]
		if !hostRE().MatchString(host) {
			return WorkItemRef{}, badPath(s)
		}
	default:
		return WorkItemRef{}, badPath(s)
	}
	if owner == "" || repo == "" {
		return WorkItemRef{}, badPath(s)
	}
	if m[1] == "github" && host == "" {
		host = DefaultGitHubHost
	}
	wi := WorkItemRef{Provider: m[1], Host: host, Owner: owner, Repo: repo, Number: number}
	if target := wi.TmuxTarget(); strings.HasPrefix(target, StandingTargetPrefix) {
		return WorkItemRef{}, Invalid("invalid work-item ref '%s'; its tmux session %s would be in the standing "+
			"namespace (%s<name> belongs to standing sessions); use a provider that does not start with 'standing-'",
			s, target, StandingTargetPrefix)
	}
	return wi, nil
}

func badPath(s string) *Error {
	return Invalid("invalid work-item ref '%s'; expected <owner>/<repo>, optionally preceded by a host, before '#'", s)
}

// defaultHost reports whether the ref's host goes unwritten.
func (r WorkItemRef) defaultHost() bool {
	if r.Provider == "github" {
		return r.Host == DefaultGitHubHost || r.Host == ""
	}
	return r.Host == ""
}

// Path is [<host>/]<owner>/<repo>, the host only when it is not the default.
func (r WorkItemRef) Path() string {
	if r.defaultHost() {
		return r.Owner + "/" + r.Repo
	}
	return r.Host + "/" + r.Owner + "/" + r.Repo
}

// String is the ref in its canonical form, e.g. "github:octo/repo#15".
func (r WorkItemRef) String() string {
	return fmt.Sprintf("%s:%s#%d", r.Provider, r.Path(), r.Number)
}

// Slug is the ref as a store key: "<provider>-<path with / as ->-<number>",
// every run of characters outside [A-Za-z0-9._-] made "-".
func (r WorkItemRef) Slug() string {
	raw := fmt.Sprintf("%s-%s-%d", r.Provider, strings.ReplaceAll(r.Path(), "/", "-"), r.Number)
	return slugUnsafeRE().ReplaceAllString(raw, "-")
}

// TmuxTarget is the tmux session name of the work item's session:
// "loop-<slug>" as tmux spells it (TmuxSessionName).
func (r WorkItemRef) TmuxTarget() string { return TmuxSessionName(WorkItemTargetPrefix + r.Slug()) }

// URL is the work item's browser URL, or "" when none can be derived (only
// github refs whose host, owner and repo are shapes GitHub accepts).
func (r WorkItemRef) URL() string {
	host := r.Host
	if host == "" {
		host = DefaultGitHubHost
	}
	if r.Provider != "github" || !hostRE().MatchString(host) || !githubNameRE().MatchString(r.Owner) || !githubNameRE().MatchString(r.Repo) {
		return ""
	}
	return fmt.Sprintf("https://%s/%s/%s/issues/%d", host, r.Owner, r.Repo, r.Number)
}

// TmuxSessionName is name as tmux spells a session: every '.' and ':' (its
// own target syntax) becomes '_'. Idempotent, not injective.
func TmuxSessionName(name string) string {
	return strings.NewReplacer(".", "_", ":", "_").Replace(name)
}

// WorkItemTarget is what the runner's work-item entry points address: the
// ref (for refusals and logs) and the tmux session recorded for it.
type WorkItemTarget struct {
	Ref        string
	TmuxTarget string
}

// WorkItemRunner is the runner's work-item entry points (original §2.7): each
// keeps its work-item refusals and delegates to the target-addressed
// operation of Runner.
type WorkItemRunner interface {
	// Spawn starts spec in the work item's tmux session (SpawnIn on
	// item.TmuxTarget()).
	Spawn(ctx context.Context, item WorkItemRef, spec SpawnSpec) error
	// Deliver refuses a session with no recorded or no live tmux session
	// (ENOTFOUND), then pastes text (DeliverTo, submitDelay as there).
	Deliver(ctx context.Context, sess WorkItemTarget, text string, submitDelay time.Duration) error
	// Kill kills the session's tmux session (KillTarget).
	Kill(ctx context.Context, sess WorkItemTarget) error
	// TerminateHarness ends the pane's process tree (TerminateHarnessIn,
	// labelled with the ref).
	TerminateHarness(ctx context.Context, sess WorkItemTarget, grace time.Duration) error
}

// WorkItemInfo is a record's workItem object (original §4.2).
type WorkItemInfo struct {
	Ref      string `json:"ref"`
	Provider string `json:"provider"`
	Owner    string `json:"owner"`
	Repo     string `json:"repo"`
	Number   int    `json:"number"`
}

// WorkItemRow is one work-item session as `sessions list` and the REST API
// show it: the original's record fields, its flat ref, its control record
// (always null: the Go version keeps none) and whether its pane runs.
type WorkItemRow struct {
	Ref              string        `json:"ref"`
	WorkItem         WorkItemInfo  `json:"workItem"`
	Harness          string        `json:"harness"`
	HarnessSessionID string        `json:"harnessSessionId"`
	Cwd              string        `json:"cwd"`
	Status           SessionStatus `json:"status"`
	CreatedAt        string        `json:"createdAt"`
	LastEventAt      *string       `json:"lastEventAt"`
	TmuxTarget       string        `json:"tmuxTarget"`
	RecentDeliveries []string      `json:"recentDeliveries"`
	URL              string        `json:"url,omitempty"`
	Control          any           `json:"control"`
	Running          bool          `json:"running"`
	// Detail says why a broken record (status broken) could not be read.
	Detail string `json:"detail,omitempty"`
	// Activity, ActivityAt, LastAnswerAt and Tokens are as on StandingRow.
	Activity     Activity   `json:"activity"`
	ActivityAt   string     `json:"activityAt"`
	LastAnswerAt string     `json:"lastAnswerAt"`
	Tokens       TokenUsage `json:"tokens"`
}

// WorkItemStartRequest is what `sessions start` asks for (REST's
// POST /api/v1/sessions/start body). Empty fields take the record's value,
// then the config's default; an empty prompt names the work item. Slack
// announces the session in channels.slack.channel and binds the thread to
// the ref, unless the work item already has a thread.
type WorkItemStartRequest struct {
	Ref     string `json:"ref"`
	Harness string `json:"harness"`
	Cwd     string `json:"cwd"`
	Prompt  string `json:"prompt"`
	Slack   bool   `json:"slack,omitempty"`
}

// WorkItemStartResult is what a start returns: its outcome (started,
// resumed, already-running or failed), the session's row when there is one,
// the exit code the CLI uses and the lines it prints.
type WorkItemStartResult struct {
	WorkItem string       `json:"workItem"`
	Outcome  string       `json:"outcome"`
	Session  *WorkItemRow `json:"session,omitempty"`
	ExitCode int          `json:"exitCode"`
	Messages []Message    `json:"messages"`
}

// ReplyResult is what a reply returns (original §10.2).
type ReplyResult struct {
	WorkItem  string `json:"workItem"`
	Delivered bool   `json:"delivered"`
	// Outcome is one of the Say* outcomes, as a say's.
	Outcome string `json:"outcome"`
	// Reply is the turn's answer for a waiting reply ("" until answered).
	Reply    string    `json:"reply"`
	ExitCode int       `json:"exitCode"`
	Messages []Message `json:"messages"`
}

// CloseResult is what a close returns (the original's close_session).
type CloseResult struct {
	WorkItem string    `json:"workItem"`
	Closed   bool      `json:"closed"`
	ExitCode int       `json:"exitCode"`
	Messages []Message `json:"messages"`
}

// WorkItemReplyRequest is an operator's reply for a work item's running
// session (REST's POST /api/v1/sessions/reply body).
type WorkItemReplyRequest struct {
	Ref   string `json:"ref"`
	Text  string `json:"text"`
	Actor string `json:"actor"`
	// Wait and TimeoutSeconds are a say's (StandingSayRequest).
	Wait           bool    `json:"wait,omitempty"`
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
}

// WorkItemCloseRequest closes a work item's session (REST's POST
// /api/v1/sessions/close body).
type WorkItemCloseRequest struct {
	Ref string `json:"ref"`
	// KeepTmux keeps (true) or kills (false) its tmux session; nil uses
	// routing.tmux.keepSessionOnClose.
	KeepTmux *bool `json:"keepTmux,omitempty"`
}

// WorkItemService is the work-item session verbs.
type WorkItemService interface {
	// List returns every work-item session's row; status "" selects all,
	// else active, paused or closed. EINVALID for another status.
	List(ctx context.Context, status string) ([]WorkItemRow, error)
	// Get returns one work item's session. ENOTFOUND when none is
	// registered; EINVALID for a ref that is not a work item's.
	Get(ctx context.Context, ref string) (WorkItemRow, error)
	// Start starts a work item's session or resumes its conversation; a
	// start that failed is a result with outcome failed. EINVALID for a bad
	// ref, a standing ref or an unknown harness.
	Start(ctx context.Context, req WorkItemStartRequest) (WorkItemStartResult, error)
	// Reply delivers a reply into a work item's live session (it never
	// spawns one); a delivery that failed is a result with Delivered false.
	// EINVALID for a bad ref or an empty text; ENOTFOUND when no live
	// session takes it.
	Reply(ctx context.Context, req WorkItemReplyRequest) (ReplyResult, error)
	// Close ends a work item's session; one not active is a result with
	// Closed false. EINVALID for a bad ref.
	Close(ctx context.Context, req WorkItemCloseRequest) (CloseResult, error)
}

// WorkItemRecord is what the-loop keeps of a work item's session, in its
// own store bucket apart from standing sessions (original §4.2). JSON keys
// are the original's.
type WorkItemRecord struct {
	WorkItem         WorkItemInfo  `json:"workItem"`
	Harness          string        `json:"harness"`
	HarnessSessionID string        `json:"harnessSessionId"`
	Cwd              string        `json:"cwd"`
	Status           SessionStatus `json:"status"` // active | paused | closed
	CreatedAt        string        `json:"createdAt"`
	LastEventAt      string        `json:"lastEventAt"`
	TmuxTarget       string        `json:"tmuxTarget"`
	RecentDeliveries []string      `json:"recentDeliveries"`
	URL              string        `json:"url,omitempty"`
	// PullRequests is kept as stored (the original's nested endpoints).
	PullRequests json.RawMessage `json:"pullRequests,omitempty"`
	// TmuxSocket is the `-L` socket name the session was spawned on ("" is
	// the user's default server), so close never depends on the config.
	TmuxSocket string `json:"tmuxSocket,omitempty"`
	// Claim marks a start in flight; it is stored beside Status and never
	// shown as a status.
	Claim *Claim `json:"claim,omitempty"`
	// AgentTokenHash is the hex sha256 of the credential handed to the
	// agent of the current spawn (THE_LOOP_AGENT_TOKEN), replaced at every
	// spawn; the credential itself is never stored.
	AgentTokenHash string `json:"agentTokenHash,omitempty"`
	// Broken, set only on a record a list could not decode (Status
	// SessionBroken), says why, naming its key; it is never stored.
	Broken string `json:"-"`
	// Hearing is what its hooks told of the agent.
	Hearing
}
