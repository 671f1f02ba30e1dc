package talk

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	loop "github.com/the-loop-dev/the-loop"
)

// A Session is one message on its way into one agent's pane: where it goes,
// how the agent is heard, and what the verb records. lifecycle's say and
// reply fill it from their records.
type Session struct {
	// Runner is the tmux runner of the session's socket; Target its agent's
	// tmux target.
	Runner loop.Runner
	Target string
	// Seen is the look at the pane the verb took when it checked that the
	// agent is its own (Runner.Snapshot): the wait for the prompt's first
	// poll, so a say whose agent is ready pays no second look (nil: none).
	Seen *loop.PaneSnapshot
	// Adapter is the session's harness adapter (its error fails the
	// delivery, nothing pasted).
	Adapter func() (loop.Harness, error)
	// Framed is the text as the pane receives it.
	Framed string
	// Activity is the agent's activity as the verb read it: a dialog up
	// refuses the paste.
	Activity loop.Activity
	// Hooks reports that the agent's hooks are heard: the paste is
	// verified and its answer can be awaited.
	Hooks bool
	// Ready bounds the wait for the agent's prompt and Submit the
	// verification (routing.tmux.readySeconds, submitWaitSeconds); Wait
	// bounds the wait for the turn's answer (0: the answer is not
	// awaited).
	Ready, Submit, Wait time.Duration
	// Joins reports a harness that takes a message submitted during a turn
	// into that turn (codex).
	Joins bool
	// Still, when not nil, is asked at each look at the pane and before
	// the paste whether the delivery may go on; its error ends it.
	Still func() error
	// Look reads the session's record as its hooks left it.
	Look func() (Heard, error)
	// Hear applies the hooks heard elsewhere (the spool) before each look;
	// Woken gives the channel a hook applied in this process closes (nil:
	// none); Poll is how often to look without one.
	Hear  func(ctx context.Context) error
	Woken func() <-chan struct{}
	Poll  time.Duration
	// Delivered records the delivery (its event and transition; the
	// message is delivered whatever it returns, its error is a warning);
	// NotTaken records a paste the agent never took (its event).
	Delivered func(outcome, promptID string) error
	NotTaken  func()
	Words     Words
}

// Heard is what a look at the session's record finds.
type Heard struct {
	// Hearing is nil when the record is gone.
	Hearing *loop.Hearing
	// Running reports that the session still runs.
	Running bool
	// Cwd and Conversation name the agent's transcript.
	Cwd, Conversation string
}

// Words are the sentences that differ between a say and a reply.
type Words struct {
	// Noun is what is delivered: "message" or "reply".
	Noun string
	// NotReady words a paste refused because the agent cannot read it
	// (why says what it is doing); ReadyFailed words a wait for its
	// prompt that failed.
	NotReady    func(why string) string
	ReadyFailed func(err error) string
	// Gone is the error when the record went away before the paste;
	// NoPane, when not nil, the one a delivery refused as ENOTFOUND
	// becomes.
	Gone, NoPane error
	// NotTakenHint ends the message of a paste the agent never took
	// ("look with …").
	NotTakenHint string
	// Line is the line a delivered message prints.
	Line func(outcome, target string) string
	// Who names the session ("standing session 'x'"), Where where its
	// answer will be, StillThere what follows "stays delivered to <target>"
	// when the wait is stopped.
	Who, Where, StillThere string
}

// Result is a delivery's outcome, as a say's or a reply's result holds it.
type Result struct {
	Delivered bool
	// Outcome is one of the loop.Say* outcomes ("" for a delivery that
	// failed before it was decided).
	Outcome  string
	Reply    string
	ExitCode int
	Messages []loop.Message
}

// fail is a result that delivered nothing.
func fail(outcome, msg string) Result {
	return Result{Outcome: outcome, ExitCode: 1, Messages: []loop.Message{{Stream: "err", Text: msg}}}
}

// dialog is why a paste waits: the agent is in a dialog.
func (s *Session) dialog() string {
	return fmt.Sprintf("the agent in %s is waiting for a permission or dialog answer (a %s never answers one)", s.Target, s.Words.Noun)
}

