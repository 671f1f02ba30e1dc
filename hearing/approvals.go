package hearing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// Approvals (decisions D35). A standing session's PermissionRequest hook
// runs `the-loop-hook … --await-decision`, which posts the payload to the
// service's permission route and waits on the answer: AwaitDecision
// records the request (the approvals bucket, standing.approval_requested,
// the session waiting, the attention post with the tool and its input)
// and holds the hook's request open — a goroutine on a channel, no
// polling — until one of:
//
//	Decide               allowed or denied: the hook prints the decision
//	the hook goes away   answered-at-terminal (a key answered the dialog: the CLI SIGTERMs its hook)
//	the call runs        answered-at-terminal (its PostToolUse came before the hook went away)
//	the wait ends        expired: the hook prints nothing, the dialog stays the terminal's
//	the session stops,   withdrawn
//	its turn ends, the
//	service shuts down
//
// Nothing is ever allowed by a timeout.

// approvalDesk holds the waiting hooks of one service, by approval id.
type approvalDesk struct {
	mu      sync.Mutex
	waiting map[string]*waiter
}

// waiter is one held PermissionRequest hook. Whoever takes it from the
// desk (take) settles it: a decider, the wait's end, the hook's going
// away, a withdrawal.
type waiter struct {
	id, session, promptID, hash string
	answer                      chan loop.ApprovalAnswer // buffered: a settler never blocks
	withdrawn                   chan struct{}            // closed by withdraw
	requested                   time.Time
}

// put registers w.
func (d *approvalDesk) put(w *waiter) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.waiting == nil {
		d.waiting = map[string]*waiter{}
	}
	d.waiting[w.id] = w
}

// take removes and returns the waiter of id (nil when none waits: it was
// settled already, or its service went away).
func (d *approvalDesk) take(id string) *waiter {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.waiting[id]
	delete(d.waiting, id)
	return w
}

// giveBack puts w back after a settler that took it failed to record its
// settling.
func (d *approvalDesk) giveBack(w *waiter) { d.put(w) }

// of lists the ids waiting for session ("": all).
func (d *approvalDesk) of(session string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ids []string
	for id, w := range d.waiting {
		if session == "" || w.session == session {
			ids = append(ids, id)
		}
	}
	return ids
}

// takeRan removes and returns the waiter of session for the call of
// promptID whose input hashes to hash (nil when none waits).
func (d *approvalDesk) takeRan(session, promptID, hash string) *waiter {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, w := range d.waiting {
		if w.session == session && w.promptID == promptID && w.hash == hash {
			delete(d.waiting, id)
			return w
		}
	}
	return nil
}

// permissionPayload is what AwaitDecision reads of a PermissionRequest
// payload (docs/claude-code.md, "Permissions").
type permissionPayload struct {
	SessionID string          `json:"session_id"`
	Event     string          `json:"hook_event_name"`
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	Cwd       string          `json:"cwd"`
	PromptID  string          `json:"prompt_id"`
}

// approvalWait is how long a hook is held (standingSessions.approvals.waitSeconds).
func (s *Hearer) approvalWait() time.Duration {
	if s.ApprovalWait != nil {
		if w := s.ApprovalWait(); w > 0 {
			return w
		}
	}
	return loop.DefaultApprovalWait
}

