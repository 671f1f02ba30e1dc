package loop

import (
	"context"
	"strings"
	"time"
)

// CompareTS orders two Slack message timestamps ("1700000000.000100")
// numerically: -1, 0 or 1. An empty ts sorts first. Thread bindings,
// cursors and replies are ordered by it.
func CompareTS(a, b string) int {
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	ai, bi = strings.TrimLeft(ai, "0"), strings.TrimLeft(bi, "0")
	if len(ai) != len(bi) {
		if len(ai) < len(bi) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
	}
	for len(af) < len(bf) {
		af += "0"
	}
	for len(bf) < len(af) {
		bf += "0"
	}
	return strings.Compare(af, bf)
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

// Announcement is what a session's Slack announcement is about: a standing
// session (Name) or a work item's (WorkItem).
type Announcement struct {
	Name     string // the standing session's name
	WorkItem string // the work item's ref, for a work item's session
	Harness  string
	Target   string // its tmux session
	Channel  string // the channel id to post in: the entry's slack.channel, else channels.slack.channel
}