// Deliver takes s's message into its agent: it waits for the agent to be
// ready for input (decisions D14), never pastes into a dialog, verifies
// from the hooks that the agent took the text, records the delivery, and
// with s.Wait awaits the turn's answer. A message it could not deliver is
// a result with Delivered false; an error is one the verb returns as it is
// (the context's, a record gone, a store failure).
func Deliver(ctx context.Context, s Session) (Result, error) {
	if s.Activity == loop.ActivityWaiting {
		return fail(loop.SayNotReady, s.Words.NotReady(s.dialog())), nil
	}
	adapter, err := s.Adapter()
	if err != nil {
		return fail("", "error: could not deliver the "+s.Words.Noun+": "+loop.ErrorMessage(err)), nil
	}
	if err := waitReady(ctx, s.Runner, adapter, s.Target, s.Ready, s.Seen, s.Still); err != nil {
		if ctx.Err() != nil || loop.ErrorCode(err) == loop.ENOTFOUND {
			return Result{}, err
		}
		return fail(loop.SayNotReady, s.Words.ReadyFailed(err)), nil
	}
	if s.Still != nil {
		if err := s.Still(); err != nil {
			return Result{}, err
		}
	}
	// What was heard just before the paste: the message's prompt is a new one.
	before, err := s.Look()
	if err != nil {
		return Result{}, err
	}
	if before.Hearing == nil {
		return Result{}, s.Words.Gone
	}
	if s.Hooks && before.Hearing.Activity == loop.ActivityWaiting {
		return fail(loop.SayNotReady, s.Words.NotReady(s.dialog())), nil
	}
	mark := adapter.TranscriptMark(before.Cwd, before.Conversation)
	if err := s.paste(ctx, adapter); err != nil {
		if s.Words.NoPane != nil && loop.ErrorCode(err) == loop.ENOTFOUND {
			return Result{}, s.Words.NoPane
		}
		return fail("", "error: could not deliver the "+s.Words.Noun+": "+loop.ErrorMessage(err)), nil
	}
	outcome, promptID := loop.SayDelivered, ""
	if s.Hooks {
		v := s.verify(ctx, *before.Hearing)
		if v.err != nil {
			return Result{}, v.err
		}
		if v.outcome == loop.SayNotSubmitted {
			s.NotTaken()
			return fail(loop.SayNotSubmitted, fmt.Sprintf("error: the %s was pasted into %s but the agent never took it, even after one more submit key: the text is left in its input box — %s", s.Words.Noun, s.Target, s.Words.NotTakenHint)), nil
		}
		outcome, promptID = v.outcome, v.promptID
	}
	res := Result{Delivered: true, Outcome: outcome, Messages: []loop.Message{{Stream: "out", Text: s.Words.Line(outcome, s.Target)}}}
	if err := s.Delivered(outcome, promptID); err != nil {
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "warning: delivered, but the event could not be recorded: " + err.Error()})
	}
	if s.Wait == 0 {
		return res, nil
	}
	res.Messages[0].Stream = "err" // the answer goes to stdout
	answer, err := s.await(ctx, adapter, promptID, mark, before.Hearing.Prompts)
	switch {
	case err == nil:
		res.Reply = answer
	case ctx.Err() != nil:
		res.ExitCode = 1
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "stopped waiting: the " + s.Words.Noun + " stays delivered to " + s.Target + s.Words.StillThere})
	default:
		res.ExitCode = 1
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "error: " + err.Error()})
	}
	return res, nil
}

// paste delivers the framed text, with the pause the adapter's agent
// needs between the paste and its submit key (0: the runner's own).
func (s *Session) paste(ctx context.Context, adapter loop.Harness) error {
	return s.Runner.DeliverTo(ctx, s.Target, s.Framed, adapter.SubmitDelay())
}

// AnswerWait is how long a waiting say waits for its answer: 0 when it
// does not wait, else timeoutSeconds (0: loop.DefaultSayWait).
func AnswerWait(wait bool, timeoutSeconds float64) (time.Duration, error) {
	if !wait {
		return 0, nil
	}
	if timeoutSeconds < 0 {
		return 0, loop.Invalid("timeoutSeconds %v is not a positive duration; give one above 0 (default %s)", timeoutSeconds, loop.DefaultSayWait)
	}
	if timeoutSeconds == 0 {
		return loop.DefaultSayWait, nil
	}
	return time.Duration(timeoutSeconds * float64(time.Second)), nil
}

// Blank reports whether text has nothing an agent could read: only
// whitespace, control (C0, DEL, C1) and format characters (bidi controls,
// zero-width marks).
func Blank(text string) bool {
	return strings.IndexFunc(text, func(r rune) bool {
		return !unicode.IsSpace(r) && !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r)
	}) < 0
}

// verified is what a message's verification found.
type verified struct {
	outcome  string
	promptID string // the UserPromptSubmit's, for a submitted message
	err      error
}

// pause waits for the next look: a hook applied here, or the poll interval.
func (s *Session) pause(ctx context.Context, woken <-chan struct{}) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-woken:
	case <-time.After(s.Poll):
	}
	return nil
}

// woken is the channel the next hook applied here closes (nil: none).
func (s *Session) woken() <-chan struct{} {
	if s.Woken == nil {
		return nil
	}
	return s.Woken()
}

// look applies the spool and reads the record.
func (s *Session) look(ctx context.Context) (Heard, error) {
	if err := s.Hear(ctx); err != nil {
		return Heard{}, err
	}
	return s.Look()
}

