package loop

import (
	"context"
	"time"
)

// The services the surfaces (REST, MCP, the CLI, the Slack pipeline) use.
// lifecycle implements them in-process, the SDK (sdk.Client) over REST, and
// mock/ with function fields for tests; cmd/the-loop picks one once. Each
// method's doc names the error codes it returns beyond EINTERNAL, which
// any of them may return (a store, tmux or transport failure).

// Control verbs of StandingControlRequest.Verb.
const (
	VerbStart   = "start"
	VerbStop    = "stop"
	VerbRestart = "restart"
)

// StandingControlRequest is a control verb on one standing session or on
// all of them (REST's POST /api/v1/standing-sessions/control body).
type StandingControlRequest struct {
	// Name is the session; "" means every one (start and stop only).
	Name string `json:"name"`
	// Verb is VerbStart, VerbStop or VerbRestart.
	Verb string `json:"verb"`
	// AutoOnly keeps, for a start of every session, the auto-starting ones
	// (what `the-loop start` starts).
	AutoOnly bool `json:"autoOnly"`
}

// StandingSayRequest is a message for a running standing session (REST's
// POST /api/v1/standing-sessions/say body).
type StandingSayRequest struct {
	Name string `json:"name"`
	Text string `json:"text"`
	// Actor is who speaks, recorded for audit and never trusted ("" is the
	// local OS user in-process).
	Actor string `json:"actor"`
	// Wait waits for the turn's answer (Reply); the session's harness must
	// have hooks.
	Wait bool `json:"wait,omitempty"`
	// TimeoutSeconds bounds the wait (0: DefaultSayWait).
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	// Caller is the agent whose credential carries the say ("" for the
	// operator's): the service sets it from the credential, never from a
	// body, and the message is framed as that agent's.
	Caller *AgentIdentity `json:"-"`
	// AnswerToThread asks that the turn's answer be posted in the session's
	// Slack thread (the Slack pipeline, with postReplies).
	AnswerToThread bool `json:"-"`
}

// DefaultSayWait is how long a waiting say waits for its answer when no
// timeout is given.
const DefaultSayWait = 5 * time.Minute

// StandingDeleteRequest names a created standing session to stop and
// forget (REST's POST /api/v1/standing-sessions/delete body).
type StandingDeleteRequest struct {
	Name string `json:"name"`
}