// newApprovalID is a short random id, typed by deciders: 8 hex digits.
func newApprovalID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// AwaitDecision records d, a PermissionRequest hook's delivery, as a
// pending approval of its standing session, calls held (nil: nothing) once
// the request is recorded and waits until it is settled (see the top of
// this file); the answer is what the hook prints. A
// payload it cannot take as one — another event, a work item's session,
// an unknown session or conversation — is applied as an ordinary hook
// (the session counted waiting, as for Codex's) and answered with no
// behavior: the dialog is the terminal's.
func (s *Hearer) AwaitDecision(ctx context.Context, stateRoot string, d loop.HookDelivery, held func()) (loop.ApprovalAnswer, error) {
	var p permissionPayload
	name, standing := loop.ParseStandingRef(d.Session)
	if json.Unmarshal(d.Payload, &p) != nil || p.Event != "PermissionRequest" || !standing || d.Truncated {
		return loop.ApprovalAnswer{}, s.ApplyHook(ctx, stateRoot, d)
	}
	w := &waiter{session: name, promptID: p.PromptID, hash: loop.HashToolInput(p.ToolInput),
		answer: make(chan loop.ApprovalAnswer, 1), withdrawn: make(chan struct{}), requested: s.now()}
	var taken bool
	err := s.DB.Batch(func(tx *store.Tx) error {
		var err error
		taken, err = s.requestIn(tx, d, p, w)
		return err
	})
	defer s.heard.broadcast()
	if err != nil {
		s.desk.take(w.id)
		return loop.ApprovalAnswer{}, err
	}
	if !taken {
		s.desk.take(w.id)
		return loop.ApprovalAnswer{}, nil
	}
	if held != nil {
		held()
	}
	timer := time.NewTimer(s.approvalWait())
	defer timer.Stop()
	select {
	case a := <-w.answer:
		return a, nil
	case <-w.withdrawn:
		return loop.ApprovalAnswer{}, nil
	case <-timer.C:
		return s.settle(w, loop.ApprovalExpired, "")
	case <-ctx.Done():
		return s.settle(w, loop.ApprovalAtTerminal, "terminal")
	}
}

// requestIn records the approval of p in tx and registers w: taken false
// when the session or its conversation is not one to ask for (an ignored
// hook's event is written instead).
func (s *Hearer) requestIn(tx *store.Tx, d loop.HookDelivery, p permissionPayload, w *waiter) (bool, error) {
	h, why, err := s.hookedIn(tx, d.Session)
	if err != nil {
		return false, err
	}
	if h == nil || p.SessionID == "" || p.SessionID != *h.id || h.stopping {
		if h != nil && why == "" {
			why = "the payload's session_id is not the session's recorded conversation, or the session is stopping"
		}
		return false, tx.AppendEvent(ptr(s.event("hook.ignored", loop.LevelWarning, loop.F("session", d.Session),
			loop.F("hook_event_name", p.Event), loop.F("why", why))))
	}
	if w.id == "" { // a batch may run this again: one id per request
		for {
			w.id = newApprovalID()
			if a, err := tx.Approval(w.id); err != nil || a == nil {
				break
			}
		}
		s.desk.put(w)
	}
	input, cut := p.ToolInput, false
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	if len(input) > loop.MaxApprovalInput {
		input, cut = cutInput(input), true
	}
	a := &loop.Approval{ID: w.id, Session: w.session, Tool: p.ToolName, Input: input, InputTruncated: cut, InputHash: w.hash,
		Cwd: p.Cwd, PromptID: p.PromptID, ConversationID: p.SessionID, RequestedAt: s.stamp(), Status: loop.ApprovalPending}
	if err := tx.PutApproval(a); err != nil {
		return false, err
	}
	if h.thread != "" {
		s.post(h.hear, loop.OutgoingPost{Kind: loop.PostAttention, Approval: a.ID, Text: ApprovalPostText(a), At: s.stamp()})
	}
	if h.hear.Activity != loop.ActivityExited {
		s.setActivity(h.hear, loop.ActivityWaiting)
	}
	if err := h.put(); err != nil {
		return false, err
	}
	return true, tx.AppendEvent(ptr(s.turnEvent(h, "approval_requested", loop.F("id", a.ID), loop.F("tool", a.Tool),
		loop.F("prompt_id", a.PromptID))))
}

