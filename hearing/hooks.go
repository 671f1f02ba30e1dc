package hearing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/store"
)

// Hearing the agent. An agent CLI runs `the-loop hook` for each hook its
// adapter wires (loop.Harness.WireHooks; Claude Code's are
// harness.ClaudeHookEvents); the payload reaches ApplyHook through the service's hook
// route, or the store directly, or the spool (SpoolHook) when the store is
// locked. A payload is applied only to the session it names and only when
// its session_id is that session's recorded conversation (a SessionStart
// of source clear from the session's own agent process moves the record
// to the new conversation); it sets the record's activity, keeps its
// answers and token totals, and appends the turn events.

// MaxHookPayload is how much of a payload is kept; the rest is cut and the
// delivery marked truncated.
const MaxHookPayload = 1 << 20

// MaxKeptAnswer is how much of an answer's text the record keeps (its
// reply_chars counts the whole): every list decodes the record.
const MaxKeptAnswer = 64 << 10

// MaxSpoolBytes bounds the spool: past it the oldest files go (with a
// hook.spool_overflow event once a reader applies the spool).
const MaxSpoolBytes = 16 << 20

// transcriptTail is how many transcript entries a turn's end reads for its
// token totals.
const transcriptTail = 20

// HookPayload is what the-loop reads of a Claude Code hook payload (the
// keys of docs/claude-code.md).
type HookPayload struct {
	SessionID        string `json:"session_id"`
	Event            string `json:"hook_event_name"`
	Source           string `json:"source"`
	Reason           string `json:"reason"`
	PromptID         string `json:"prompt_id"`
	Prompt           string `json:"prompt"`
	LastMessage      string `json:"last_assistant_message"`
	Message          string `json:"message"`
	NotificationType string `json:"notification_type"`
	// ToolUseID names a PreToolUse's tool call.
	ToolUseID string `json:"tool_use_id"`
	// ToolInput is a PreToolUse's or PostToolUse's tool input.
	ToolInput json.RawMessage `json:"tool_input"`
	// Rule and RuleDecision are what an approval rule decided for a
	// PreToolUse (loop.RuleReport): its number and allow or deny.
	Rule         int    `json:"the_loop_rule"`
	RuleDecision string `json:"the_loop_decision"`
	// TurnID is Codex's turn id, the prompt id of its payloads.
	TurnID string `json:"turn_id"`
	// PromptResponse is the answer in a Gemini CLI AfterAgent payload.
	PromptResponse string `json:"prompt_response"`
	// ToolName names the tool a Codex PermissionRequest asks for.
	ToolName string `json:"tool_name"`
}

// ParseHookPayload reads a payload's fields; a truncated payload gives the
// fields that came before the cut. ok is false for anything that is not a
// hook payload (no hook_event_name).
func ParseHookPayload(data []byte) (p HookPayload, ok bool) {
	if err := json.Unmarshal(data, &p); err == nil {
		return canonicalHook(p), p.Event != ""
	}
	// Lenient: the top-level fields before the cut, one at a time.
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return HookPayload{}, false
	}
	fields := map[string]*string{"session_id": &p.SessionID, "hook_event_name": &p.Event, "source": &p.Source,
		"reason": &p.Reason, "prompt_id": &p.PromptID, "prompt": &p.Prompt, "message": &p.Message, "notification_type": &p.NotificationType,
		"turn_id": &p.TurnID, "tool_name": &p.ToolName}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			switch key { // the answer the cut went through: its first part
			case "last_assistant_message":
				p.LastMessage = cutString(data[dec.InputOffset():])
			case "prompt_response":
				p.PromptResponse = cutString(data[dec.InputOffset():])
			}
			break
		}
		if dst, ok := fields[key]; ok {
			_ = json.Unmarshal(v, dst)
		}
	}
	return canonicalHook(p), p.Event != ""
}

// cutString decodes what is left of a JSON string cut short (rest starts
// at its opening quote): as much of it as decodes.
func cutString(rest []byte) string {
	rest = bytes.TrimLeft(rest, " \t\r\n:")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	body := rest[1:]
	for drop := 0; drop <= 6 && drop <= len(body); drop++ { // a cut escape (\u00e9) decodes once dropped
		var out string
		if json.Unmarshal(append(append([]byte{'"'}, body[:len(body)-drop]...), '"'), &out) == nil {
			return out
		}
	}
	return ""
}