// StandingService is the standing-session verbs.
type StandingService interface {
	// List returns every declared or recorded standing session's row,
	// sorted by name. EINVALID when standingSessions does not parse.
	List(ctx context.Context) ([]StandingRow, error)
	// Get returns one session's row. ENOTFOUND when it is neither declared
	// nor recorded; EINVALID for a name that is not one.
	Get(ctx context.Context, name string) (StandingRow, error)
	// Create records (and unless req.Start is false, starts) a runtime
	// session. EINVALID for an invalid name or one already declared or
	// created (decisions D7), or standing sessions disabled.
	Create(ctx context.Context, req StandingCreateRequest) (StandingControlResult, error)
	// Delete stops and forgets a created session. ENOTFOUND for a name
	// never created; EINVALID for a declared one.
	Delete(ctx context.Context, req StandingDeleteRequest) (StandingControlResult, error)
	// Control starts, stops or restarts one session or all of them; a row
	// that failed is a result with OK false, not an error. EINVALID for an
	// unknown verb, a restart without a name or an invalid name; ENOTFOUND
	// for a name neither declared nor recorded.
	Control(ctx context.Context, req StandingControlRequest) (StandingControlResult, error)
	// Say delivers a message to a running session; a delivery that failed
	// is a result with Delivered false. EINVALID for an empty text or an
	// invalid name; ENOTFOUND for a session that is not running.
	Say(ctx context.Context, req StandingSayRequest) (SayResult, error)
	// Status returns the status rows (decisions D6) and whether every
	// session that should run does. It returns no error code of its own: a
	// session it cannot read is a failed row.
	Status(ctx context.Context) (rows []StandingRow, ok bool, err error)
	// Transcript returns the last `last` entries (0: 20; at most 1000) of
	// the session's recorded conversation, its user prompts and assistant
	// answers, oldest first; a session not started yet, or whose
	// transcript file is missing or half-written, has none (Entries []).
	// It only reads: no event, no claim. ENOTFOUND when the session is
	// neither declared nor recorded; EINVALID for an invalid name, a
	// `last` out of range or a harness whose transcript the-loop cannot
	// read.
	Transcript(ctx context.Context, name string, last int) (TranscriptResult, error)
	// Peek returns the last `lines` lines (0: 40; at most 2000) of the
	// session's own agent pane, the history included, and where it runs
	// (a dead pane too: Running false). It only reads. ENOTFOUND when the
	// session was never started or has no pane of the-loop's (absent, or
	// another program's under its name); EINVALID for an invalid name or
	// `lines` out of range.
	Peek(ctx context.Context, name string, lines int) (PeekResult, error)
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

// EventQuery selects events from the log (the filters of `the-loop
// events` and GET /api/v1/events). Its zero value selects every event.
type EventQuery struct {
	// Types are event-name patterns (path.Match syntax, "standing.*");
	// an event matching any of them is selected.
	Types []string `json:"type,omitempty"`
	// Standing selects events of one standing session (field standing).
	Standing string `json:"standing,omitempty"`
	// WorkItem selects events of one work item; "standing:<name>" also
	// selects that standing session's events (decisions D19).
	WorkItem string `json:"workItem,omitempty"`
	// Level is a minimum level: debug, info, warning or error.
	Level string `json:"level,omitempty"`
	// Since is an ISO-8601 time or an age (30s, 15m, 2h, 7d).
	Since string `json:"since,omitempty"`
	// Limit keeps the last Limit matching events; 0 means all. With After
	// above zero, or Forward, it keeps the first Limit after After: a page.
	Limit int `json:"limit,omitempty"`
	// After selects events whose sequence number is above it: to follow
	// the log, ask again with After set to the last Seq seen.
	After uint64 `json:"after,omitempty"`
	// Forward pages from After even when it is zero (the log's start):
	// Limit keeps the oldest events after After rather than the newest.
	Forward bool `json:"forward,omitempty"`
}

// EventLog reads the event log.
type EventLog interface {
	// Events returns the events q selects, oldest first, each with its
	// Seq. EINVALID for a bad level, pattern or since.
	Events(ctx context.Context, q EventQuery) ([]Event, error)
}

// EventWriter appends events that accompany no state change (api.request,
// a Slack rate limit, a mirrored reply).
type EventWriter interface {
	// NewEvent builds an envelope stamped with the writer's clock, source
	// and pid.
	NewEvent(name, level string, fields ...Field) Event
	// Emit appends evs in one transaction. Only EINTERNAL.
	Emit(evs ...Event) error
}

// BoundThread is a Slack thread bound to a work item or a standing session
// ("standing:<name>"), with the ts of the last reply processed in it (the
// thread's own ts when none has been).
type BoundThread struct {
	ThreadTS string
	// Ref is the work item's or standing session's ref; "" is a tombstone
	// (its session was deleted).
	Ref     string
	Channel string
	Cursor  string
	// Closed reports that Ref is a work item whose session is closed.
	Closed bool
}

// ThreadLog is what the Slack inbound pipeline needs of the store: the
// bound threads and recording a reply at most once (decisions D25).
type ThreadLog interface {
	EventWriter
	// Threads returns every bound thread with its cursor, oldest binding
	// first. Only EINTERNAL.
	Threads(ctx context.Context) ([]BoundThread, error)
	// RecordReply takes the reply ts of thread threadTS for processing, at
	// most once: in one transaction it resolves the thread's binding now,
	// advances its cursor to ts and appends the events decide returns for
	// the bound ref ("" when the thread is no longer bound). taken is false,
	// and nothing is written, when the cursor is at or past ts. decide runs
	// inside the write transaction: it must only build events. Only
	// EINTERNAL.
	RecordReply(ctx context.Context, threadTS, ts string, decide func(ref string) []Event) (ref string, taken bool, err error)
	// PendingReplies returns the replies kept for sessions that could not
	// take them yet, oldest first. Only EINTERNAL.
	PendingReplies(ctx context.Context) ([]PendingReply, error)
	// Waiting is how many replies thread keeps for its session: a new
	// reply there waits behind them. Only EINTERNAL.
	Waiting(ctx context.Context, thread string) (int, error)
	// KeepReply keeps pr for a later delivery and appends kept in the same
	// transaction; when its thread or the store keeps as many replies as
	// they may (MaxPendingPerThread, MaxPending), nothing is kept, full is
	// appended instead and ok is false. A reply TakeReply took goes back in
	// its place (pr.Seq set). Only EINTERNAL.
	KeepReply(ctx context.Context, pr PendingReply, kept, full []Event) (ok bool, err error)
	// TakeReply takes the reply kept under seq for a delivery attempt: in
	// one transaction it removes it, resolves its thread's binding now (ref
	// "" for a thread unbound or a tombstone) and appends the events decide
	// returns — before anything is pasted, so a crash after it loses the
	// reply rather than delivering it twice (decisions D25). It returns nil
	// when another cycle took the reply. decide runs inside the write
	// transaction: it must only build events. Only EINTERNAL.
	TakeReply(ctx context.Context, seq uint64, decide func(pr PendingReply, ref string) []Event) (taken *PendingReply, ref string, err error)
	// WorkItemOpen reports whether the work item ref has a session that is
	// not closed (one that may come back).
	WorkItemOpen(ctx context.Context, ref string) bool
	// TakePosts takes every post waiting in the standing sessions' outboxes
	// (answers, attention notes), each with its thread, in one transaction:
	// a crash after it loses a post rather than posting it twice. A post
	// of a session with no thread is dropped. Only EINTERNAL.
	TakePosts(ctx context.Context) ([]OutgoingPost, error)
	// ReturnPost puts a post that failed back in its session's outbox
	// (Attempts counted) for the next cycle. Only EINTERNAL.
	ReturnPost(ctx context.Context, p OutgoingPost) error
}

// Bounds of the replies kept for sessions that cannot take them yet.
const (
	MaxPendingPerThread = 20
	MaxPending          = 200
)

// PendingReply is a Slack reply recorded (its thread's cursor is past it)
// but not yet delivered, because its session was stopped, restarting or
// not ready: it waits, in order, to be delivered once the session is back.
type PendingReply struct {
	// Seq orders the replies kept (assigned when first kept; the oldest
	// has the lowest).
	Seq      uint64
	Thread   string // the thread's ts
	TS       string // the reply's ts
	Ref      string // the ref the thread was bound to when the reply was recorded
	Channel  string
	Author   string // the member id
	Text     string
	QueuedAt time.Time // when it was first kept
	Attempts int       // deliveries tried since
	Error    string    // why the last try did not deliver
}

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

// Announcement is what a session's Slack announcement is about: a standing
// session (Name) or a work item's (WorkItem).
type Announcement struct {
	Name     string // the standing session's name
	WorkItem string // the work item's ref, for a work item's session
	Harness  string
	Target   string // its tmux session
	Channel  string // the channel id to post in: the entry's slack.channel, else channels.slack.channel
}