// cutInput is a tool input past MaxApprovalInput kept as a JSON string of
// its first part, so the record stays JSON.
func cutInput(input json.RawMessage) json.RawMessage {
	cut := loop.MaxApprovalInput
	for cut > 0 && !utf8.RuneStart(input[cut]) {
		cut--
	}
	out, _ := json.Marshal(string(input[:cut]))
	return out
}

// MaxDecidableText is how much of an input an approver is shown in a
// Slack post (redacted): a longer one cannot be decided from Slack.
const MaxDecidableText = 3000

// ApprovalInputText is what an approver reads of a's input: a Bash
// command as it is, a file tool's path, else the input's JSON.
func ApprovalInputText(a *loop.Approval) string {
	var in map[string]any
	if json.Unmarshal(a.Input, &in) == nil {
		if c, ok := in["command"].(string); ok && a.Tool == "Bash" {
			return c
		}
	}
	return string(a.Input)
}

// ApprovalPostText is the attention post of a pending approval: the tool,
// its input in a code block (cut at MaxDecidableText, and then said to be
// undecidable from Slack) and how to answer.
func ApprovalPostText(a *loop.Approval) string {
	text := ApprovalInputText(a)
	var b strings.Builder
	fmt.Fprintf(&b, "The agent asks to use %s (approval %s):\n```\n", a.Tool, a.ID)
	if len(text) > MaxDecidableText || a.InputTruncated {
		cut := min(len(text), MaxDecidableText)
		for cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut--
		}
		fmt.Fprintf(&b, "%s\n```\nThe input is longer than %d characters: decide it with `the-loop standing approvals %s` and approve or deny there.", text[:cut], MaxDecidableText, a.Session)
		return b.String()
	}
	fmt.Fprintf(&b, "%s\n```\nReply `approve %s` or `deny %s <reason>` in this thread.", strings.TrimRight(text, "\n"), a.ID, a.ID)
	return b.String()
}

// settle ends w's wait as status (expired, answered-at-terminal or
// withdrawn), unless a settler took it first: then that settler's answer
// is the hook's.
func (s *Hearer) settle(w *waiter, status, by string) (loop.ApprovalAnswer, error) {
	if s.desk.take(w.id) == nil {
		select {
		case a := <-w.answer:
			return a, nil
		case <-w.withdrawn:
			return loop.ApprovalAnswer{}, nil
		}
	}
	err := s.DB.Update(func(tx *store.Tx) error { return s.endIn(tx, w, status, by) })
	return loop.ApprovalAnswer{}, err
}

// endIn records w's approval as status in tx, with its event; a hook gone
// away while the session stops is withdrawn, not answered at the
// terminal (the stop ended the agent and its hook).
func (s *Hearer) endIn(tx *store.Tx, w *waiter, status, by string) error {
	a, err := tx.Approval(w.id)
	if err != nil || a == nil || a.Status != loop.ApprovalPending {
		return err
	}
	rec, err := tx.Standing(w.session)
	if err != nil {
		return err
	}
	if status == loop.ApprovalAtTerminal && (rec == nil || rec.Claim != nil && rec.Claim.Op == "stop" || rec.Status == loop.StatusStopped) {
		status, by = loop.ApprovalWithdrawn, ""
	}
	a.Status, a.By, a.DecidedAt = status, by, s.stamp()
	if err := tx.PutApproval(a); err != nil {
		return err
	}
	seconds := int(s.now().Sub(w.requested).Round(time.Second) / time.Second)
	subject := loop.F("standing", w.session)
	if status == loop.ApprovalAtTerminal {
		if rec.Hearing.Activity == loop.ActivityWaiting { // a key answered: idle unless a PostToolUse follows
			s.setActivity(&rec.Hearing, loop.ActivityIdle)
			if err := tx.PutStanding(rec); err != nil {
				return err
			}
		}
		return tx.AppendEvent(ptr(s.event("standing.approval_decided", loop.LevelInfo, subject, loop.F("id", a.ID),
			loop.F("decision", status), loop.F("by", by), loop.F("seconds", seconds))))
	}
	name := "standing.approval_expired"
	if status == loop.ApprovalWithdrawn {
		name = "standing.approval_withdrawn"
	}
	return tx.AppendEvent(ptr(s.event(name, loop.LevelInfo, subject, loop.F("id", a.ID), loop.F("seconds", seconds))))
}