// hooked is one record as a hook sees it: either kind's.
type hooked struct {
	subject loop.Field
	prefix  string // the events' prefix: "standing" or "session"
	hear    *loop.Hearing
	id      *string // the recorded conversation id
	harness string  // the record's harness, whose adapter checks an id's shape
	claim   *loop.Claim
	cwd     string
	target  string
	socket  string
	thread  string // a standing session's Slack thread ("" when none)
	// captures: the harness chooses its own conversation id (codex), so a
	// fresh start's claim does not know it yet (adoptStart).
	captures bool
	// stopping: an operator's stop or close holds the record or has ended
	// the session; the agent's SessionEnd is that stop, not an exit.
	stopping bool
	// joins: a message submitted during a turn joins it (codex), no turn
	// of its own follows.
	joins bool
	put   func() error
}

// ApplyHook applies the spool under stateRoot (in order), then d. A spool
// refused by fileperm.CheckPrivatePath is left alone (the service reports it at its
// start, the hook command on every payload it would have spooled): d is
// applied all the same.
func (s *Hearer) ApplyHook(ctx context.Context, stateRoot string, d loop.HookDelivery) error {
	// A refusal is ApplySpool's only EINVALID error.
	if err := s.ApplySpool(ctx, stateRoot); err != nil && loop.ErrorCode(err) != loop.EINVALID {
		return err
	}
	return s.applyHook(ctx, d, "")
}

// checkSpool refuses a spool directory (or a directory above it, up to the
// state root) another user owns or others may write: an EINVALID error
// naming it.
func checkSpool(stateRoot string) error {
	return fileperm.CheckPrivatePath(stateRoot, SpoolDir(stateRoot), "hook spool")
}

// applyHook applies one delivery; seq, for a spooled one, is its file's
// name: a record that already applied it (or a later one) skips it.
func (s *Hearer) applyHook(ctx context.Context, d loop.HookDelivery, seq string) error {
	heard := s.now() // a Stop withdraws the requests made before it, not after
	p, ok := ParseHookPayload(d.Payload)
	if !ok {
		return s.emit(s.event("hook.ignored", loop.LevelWarning, loop.F("session", d.Session),
			loop.F("why", "the payload is not a Claude Code hook payload")))
	}
	if dropped, err := s.dropHook(d, p.Event, seq); dropped {
		return err
	}
	var panes []int
	if p.Event == "SessionStart" && (p.Source == "clear" || p.Source == "startup") {
		panes = s.panePIDsFor(ctx, d.Session, p.Source == "clear") // outside the transaction: a tmux call
	}
	if p.Event == "Stop" && seq == "" {
		s.awaitAnswer(ctx, d.Session, p.SessionID) // outside the transaction: it may wait
	}
	defer s.heard.broadcast() // a say waiting on this hook looks again
	ended := false            // an agent's SessionEnd applied: the supervisor looks now
	var refused error         // the payload's session_id is not its harness's id shape
	// A batch (store.DB.Batch): hooks heard at once share commits; the
	// function below may run again and sets only ended and refused.
	err := s.DB.Batch(func(tx *store.Tx) error {
		var err error
		ended, refused, err = s.applyIn(tx, d, p, seq, panes)
		return err
	})
	if err == nil && ended {
		s.ended()
	}
	if name, ok := loop.ParseStandingRef(d.Session); ok && err == nil {
		switch {
		case p.Event == "PostToolUse":
			s.RanAtTerminal(name, p.PromptID, p.ToolInput) // the call ran: a key answered its dialog
		case ended:
			s.Withdraw(name) // the agent's exit: every wait it left behind
		case p.Event == "Stop":
			s.withdrawBefore(name, heard) // a wait the turn's end left behind
		}
	}
	if err == nil && refused != nil {
		return refused
	}
	return err
}