// verify decides a pasted message's outcome from the hooks: queued at once
// when the agent was working before the paste and still is; else the
// prompt holding the text among those heard after before, within Submit
// (one more submit key halfway); else not-submitted. Each look is one
// short read: the wait holds no lock and no transaction.
func (s *Session) verify(ctx context.Context, before loop.Hearing) verified {
	sum := loop.PromptSum(s.Framed)
	find := func() (loop.HeardPrompt, *loop.Hearing, bool, error) {
		h, err := s.look(ctx)
		if err != nil || h.Hearing == nil {
			return loop.HeardPrompt{}, h.Hearing, false, err
		}
		for _, p := range h.Hearing.Prompts {
			if !slices.Contains(before.Prompts, p) && (p.Sum == sum || p.Truncated) {
				return p, h.Hearing, true, nil
			}
		}
		return loop.HeardPrompt{}, h.Hearing, false, nil
	}
	woken := s.woken()
	p, rec, found, err := find()
	if err != nil {
		return verified{err: err}
	}
	if found {
		return heardAs(p)
	}
	if before.Activity == loop.ActivityWorking && rec != nil && rec.Activity == loop.ActivityWorking && rec.TurnPromptID == before.TurnPromptID {
		return verified{outcome: loop.SayQueued}
	}
	start := time.Now()
	window := s.submitWindow()
	retried := false
	for {
		if err := s.pause(ctx, woken); err != nil {
			return verified{err: err}
		}
		woken = s.woken()
		p, _, found, err := find()
		if err != nil {
			return verified{err: err}
		}
		if found {
			return heardAs(p)
		}
		elapsed := time.Since(start)
		if !retried && elapsed >= window/2 {
			retried = true
			_ = s.Runner.SubmitTo(ctx, s.Target)
		}
		if elapsed >= window {
			return verified{outcome: loop.SayNotSubmitted}
		}
	}
}

// pastePerSecond is how many bytes of a paste an agent is given a second
// to take in, beyond Submit, before its submit is judged not heard: a long
// text is read, drawn and parsed by the agent before its prompt is
// submitted, and a busy host reads it slower still.
const pastePerSecond = 64 << 10

// submitWindow is how long a delivery waits for its submit to be heard:
// Submit, and a second more for each pastePerSecond bytes of the text
// (1 MiB: 16 s more).
func (s *Session) submitWindow() time.Duration {
	return s.Submit + time.Duration(len(s.Framed)/pastePerSecond)*time.Second
}

// heardAs is the outcome a heard prompt gives.
func heardAs(p loop.HeardPrompt) verified {
	if p.Queued {
		return verified{outcome: loop.SayQueued}
	}
	return verified{outcome: loop.SaySubmitted, promptID: p.PromptID}
}

// await waits up to s.Wait for the answer to a delivered message: the Stop
// whose prompt id is promptID, or for a queued message ("") the promptId of
// the transcript's first user entry past mark holding the text, else of a
// turn heard for it that seen (the prompts heard before the paste) lacks.
// Each look is one short read: the wait holds no lock and no transaction.
func (s *Session) await(ctx context.Context, adapter loop.Harness, promptID string, mark loop.TranscriptMark, seen []loop.HeardPrompt) (string, error) {
	sum := loop.PromptSum(s.Framed)
	deadline := time.Now().Add(s.Wait)
	for {
		woken := s.woken()
		h, err := s.look(ctx)
		if err != nil {
			return "", err
		}
		rec := h.Hearing
		if rec == nil || !h.Running || rec.Activity == loop.ActivityExited {
			return "", fmt.Errorf("%s ended before it answered; the message was delivered", s.Words.Who)
		}
		if promptID == "" && mark.Path != "" {
			promptID, mark = adapter.PromptAfter(mark, sum)
		}
		if promptID == "" {
			promptID = loop.HeardPromptFor(rec.Prompts, seen, sum, s.Joins)
		}
		if promptID != "" {
			for _, a := range rec.Answers {
				if a.PromptID == promptID {
					return a.Text, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no answer came within %s; the message was delivered — its answer will be in `%s`", s.Wait, s.Words.Where)
		}
		if err := s.pause(ctx, woken); err != nil {
			return "", err
		}
	}
}

// waitReady polls the pane until the adapter says typed input would reach
// the agent, or fails saying it is not ready; seen, when not nil, is the
// first poll's look. still, when not nil, is asked at every poll whether
// the wait should go on; its error ends the wait.
func waitReady(ctx context.Context, runner loop.Runner, adapter loop.Harness, target string, timeout time.Duration, seen *loop.PaneSnapshot, still func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		if still != nil {
			if err := still(); err != nil {
				return err
			}
		}
		snap, err := look(ctx, runner, target, &seen)
		if err == nil && adapter.Ready(snap) {
			return nil
		}
		if err == nil && snap.Dead {
			return fmt.Errorf("the agent in %s has exited; nothing was delivered", target)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the agent in %s is not ready for input after %s (its prompt is not up); nothing was delivered — try again shortly", target, timeout.Round(100*time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// look is the pane's snapshot: *seen the first time when there is one (it
// is then used up), else a new one.
func look(ctx context.Context, runner loop.Runner, target string, seen **loop.PaneSnapshot) (loop.PaneSnapshot, error) {
	if snap := *seen; snap != nil {
		*seen = nil
		return *snap, nil
	}
	return runner.Snapshot(ctx, target)
}