// Decide decides the pending approval id as by (loop.ApprovalService):
// the decision is recorded with standing.approval_decided, and the waiting
// hook prints it — a deny's message framed with who denied
// (loop.FrameDeny).
func (s *Hearer) Decide(ctx context.Context, id string, d loop.ApprovalDecision, by string) (loop.Approval, error) {
	status := map[string]string{loop.DecisionAllow: loop.ApprovalAllowed, loop.DecisionDeny: loop.ApprovalDenied}[d.Decision]
	switch {
	case status == "":
		return loop.Approval{}, loop.Invalid("decision %q is not one: send allow or deny", d.Decision)
	case len(d.Message) > loop.MaxDenyMessage:
		return loop.Approval{}, loop.Invalid("the message is %d bytes; a deny's message is at most %d bytes: shorten it", len(d.Message), loop.MaxDenyMessage)
	case d.Decision == loop.DecisionAllow && d.Message != "":
		return loop.Approval{}, loop.Invalid("an allow carries no message (the model reads a deny's only); drop the message")
	}
	w := s.desk.take(id)
	var out loop.Approval
	err := s.DB.Update(func(tx *store.Tx) error {
		a, err := tx.Approval(id)
		switch {
		case err != nil:
			return err
		case a == nil:
			return loop.NotFound("no approval %q is recorded: `the-loop standing approvals` lists them", id)
		case d.Session != "" && a.Session != d.Session:
			return loop.Conflict("approval %s is standing session %s's, not %s's", id, a.Session, d.Session)
		case a.Status != loop.ApprovalPending:
			return loop.Conflict("approval %s of standing session %s is %s already (%s); nothing is decided twice", id, a.Session, a.Status, describeEnd(a))
		case w == nil:
			return loop.Conflict("approval %s of standing session %s is pending but no hook of this service waits for it (the service restarted); the dialog is the terminal's: `the-loop attach %s`", id, a.Session, a.Session)
		case w.session != a.Session || w.promptID != a.PromptID || w.hash != a.InputHash:
			return loop.Conflict("approval %s does not bind to the request its hook holds (session, prompt id or input differ); nothing is decided", id)
		}
		a.Status, a.By, a.DecidedAt, a.Message = status, by, s.stamp(), d.Message
		if err := tx.PutApproval(a); err != nil {
			return err
		}
		out = *a
		if err := s.resumeWork(tx, a.Session); err != nil {
			return err
		}
		seconds := int(s.now().Sub(w.requested).Round(time.Second) / time.Second)
		return tx.AppendEvent(ptr(s.event("standing.approval_decided", loop.LevelInfo, loop.F("standing", a.Session), loop.F("id", a.ID),
			loop.F("decision", d.Decision), loop.F("by", by), loop.F("seconds", seconds))))
	})
	if err != nil {
		if w != nil {
			s.desk.giveBack(w)
		}
		return loop.Approval{}, err
	}
	answer := loop.ApprovalAnswer{ID: id, Behavior: d.Decision}
	if d.Decision == loop.DecisionDeny {
		answer.Message = loop.FrameDeny(by, d.Message, loop.DenyNonce(d.Message))
	}
	w.answer <- answer
	return out, nil
}

// resumeWork marks session working again in tx when its approval was
// decided while it waited: the dialog is answered and the turn goes on
// (its PostToolUse or Stop follows), so a say is not refused meanwhile as
// into a dialog.
func (s *Hearer) resumeWork(tx *store.Tx, session string) error {
	rec, err := tx.Standing(session)
	if err != nil || rec == nil || rec.Hearing.Activity != loop.ActivityWaiting {
		return err
	}
	s.setActivity(&rec.Hearing, loop.ActivityWorking)
	return tx.PutStanding(rec)
}