// applyIn applies one delivery to its record in tx: ended reports an
// agent's SessionEnd applied (the supervisor looks now), refused a payload
// whose session_id is not its harness's id shape (its event written).
func (s *Hearer) applyIn(tx *store.Tx, d loop.HookDelivery, p HookPayload, seq string, panes []int) (ended bool, refused, err error) {
	h, why, err := s.hookedIn(tx, d.Session)
	if err != nil {
		return false, nil, err
	}
	if h == nil {
		return false, nil, tx.AppendEvent(ptr(s.event("hook.ignored", loop.LevelWarning, loop.F("session", d.Session),
			loop.F("hook_event_name", p.Event), loop.F("why", why))))
	}
	if skip, put := applied(h, d, seq); skip {
		if put {
			return false, nil, h.put()
		}
		return false, nil, nil
	}
	if refused = s.checkHookID(h, p); refused != nil {
		return false, refused, tx.AppendEvent(ptr(s.event(h.prefix+".id_refused", loop.LevelWarning, h.subject, loop.F("harness", h.harness),
			loop.F("hook_event_name", p.Event), loop.F("session_id", loop.QuoteID(p.SessionID)), loop.F("why", loop.ErrorMessage(refused)))))
	}
	evs, why := s.hear(h, p, d, panes)
	if why != "" {
		evs = []loop.Event{s.event("hook.ignored", loop.LevelWarning, h.subject, loop.F("hook_event_name", p.Event),
			loop.F("session_id", p.SessionID), loop.F("why", why))}
	}
	evs = hold(h, evs)
	if err := h.put(); err != nil {
		return false, nil, err
	}
	for i := range evs {
		if err := tx.AppendEvent(&evs[i]); err != nil {
			return false, nil, err
		}
	}
	return why == "" && p.Event == "SessionEnd" && p.Reason != "clear", nil, nil
}

// applied marks d applied to h's record — its spool file (seq) and its
// delivery id — and reports whether it was applied before (skip), and then
// whether the record must still be written (put: a spooled copy of a
// delivery applied by another road marks its file applied).
func applied(h *hooked, d loop.HookDelivery, seq string) (skip, put bool) {
	if seq != "" {
		if seq <= h.hear.HookSeq {
			return true, false // applied before its file was deleted
		}
		h.hear.HookSeq = seq
	}
	if d.ID != "" && len(d.ID) <= maxHookIDLen {
		if slices.Contains(h.hear.HookIDs, d.ID) {
			// Applied before, by another road: a POST that timed out
			// after the service applied it, then spooled. Its spool
			// file (seq) is still marked applied.
			return true, seq != ""
		}
		h.hear.HookIDs = append(slices.Clone(h.hear.HookIDs), d.ID)
		if n := len(h.hear.HookIDs); n > loop.MaxHookIDs {
			h.hear.HookIDs = h.hear.HookIDs[n-loop.MaxHookIDs:]
		}
	}
	return false, false
}