// describeEnd says how a settled approval ended, for a refusal.
func describeEnd(a *loop.Approval) string {
	switch {
	case a.By != "":
		return "by " + a.By + " at " + a.DecidedAt
	case a.DecidedAt != "":
		return "at " + a.DecidedAt
	}
	return "no hook holds it"
}

// Approvals lists the approvals of session ("": all), pending first
// (loop.ApprovalService). A pending one that no hook of this process
// holds is shown as it is stored: Decide refuses it.
func (s *Hearer) Approvals(ctx context.Context, session string) ([]loop.Approval, error) {
	if session != "" && !loop.ValidName(session) {
		return nil, loop.Invalid("invalid standing-session name '%s' (expected %s)", session, loop.NameRE)
	}
	var list []*loop.Approval
	err := s.DB.View(func(tx *store.Tx) (err error) {
		list, err = tx.ListApprovals(session)
		return err
	})
	out := make([]loop.Approval, len(list))
	for i, a := range list {
		out[i] = *a
	}
	return out, err
}

// Withdraw ends every wait of session ("": every session's) as withdrawn:
// its hook prints nothing. The service calls it when a session stops and
// when it shuts down; a turn's end or an agent's exit heard calls it too.
func (s *Hearer) Withdraw(session string) { s.withdrawBefore(session, time.Time{}) }

// withdrawBefore is Withdraw of the waits requested before cutoff (zero:
// every one): a turn's Stop ends the requests of that turn, never one a
// later turn made while the Stop was being applied.
func (s *Hearer) withdrawBefore(session string, cutoff time.Time) {
	for _, id := range s.desk.of(session) {
		w := s.desk.take(id)
		if w == nil {
			continue
		}
		if !cutoff.IsZero() && !w.requested.Before(cutoff) {
			s.desk.giveBack(w)
			continue
		}
		_ = s.DB.Update(func(tx *store.Tx) error { return s.endIn(tx, w, loop.ApprovalWithdrawn, "") })
		close(w.withdrawn)
	}
}

// RanAtTerminal settles the pending approval of session's call that ran
// without a decision (its PostToolUse: the prompt id and the input are
// the request's) as answered at the terminal — a key won, and the hook
// has not gone away yet: it prints nothing.
func (s *Hearer) RanAtTerminal(session, promptID string, input json.RawMessage) {
	if len(input) == 0 {
		return
	}
	w := s.desk.takeRan(session, promptID, loop.HashToolInput(input))
	if w == nil {
		return
	}
	_ = s.DB.Update(func(tx *store.Tx) error { return s.endIn(tx, w, loop.ApprovalAtTerminal, "terminal") })
	close(w.withdrawn)
}

// WithdrawStale records every pending approval that no hook of this
// process holds as withdrawn: at a service's start, the ones its
// predecessor held (their hooks lost their connection with it).
func (s *Hearer) WithdrawStale() error {
	return s.DB.Update(func(tx *store.Tx) error {
		list, err := tx.ListApprovals("")
		if err != nil {
			return err
		}
		held := map[string]bool{}
		for _, id := range s.desk.of("") {
			held[id] = true
		}
		for _, a := range list {
			if a.Status != loop.ApprovalPending || held[a.ID] {
				continue
			}
			a.Status, a.DecidedAt = loop.ApprovalWithdrawn, s.stamp()
			if err := tx.PutApproval(a); err != nil {
				return err
			}
			if err := tx.AppendEvent(ptr(s.event("standing.approval_withdrawn", loop.LevelInfo, loop.F("standing", a.Session),
				loop.F("id", a.ID), loop.F("why", "the service that held it went away")))); err != nil {
				return err
			}
		}
		return nil
	})
}