// checkHookID refuses a payload whose session_id is not a conversation id
// of the record's harness (loop.Harness.CheckSessionID): such an id is
// never compared, stored or adopted, and the record keeps its own. An
// empty session_id names no conversation and is left to hear, which
// ignores it.
func (s *Hearer) checkHookID(h *hooked, p HookPayload) error {
	if p.SessionID == "" {
		return nil
	}
	subject := h.subject.Value
	adapter, err := s.lookupHarness(h.harness, fmt.Sprint(subject))
	if err != nil {
		return loop.Invalid("hook %s for %v refused: its session_id %s cannot be checked (%s)",
			p.Event, subject, loop.QuoteID(p.SessionID), loop.ErrorMessage(err))
	}
	if err := adapter.CheckSessionID(p.SessionID); err != nil {
		return loop.Errorf(loop.EINVALID, "hook %s for %v refused: %w", p.Event, subject, err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// hold keeps, while a start holds h's record, the hooks' events in its
// claim (loop.Claim.Held, up to loop.MaxHeldEvents) and returns the ones
// to append now: the start's own event is written when it is recorded,
// and a turn of the spawned agent must not precede it.
func hold(h *hooked, evs []loop.Event) []loop.Event {
	if h.claim == nil || h.claim.Op != "start" || len(evs) == 0 {
		return evs
	}
	room := max(0, loop.MaxHeldEvents-len(h.claim.Held))
	n := min(room, len(evs))
	h.claim.Held = append(slices.Clone(h.claim.Held), evs[:n]...)
	return evs[n:]
}

// maxHookIDLen bounds a delivery id a record keeps; a longer one (not the
// hook command's) is not guarded.
const maxHookIDLen = 64

// hookedIn finds the record ref names (nil and why not when there is none).
func (s *Hearer) hookedIn(tx *store.Tx, ref string) (*hooked, string, error) {
	if name, ok := loop.ParseStandingRef(ref); ok {
		rec, err := tx.Standing(name)
		if err != nil || rec == nil {
			return nil, "no standing session '" + name + "' is recorded", err
		}
		return &hooked{subject: loop.F("standing", name), prefix: "standing", hear: &rec.Hearing, id: &rec.HarnessSessionID,
			claim: rec.Claim, cwd: rec.Cwd, harness: rec.Harness, target: loop.TmuxTargetFor(name), socket: rec.TmuxSocket, thread: rec.SlackThread,
			stopping: rec.Claim != nil && rec.Claim.Op == "stop" || rec.Status == loop.StatusStopped,
			captures: s.capturesID(rec.Harness, name), joins: s.joinsTurn(rec.Harness, name), put: func() error { return tx.PutStanding(rec) }}, "", nil
	}
	wref, err := loop.ParseWorkItemRef(ref)
	if err != nil {
		return nil, "the session ref is neither standing:<name> nor a work item's ref", nil
	}
	rec, err := tx.WorkItem(wref.Slug())
	if err != nil || rec == nil || rec.WorkItem.Ref != wref.String() {
		return nil, "no session of " + wref.String() + " is recorded", err
	}
	return &hooked{subject: loop.F("work_item", wref.String()), prefix: "session", hear: &rec.Hearing, id: &rec.HarnessSessionID,
		claim: rec.Claim, cwd: rec.Cwd, harness: rec.Harness, target: wref.TmuxTarget(), socket: rec.TmuxSocket, stopping: rec.Status == "closed",
		captures: s.capturesID(rec.Harness, wref.String()), joins: s.joinsTurn(rec.Harness, wref.String()),
		put: func() error { return tx.PutWorkItem(wref.Slug(), rec) }}, "", nil
}

// panePIDsFor is the pids of ref's agent pane (nil when unknown). Only a
// clear (any harness) or the startup of a harness whose id is captured
// (codex) needs them; always false skips the tmux call for the others, so
// the SessionStart of every Claude spawn costs no tmux round trip.
func (s *Hearer) panePIDsFor(ctx context.Context, ref string, always bool) []int {
	if s.Runner == nil {
		return nil
	}
	var target, socket string
	_ = s.DB.View(func(tx *store.Tx) error {
		h, _, err := s.hookedIn(tx, ref)
		if h != nil && (always || h.captures) {
			target, socket = h.target, h.socket
		}
		return err
	})
	if target == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	pids, _ := s.Runner(socket).PanePIDs(ctx, target)
	return pids
}

// hear applies p to h: the events it makes, or why it was ignored.
func (s *Hearer) hear(h *hooked, p HookPayload, d loop.HookDelivery, panes []int) ([]loop.Event, string) {
	known := p.SessionID != "" && (p.SessionID == *h.id || h.claim != nil && h.claim.Op == "start" &&
		(p.SessionID == h.claim.HarnessSessionID || p.SessionID == h.claim.HeardID))
	if !known && s.adoptStart(h, p, d, panes) {
		known = true
	}
	if !known {
		return s.heardClear(h, p, d, panes)
	}
	switch p.Event {
	case "SessionStart":
		if p.Source != "compact" {
			s.setActivity(h.hear, loop.ActivityIdle)
			h.hear.TurnPromptID, h.hear.Queued = "", 0
		}
	case "UserPromptSubmit":
		return s.heardPrompt(h, p, d), ""
	case "PostToolUse":
		s.setActivity(h.hear, loop.ActivityWorking)
	case "PreToolUse":
		return s.heardRule(h, p), ""
	case "Notification":
		return s.heardNotification(h, p), ""
	case "Stop":
		return s.heardStop(h, p, d), ""
	case "SessionEnd":
		return s.heardEnd(h, p), ""
	}
	return nil, ""
}

// turnEvent is the event <prefix>.what of h's session.
func (s *Hearer) turnEvent(h *hooked, what string, fields ...loop.Field) loop.Event {
	return s.event(h.prefix+"."+what, loop.LevelInfo, append([]loop.Field{h.subject}, fields...)...)
}

// heardClear follows a SessionStart of source clear from the session's own
// agent pane to its new conversation; any other payload of a conversation
// that is not the record's is ignored (why says so).
func (s *Hearer) heardClear(h *hooked, p HookPayload, d loop.HookDelivery, panes []int) ([]loop.Event, string) {
	if p.Event != "SessionStart" || p.Source != "clear" || p.SessionID == "" {
		return nil, fmt.Sprintf("session_id %q is not the recorded conversation %q", p.SessionID, *h.id)
	}
	if !slices.ContainsFunc(d.Parents, func(pid int) bool { return slices.Contains(panes, pid) }) {
		return nil, "a clear from a process outside the session's agent pane"
	}
	from := *h.id
	if h.hear.PaneTag == "" {
		h.hear.PaneTag = from // the pane keeps the tag it was spawned with
	}
	*h.id = p.SessionID
	h.hear.Tokens, h.hear.TokensThrough, h.hear.TurnPromptID, h.hear.Queued = nil, "", "", 0
	s.setActivity(h.hear, loop.ActivityIdle)
	return []loop.Event{s.turnEvent(h, "conversation_changed", loop.F("from", from), loop.F("harness_session_id", p.SessionID))}, ""
}

// heardPrompt keeps a UserPromptSubmit's prompt (its PromptSum) and starts
// its turn — or counts it queued into the running one.
func (s *Hearer) heardPrompt(h *hooked, p HookPayload, d loop.HookDelivery) []loop.Event {
	if p.PromptID == "" { // a CLI without prompt ids (gemini): the turn gets one of ours
		p.PromptID = "heard-" + s.newID()
	}
	queued := h.hear.TurnPromptID == p.PromptID && p.PromptID != "" &&
		(h.hear.Activity == loop.ActivityWorking || h.hear.Activity == loop.ActivityWaiting)
	// An id already answered: Claude's hook of a message queued into
	// that turn, heard after the turn's Stop (the hooks are separate
	// processes) — the message's own turn, under a new id its Stop will
	// carry, runs now, as a queued one does; Codex, which runs a message
	// queued during a turn under that turn's id, gives its new turn the
	// old id again: that turn gets one of its own.
	late := !queued && p.PromptID != "" && answered(h.hear, p.PromptID)
	if late && h.joins {
		p.PromptID += "#" + s.newID()
		late = false
	}
	s.setActivity(h.hear, loop.ActivityWorking)
	h.hear.Prompts = append(slices.Clone(h.hear.Prompts), loop.HeardPrompt{PromptID: p.PromptID, Sum: loop.PromptSum(p.Prompt), Queued: queued || late, Truncated: d.Truncated, At: s.stamp()})
	if n := len(h.hear.Prompts); n > loop.KeptAnswers {
		h.hear.Prompts = h.hear.Prompts[n-loop.KeptAnswers:]
	}
	switch {
	case late: // its turn is already the running one: no turn_started, no count
		return nil
	case queued && h.joins: // it joined the running turn, whose Stop answers it
		return nil
	case queued: // a message queued during the running turn: a turn of its own follows
		h.hear.Queued++
		return nil
	}
	h.hear.TurnPromptID = p.PromptID
	return []loop.Event{s.turnEvent(h, "turn_started", loop.F("prompt_id", p.PromptID))}
}

// dialogNotifications are the notification types of a dialog the agent
// waits in: a permission prompt (manual mode), auto mode's "can't check
// actions" No/Yes dialog (agent_needs_input, measured on 2.1.332), and an
// elicitation. idle_prompt, a minute after a turn, is none of them.
var dialogNotifications = []string{"permission_prompt", "agent_needs_input", "elicitation_dialog"}

// heardNotification records a notification; a dialog during a turn
// (dialogNotifications) makes the agent waiting, and the first of a waiting
// episode posts a needs-attention note in the session's thread.
func (s *Hearer) heardNotification(h *hooked, p HookPayload) []loop.Event {
	dialog := slices.Contains(dialogNotifications, p.NotificationType)
	if dialog && h.thread != "" && h.hear.Activity != loop.ActivityWaiting {
		// One needs-attention post per waiting episode.
		s.post(h.hear, loop.OutgoingPost{Kind: loop.PostAttention, Text: p.Message, At: s.stamp()})
	}
	if dialog && (h.hear.Activity == loop.ActivityWorking || h.hear.Activity == loop.ActivityWaiting) {
		s.setActivity(h.hear, loop.ActivityWaiting)
	}
	return []loop.Event{s.turnEvent(h, "attention", loop.F("message", p.Message), loop.F("notification_type", p.NotificationType))}
}

// heardRule records what an approval rule decided for a tool call (the
// PreToolUse hook's report): standing.approval_decided by rule:<n>, the
// call's tool_use_id its id; a PreToolUse with no rule's report is not
// recorded.
func (s *Hearer) heardRule(h *hooked, p HookPayload) []loop.Event {
	if p.RuleDecision != loop.RuleAllow && p.RuleDecision != loop.RuleDeny || p.Rule <= 0 {
		return nil
	}
	return []loop.Event{s.turnEvent(h, "approval_decided", loop.F("id", p.ToolUseID), loop.F("decision", p.RuleDecision),
		loop.F("by", fmt.Sprintf("rule:%d", p.Rule)), loop.F("seconds", 0), loop.F("tool", p.ToolName))}
}

// heardStop ends the running turn: its answer is kept (cut to
// MaxKeptAnswer), its tokens counted, a thread awaiting it answered, and a
// queued message's turn runs next.
func (s *Hearer) heardStop(h *hooked, p HookPayload, d loop.HookDelivery) []loop.Event {
	if p.PromptID == "" || strings.HasPrefix(h.hear.TurnPromptID, p.PromptID+"#") {
		// the running turn's (gemini: the id its BeforeAgent got; codex:
		// the one a reused turn id was given)
		p.PromptID = h.hear.TurnPromptID
	}
	h.hear.TurnPromptID = ""
	if h.hear.Queued > 0 { // the queued message's turn runs next (its prompt id is new)
		h.hear.Queued--
		s.setActivity(h.hear, loop.ActivityWorking)
	} else {
		s.setActivity(h.hear, loop.ActivityIdle)
	}
	answer := loop.Answer{PromptID: p.PromptID, Text: p.LastMessage, At: s.stamp(), Truncated: d.Truncated}
	if len(answer.Text) > MaxKeptAnswer { // every list decodes the record: keep it small
		cut := MaxKeptAnswer
		for cut > 0 && !utf8.RuneStart(answer.Text[cut]) {
			cut--
		}
		answer.Text, answer.Truncated = answer.Text[:cut], true
	}
	h.hear.Answers = append(slices.Clone(h.hear.Answers), answer)
	if n := len(h.hear.Answers); n > loop.KeptAnswers {
		h.hear.Answers = h.hear.Answers[n-loop.KeptAnswers:]
	}
	s.countTokens(h)
	s.answerAwaited(h, p.PromptID, answer.Text)
	return []loop.Event{s.turnEvent(h, "turn_ended", loop.F("prompt_id", p.PromptID), loop.F("reply_chars", utf8.RuneCountInString(p.LastMessage)))}
}

// heardEnd records an agent's SessionEnd (exited), unless it is a clear's
// (the same process goes on) or an operator's stop or close ended it (that
// verb records it).
func (s *Hearer) heardEnd(h *hooked, p HookPayload) []loop.Event {
	if p.Reason == "clear" { // the same process goes on in a new conversation
		return nil
	}
	s.setActivity(h.hear, loop.ActivityExited)
	h.hear.TurnPromptID, h.hear.Queued = "", 0
	if h.stopping { // the operator's stop or close ended it: that verb records it
		return nil
	}
	return []loop.Event{s.turnEvent(h, "exited", loop.F("reason", p.Reason))}
}

// answerWait bounds how long a Stop waits for Claude Code to write its
// turn's answer into the transcript: 2.1.332 writes it up to about 110 ms
// after its Stop hook began, as often after as before
// (docs/claude-code.md), and the token totals come from there.
const answerWait = 500 * time.Millisecond

// awaitAnswer waits, at most answerWait, until the transcript of ref's
// recorded conversation id holds an assistant entry with usage newer than
// the last one counted, so a Stop counts its own turn's tokens. There is
// no wait for another conversation id, nor when there is no transcript
// file (a harness or a fake agent without one).
func (s *Hearer) awaitAnswer(ctx context.Context, ref, id string) {
	var path, through string
	var adapter loop.Harness
	var cwd string
	_ = s.DB.View(func(tx *store.Tx) error {
		h, _, err := s.hookedIn(tx, ref)
		if h == nil || id == "" || id != *h.id || h.cwd == "" {
			return err
		}
		if adapter = s.hookedAdapter(h); adapter != nil {
			path, through, cwd = adapter.TranscriptMark(h.cwd, id).Path, h.hear.TokensThrough, h.cwd
		}
		return nil
	})
	if path == "" {
		return
	}
	if _, err := os.Stat(path); err != nil {
		return
	}
	var since time.Time
	if through != "" {
		since, _ = time.Parse(time.RFC3339Nano, through)
	}
	ctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		entries, err := adapter.TokenEntries(cwd, id, transcriptTail)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Role == loop.RoleAssistant && e.Usage != nil && e.At.After(since) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// setActivity sets h's activity, stamping when it changes.
func (s *Hearer) setActivity(h *loop.Hearing, activity loop.Activity) {
	if h.Activity != activity {
		h.Activity, h.ActivityAt = activity, s.now().Format(time.RFC3339)
	}
}

// countTokens adds to h's totals the usage of the transcript answers after
// the last one counted, reading only the transcript's tail (the file
// computed from the recorded cwd and id, never a payload's path).
func (s *Hearer) countTokens(h *hooked) {
	adapter := s.hookedAdapter(h)
	if adapter == nil || h.cwd == "" || *h.id == "" {
		return
	}
	entries, err := adapter.TokenEntries(h.cwd, *h.id, transcriptTail)
	if err != nil {
		return
	}
	var through time.Time
	if h.hear.TokensThrough != "" {
		through, _ = time.Parse(time.RFC3339Nano, h.hear.TokensThrough)
	}
	total := loop.TokenUsage{}
	if h.hear.Tokens != nil {
		total = *h.hear.Tokens
	}
	last, counted := through, false
	for _, e := range entries {
		if e.Role != loop.RoleAssistant || e.Usage == nil || !e.At.After(through) {
			continue
		}
		total = total.Add(*e.Usage)
		counted = true
		if e.At.After(last) {
			last = e.At
		}
	}
	if counted {
		h.hear.Tokens = &total
		h.hear.TokensThrough = last.UTC().Format(time.RFC3339Nano)
	}
}

// SpoolDir is where hook payloads wait while the store is locked.
func SpoolDir(stateRoot string) string { return filepath.Join(stateRoot, "spool", "hooks") }

// spooled is one spool file: a delivery, or an overflow note.
type spooled struct {
	loop.HookDelivery
	Payload  string    `json:"payload,omitempty"`
	Overflow *overflow `json:"overflow,omitempty"`
}

// overflow is what a full spool dropped.
type overflow struct {
	Dropped int   `json:"dropped"`
	Bytes   int64 `json:"bytes"`
}

// SpoolHook writes d into the spool (0600, ordered by its name:
// <unix nanoseconds>-<pid>.json) and keeps the spool within MaxSpoolBytes,
// the oldest files going first (noted for a hook.spool_overflow event). A
// spool another user owns or others may write is refused, naming it:
// nothing is written into it.
func SpoolHook(stateRoot string, d loop.HookDelivery) error {
	if err := checkSpool(stateRoot); err != nil {
		return err
	}
	data, err := json.Marshal(spooled{HookDelivery: d, Payload: string(d.Payload)})
	if err != nil {
		return err
	}
	if err := writeSpool(stateRoot, data); err != nil {
		return err
	}
	names, sizes, err := spoolFiles(stateRoot)
	if err != nil {
		return err
	}
	var total int64
	for _, n := range sizes {
		total += n
	}
	drop := overflow{}
	for i := 0; i < len(names)-1 && total > MaxSpoolBytes; i++ {
		if os.Remove(filepath.Join(SpoolDir(stateRoot), names[i])) == nil {
			drop.Dropped++
			drop.Bytes += sizes[i]
		}
		total -= sizes[i]
	}
	if drop.Dropped > 0 {
		note, _ := json.Marshal(spooled{Overflow: &drop})
		return writeSpool(stateRoot, note)
	}
	return nil
}

func writeSpool(stateRoot string, data []byte) error {
	name := fmt.Sprintf("%020d-%07d.json", time.Now().UnixNano(), os.Getpid())
	return fileperm.WritePrivate(filepath.Join(SpoolDir(stateRoot), name), data)
}

// spoolFiles lists the spool's files in order, with their sizes.
func spoolFiles(stateRoot string) ([]string, []int64, error) {
	ents, err := os.ReadDir(SpoolDir(stateRoot))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var names []string
	size := map[string]int64{}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".json") || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			names = append(names, n)
			size[n] = fi.Size()
		}
	}
	sort.Strings(names)
	sizes := make([]int64, len(names))
	for i, n := range names {
		sizes[i] = size[n]
	}
	return names, sizes, nil
}

// ApplySpool applies the spooled payloads under stateRoot in order and
// deletes each once applied; a store error stops it, leaving the rest for
// the next reader. A file another reader applied meanwhile is skipped (its
// record keeps the last applied name), so nothing is applied twice. A
// spool (or a file in it) another user owns or others may write is
// refused, naming it, and left as it is: no payload of it is applied.
func (s *Hearer) ApplySpool(ctx context.Context, stateRoot string) error {
	if stateRoot == "" {
		return nil
	}
	if err := checkSpool(stateRoot); err != nil {
		return err
	}
	names, _, err := spoolFiles(stateRoot)
	if err != nil || len(names) == 0 {
		return err
	}
	s.spoolMu.Lock()
	defer s.spoolMu.Unlock()
	for _, name := range names {
		path := filepath.Join(SpoolDir(stateRoot), name)
		if err := fileperm.CheckPrivate(path, "spooled hook payload"); err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // another reader applied it
		}
		if err != nil {
			return loop.Internal("reading the spooled hook payload %s: %v", path, err)
		}
		var sp spooled
		if json.Unmarshal(data, &sp) == nil {
			seq := strings.TrimSuffix(name, ".json")
			if sp.Overflow != nil {
				err = s.emit(s.event("hook.spool_overflow", loop.LevelWarning, loop.F("dropped", sp.Overflow.Dropped),
					loop.F("bytes", sp.Overflow.Bytes), loop.F("spool", SpoolDir(stateRoot))))
			} else {
				d := sp.HookDelivery
				d.Payload = []byte(sp.Payload)
				err = s.applyHook(ctx, d, seq)
				if loop.ErrorCode(err) == loop.EINVALID {
					err = nil // refused for good (its event is written): applied
				}
			}
			if err != nil {
				return err
			}
		}
		_ = os.Remove(path)
	}
	return nil
}

// MaxHookRead is how much of a hook's stdin the hook command reads before
// ShrinkHookPayload makes it fit MaxHookPayload.
const MaxHookRead = 64 << 20

// shrunkField is how much of a long string field a shrunk payload keeps.
const shrunkField = 64 << 10

// ShrinkHookPayload makes a payload over MaxHookPayload fit it: a payload
// that decodes keeps every field, its long strings (a huge prompt or
// answer) cut to their first 64 KiB, so its session_id and event survive;
// else it is cut at MaxHookPayload. truncated reports either.
func ShrinkHookPayload(data []byte) (out []byte, truncated bool) {
	if len(data) <= MaxHookPayload {
		return data, false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) == nil {
		for k, v := range fields {
			if len(v) <= shrunkField {
				continue
			}
			var s string
			if json.Unmarshal(v, &s) != nil {
				continue
			}
			cut := min(len(s), shrunkField)
			for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
				cut--
			}
			fields[k], _ = json.Marshal(s[:cut])
		}
		if b, err := json.Marshal(fields); err == nil && len(b) <= MaxHookPayload {
			return b, true
		}
	}
	return data[:MaxHookPayload], true
}
