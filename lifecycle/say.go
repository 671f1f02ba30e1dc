package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
)

// signed is how a frame names its sender: " (actor)", or nothing.
func signed(actor string) string {
	if actor == "" {
		return ""
	}
	return " (" + actor + ")"
}

// FrameSay returns what the pane receives for a say: the operator's framing,
// a blank line, then the text (original §5.10).
func FrameSay(name, actor, text string) string {
	return fmt.Sprintf("Message from your operator%s to standing session `%s`:\n\n%s", signed(actor), name, text)
}

// frameFrom is the framing of req: as the agent whose credential carries
// it, its text fenced with a fresh nonce (FramePeer), else as the
// operator's (FrameSay).
func (s *Service) frameFrom(req loop.StandingSayRequest) string {
	if c := req.Caller; c != nil {
		return FramePeer(*c, req.Name, req.Text, s.nonceFor(req.Text))
	}
	return FrameSay(req.Name, req.Actor, req.Text)
}

// waitGraph is who waits on whom: the agents (by AgentIdentity.String)
// with a waiting say in flight into a standing session (by name).
type waitGraph struct {
	mu sync.Mutex
	on map[string]map[string]int // standing name → waiting callers
}

// enter records that caller waits on name, refusing a wait that could
// never end: into its own session, or into one that waits on the caller.
func (g *waitGraph) enter(caller loop.AgentIdentity, name string) (leave func(), err error) {
	if caller.Standing == name {
		return nil, loop.Invalid("standing session '%s' cannot wait for its own answer: it would wait on itself — say without wait", name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if caller.Standing != "" && g.on[caller.Standing]["standing:"+name] > 0 {
		return nil, loop.Invalid("standing session '%s' is itself waiting for an answer from %s: waiting on it would never end — say without wait", name, caller)
	}
	if g.on == nil {
		g.on = map[string]map[string]int{}
	}
	if g.on[name] == nil {
		g.on[name] = map[string]int{}
	}
	key := caller.String()
	g.on[name][key]++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.on[name][key]--; g.on[name][key] <= 0 {
			delete(g.on[name], key)
		}
	}, nil
}

// SayStanding pastes text into a running standing session and submits it
// (Say without waiting for the answer).
func (s *Service) SayStanding(ctx context.Context, cfg *config.Config, name, text, actor string) (loop.SayResult, error) {
	return s.Say(ctx, cfg, loop.StandingSayRequest{Name: name, Text: text, Actor: actor})
}

// Say pastes a message into a running standing session and submits it,
// reporting its outcome; with req.Wait it waits for the turn's
// answer. It never spawns or resumes one. It waits for the agent to be
// ready for input (decisions D14), never pastes into a dialog, and never
// reports delivered what the agent could not read.
func (s *Service) Say(ctx context.Context, cfg *config.Config, req loop.StandingSayRequest) (loop.SayResult, error) {
	name, text := req.Name, req.Text
	if err := loop.CheckName(name); err != nil {
		return loop.SayResult{}, err
	}
	if Blank(text) {
		return loop.SayResult{}, loop.Invalid("the message is empty (nothing but whitespace and control characters); nothing to deliver")
	}
	wait, err := sayWait(req.Wait, req.TimeoutSeconds)
	if err != nil {
		return loop.SayResult{}, err
	}
	rec, err := s.read(name)
	if err != nil {
		return loop.SayResult{}, err
	}
	if rec == nil || rec.Status == loop.StatusAbsent {
		if _, declared := tolerantBlock(cfg).Get(name); !declared {
			return loop.SayResult{}, unknownStanding(name)
		}
		return loop.SayResult{}, neverStarted(name, "there is no agent to say it to (a message never spawns one)")
	}
	target := loop.TmuxTargetFor(name)
	runner := s.Runner(rec.TmuxSocket)
	if err := stopClaimed(name, rec); err != nil {
		return loop.SayResult{}, err
	}
	if rec.Status != loop.StatusRunning || runner.State(ctx, target) != loop.PaneLive {
		return loop.SayResult{}, loop.NotFound("standing session '%[1]s' has no live tmux pane to paste into — a message never respawns one; run `the-loop standing start %[1]s` first", name)
	}
	if mine, err := ours(ctx, runner, target, rec.TagFor(rec.HarnessSessionID)); err != nil {
		return loop.SayResult{}, err
	} else if !mine {
		return loop.SayResult{}, loop.NotFound("standing session '%[1]s' has no live agent of the-loop's to paste into — %[2]s; run `the-loop standing start %[1]s` first", name,
			notOurs(target, rec.TmuxSocket, "it is not the agent the-loop started for this record"))
	}
	// Only a spawn of a CLI with hooks declares them (a record of another
	// harness may still read "starting").
	hooks := rec.Activity != "" && harnessHasHooks(s, rec.Harness, name)
	if req.Wait && !hooks {
		return loop.SayResult{}, loop.Invalid("standing session '%s' was spawned without hooks, so its answer cannot be heard; say without --wait (wait), or restart it with a harness that has hooks (claude, codex, gemini)", name)
	}
	if req.Wait && req.Caller != nil {
		leave, err := s.waits.enter(*req.Caller, name)
		if err != nil {
			return loop.SayResult{}, err
		}
		defer leave()
	}
	fail := func(outcome, msg string) loop.SayResult {
		return loop.SayResult{Name: name, Delivered: false, Outcome: outcome, ExitCode: 1, Messages: []loop.Message{{Stream: "err", Text: msg}}}
	}
	notReady := func(why string) loop.SayResult {
		return fail(loop.SayNotReady, fmt.Sprintf("error: %s; nothing was delivered — answer it yourself with `the-loop standing attach %[2]s --write`, or look with `the-loop standing peek %[2]s`", why, name))
	}
	if rec.Activity == loop.ActivityWaiting {
		return notReady(fmt.Sprintf("the agent in %s is waiting for a permission or dialog answer (a message never answers one)", target)), nil
	}
	adapter, err := s.Harness(rec.Harness, name)
	if err != nil {
		return fail("", "error: could not deliver the message: "+loop.ErrorMessage(err)), nil
	}
	ready := time.Duration(cfg.Routing.Tmux.ReadySeconds * float64(time.Second))
	// A stop that claims the session meanwhile ends the wait,
	// and one that claimed it before the paste refuses it: the agent
	// is flushing to exit and would never read it.
	still := func() error {
		rec, err := s.read(name)
		if err != nil {
			return err
		}
		return stopClaimed(name, rec)
	}
	if err := waitReady(ctx, runner, adapter, target, ready, still); err != nil {
		if ctx.Err() != nil || loop.ErrorCode(err) == loop.ENOTFOUND {
			return loop.SayResult{}, err
		}
		return notReady(strings.TrimSuffix(strings.TrimSuffix(err.Error(), " — try again shortly"), "; nothing was delivered")), nil
	}
	if err := still(); err != nil {
		return loop.SayResult{}, err
	}
	// What was heard just before the paste: the say's prompt is a new one.
	before, err := s.read(name)
	if err != nil {
		return loop.SayResult{}, err
	}
	if before == nil {
		return loop.SayResult{}, loop.NotFound("standing session '%s' was deleted while the message waited for it; nothing was delivered", name)
	}
	if hooks && before.Activity == loop.ActivityWaiting {
		return notReady(fmt.Sprintf("the agent in %s is waiting for a permission or dialog answer (a message never answers one)", target)), nil
	}
	framed := s.frameFrom(req)
	transcript, mark := s.transcriptMark(before.Cwd, before.HarnessSessionID)
	if err := deliverTo(ctx, runner, adapter, target, framed); err != nil {
		return fail("", "error: could not deliver the message: "+loop.ErrorMessage(err)), nil
	}
	res := loop.SayResult{Name: name, Delivered: true, Outcome: loop.SayDelivered, ExitCode: 0}
	var promptID string
	if hooks {
		v := s.verify(ctx, cfg.StateDir(), s.standingHeard(name), target, runner, before.Hearing, framed, cfg.Routing.Tmux.SubmitWait())
		if v.err != nil {
			return loop.SayResult{}, v.err
		}
		if v.outcome == loop.SayNotSubmitted {
			_ = s.Emit(s.event("standing.say_failed", loop.LevelWarning, loop.F("standing", name), loop.F("tmux_target", target),
				loop.F("actor", actorOrUser(req.Actor)), loop.F("why", "no UserPromptSubmit held the text after one more submit key")))
			return fail(loop.SayNotSubmitted, fmt.Sprintf("error: the message was pasted into %s but the agent never took it, even after one more submit key: the text is left in its input box — look with `the-loop standing peek %s`", target, name)), nil
		}
		res.Outcome, promptID = v.outcome, v.promptID
	}
	actor := actorOrUser(req.Actor)
	if req.Caller != nil {
		actor = req.Caller.String()
	}
	ev := s.event("standing.said", loop.LevelInfo, loop.F("standing", name), loop.F("tmux_target", target), loop.F("actor", actor), loop.F("outcome", res.Outcome))
	err = delivered(ctx, s, standingKind{name: name}, EvSay, func(r *loop.StandingRecord) {
		r.LastMessageAt = s.stamp()
		if req.AnswerToThread && hooks {
			r.Awaited = append(slices.Clone(r.Awaited), loop.AwaitedAnswer{PromptID: promptID, Sum: loop.PromptSum(framed), At: s.stamp()})
			if n := len(r.Awaited); n > loop.MaxAwaited {
				r.Awaited = r.Awaited[n-loop.MaxAwaited:]
			}
		}
	}, ev)
	res.Messages = []loop.Message{{Stream: "out", Text: deliveryLine(res.Outcome, target)}}
	if err != nil {
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "warning: delivered, but the event could not be recorded: " + err.Error()})
	}
	if !req.Wait {
		return res, nil
	}
	res.Messages[0].Stream = "err" // the answer goes to stdout
	answer, err := s.awaitSayAnswer(ctx, cfg.StateDir(), s.standingHeard(name), "standing session '"+name+"'", "the-loop standing transcript "+name, promptID, transcript, mark, framed, before.Prompts, s.joinsTurn(rec.Harness, name), wait)
	switch {
	case err == nil:
		res.Reply = answer
	case ctx.Err() != nil:
		res.ExitCode = 1
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "stopped waiting: the message stays delivered to " + target + "; its answer will be in `the-loop standing transcript " + name + "`"})
	default:
		res.ExitCode = 1
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "error: " + err.Error()})
	}
	return res, nil
}

// sayWait is how long a waiting say waits for its answer.
func sayWait(wait bool, timeoutSeconds float64) (time.Duration, error) {
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

// deliveryLine is the line a delivered say prints.
func deliveryLine(outcome, target string) string {
	switch outcome {
	case loop.SayQueued:
		return fmt.Sprintf("queued in %s: the agent is busy and takes it after its running turn (standing.said)", target)
	case loop.SaySubmitted:
		return fmt.Sprintf("submitted to %s: the agent took it (standing.said)", target)
	}
	return fmt.Sprintf("delivered into %s (standing.said)", target)
}

// harnessHasHooks reports whether the harness the record names is one the
// hooks are declared for (claude, codex, gemini: hookedHarness).
func harnessHasHooks(s *Service, harness, subject string) bool {
	adapter, err := s.Harness(harness, subject)
	return err == nil && hookedHarness(adapter.Name())
}

// heardFn reads what a session's hooks reported (nil when its record is
// gone) and whether it still runs.
type heardFn func() (h *loop.Hearing, running bool, err error)

// standingHeard reads standing session name's hearing.
func (s *Service) standingHeard(name string) heardFn {
	return func() (*loop.Hearing, bool, error) {
		rec, err := s.read(name)
		if err != nil || rec == nil {
			return nil, false, err
		}
		return &rec.Hearing, rec.Status == loop.StatusRunning, nil
	}
}

// verified is what a say's verification found.
type verified struct {
	outcome  string
	promptID string // the UserPromptSubmit's, for a submitted say
	err      error
}

// notifier wakes every waiter at each broadcast: a waiter takes wait()'s
// channel before it looks, so no broadcast after its look is missed.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notifier) broadcast() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}

// sayPoll is how often a say looks at what its agent's hooks reported
// when they may reach the store from another process (the CLI's, with
// the service down: the hook command writes the store itself); the
// service, which applies every hook itself, is woken by each (heard) and
// looks on its own only every servicePoll.
const (
	sayPoll     = 3 * time.Millisecond
	servicePoll = 100 * time.Millisecond
)

// pause waits for the next look: a hook applied here, or the poll interval.
func (s *Service) pause(ctx context.Context, woken <-chan struct{}) error {
	every := sayPoll
	if s.Source == "service" {
		every = servicePoll
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-woken:
	case <-time.After(every):
	}
	return nil
}

// stopClaimed refuses a say to a standing session that is no longer
// running or that a stop has claimed (nil: a say may go on).
func stopClaimed(name string, rec *loop.StandingRecord) error {
	if rec == nil || rec.Status == loop.StatusAbsent || rec.Status == loop.StatusStopped {
		return loop.NotFound("standing session '%[1]s' has no live tmux pane to paste into — it is not running (stopped); nothing was delivered, and a message never respawns one; run `the-loop standing start %[1]s` first", name)
	}
	if rec.Claim != nil && rec.Claim.Op == "stop" {
		return loop.NotFound("standing session '%[1]s' is not running: a stop (process %[2]d, since %[3]s) has claimed it and the agent is exiting; nothing was delivered — run `the-loop standing start %[1]s` once it is stopped", name, rec.Claim.PID, rec.Claim.Since)
	}
	return nil
}

// verify decides a pasted say's outcome from the hooks: queued at once when
// the agent was working before the paste and still is; else the prompt
// holding the text among those heard after before, within submit (one
// more submit key halfway); else not-submitted. Each look is one short
// read: the wait holds no lock and no transaction.
func (s *Service) verify(ctx context.Context, stateRoot string, heard heardFn, target string, runner loop.Runner, before loop.Hearing, framed string, submit time.Duration) verified {
	sum := loop.PromptSum(framed)
	look := func() (loop.HeardPrompt, *loop.Hearing, bool, error) {
		if err := s.ApplySpool(ctx, stateRoot); err != nil {
			return loop.HeardPrompt{}, nil, false, err
		}
		rec, _, err := heard()
		if err != nil || rec == nil {
			return loop.HeardPrompt{}, rec, false, err
		}
		for _, p := range rec.Prompts {
			if !slices.Contains(before.Prompts, p) && (p.Sum == sum || p.Truncated) {
				return p, rec, true, nil
			}
		}
		return loop.HeardPrompt{}, rec, false, nil
	}
	woken := s.heard.wait()
	p, rec, found, err := look()
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
	retried := false
	for {
		if err := s.pause(ctx, woken); err != nil {
			return verified{err: err}
		}
		woken = s.heard.wait()
		p, _, found, err := look()
		if err != nil {
			return verified{err: err}
		}
		if found {
			return heardAs(p)
		}
		elapsed := time.Since(start)
		if !retried && elapsed >= submit/2 {
			retried = true
			_ = runner.SubmitTo(ctx, target)
		}
		if elapsed >= submit {
			return verified{outcome: loop.SayNotSubmitted}
		}
	}
}

// heardAs is the outcome a heard prompt gives.
func heardAs(p loop.HeardPrompt) verified {
	if p.Queued {
		return verified{outcome: loop.SayQueued}
	}
	return verified{outcome: loop.SaySubmitted, promptID: p.PromptID}
}

// Blank reports whether text has nothing an agent could read: only
// whitespace, control (C0, DEL, C1) and format characters (bidi controls,
// zero-width marks).
func Blank(text string) bool {
	return strings.IndexFunc(text, func(r rune) bool {
		return !unicode.IsSpace(r) && !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r)
	}) < 0
}

// waitReady polls the pane until the adapter says typed input would reach
// the agent, or fails saying it is not ready. still, when not nil, is asked
// at every poll whether the wait should go on; its error ends the wait.
func waitReady(ctx context.Context, runner loop.Runner, adapter loop.Harness, target string, timeout time.Duration, still func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		if still != nil {
			if err := still(); err != nil {
				return err
			}
		}
		snap, err := runner.Snapshot(ctx, target)
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

// transcriptMark is the transcript of conversation id in cwd and its size now:
// the user entry of a say pasted after this lies past mark.
func (s *Service) transcriptMark(cwd, id string) (path string, mark int64) {
	if cwd == "" || id == "" || harness.NewClaude(harness.ClaudeOptions{}).CheckSessionID(id) != nil {
		return "", 0 // an id that is not Claude Code's names no transcript path
	}
	dir, err := harness.ClaudeConfigDir(s.Getenv, "")
	if err != nil {
		return "", 0
	}
	path = harness.ClaudeTranscriptPath(dir, cwd, id)
	if fi, err := os.Stat(path); err == nil {
		mark = fi.Size()
	}
	return path, mark
}

// awaitSayAnswer waits up to wait for the answer to a delivered say: the Stop
// whose prompt id is promptID, or for a queued say ("") the promptId of the
// transcript's first user entry past mark holding framed, else of a turn
// heard for framed that seen (the prompts heard before the paste) lacks. Each look is one
// short read: the wait holds no lock and no transaction.
func (s *Service) awaitSayAnswer(ctx context.Context, stateRoot string, heard heardFn, who, where, promptID, transcript string, mark int64, framed string, seen []loop.HeardPrompt, joins bool, wait time.Duration) (string, error) {
	sum := loop.PromptSum(framed)
	deadline := time.Now().Add(wait)
	for {
		woken := s.heard.wait()
		if err := s.ApplySpool(ctx, stateRoot); err != nil {
			return "", err
		}
		rec, running, err := heard()
		if err != nil {
			return "", err
		}
		if rec == nil || !running || rec.Activity == loop.ActivityExited {
			return "", fmt.Errorf("%s ended before it answered; the message was delivered", who)
		}
		if promptID == "" && transcript != "" {
			var next int64
			promptID, next = userEntryAfter(transcript, mark, sum)
			mark = next
		}
		if promptID == "" {
			promptID = heardPromptFor(rec.Prompts, seen, sum, joins)
		}
		if promptID != "" {
			for _, a := range rec.Answers {
				if a.PromptID == promptID {
					return a.Text, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no answer came within %s; the message was delivered — its answer will be in `%s`", wait, where)
		}
		if err := s.pause(ctx, woken); err != nil {
			return "", err
		}
	}
}

// userEntryAfter reads the transcript's whole lines past mark for a user
// entry whose text has sum: its promptId, and where the next look starts.
func userEntryAfter(path string, mark int64, sum string) (promptID string, next int64) {
	f, err := os.Open(path)
	if err != nil {
		return "", mark
	}
	defer f.Close()
	if _, err := f.Seek(mark, io.SeekStart); err != nil {
		return "", mark
	}
	data, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return "", mark
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return "", mark
	}
	for _, line := range bytes.Split(data[:end], []byte{'\n'}) {
		var e struct {
			Type     string `json:"type"`
			PromptID string `json:"promptId"`
			Message  struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) != nil || e.Type != "user" || e.PromptID == "" {
			continue
		}
		if loop.PromptSum(contentText(e.Message.Content)) == sum {
			return e.PromptID, mark + int64(end) + 1
		}
	}
	return "", mark + int64(end) + 1
}

// contentText is a transcript message's text: a string, or its text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// userEntrySum is the PromptSum of the text of the last user entry of
// promptID in the transcript's last 1 MiB ("" when there is none).
func userEntrySum(path, promptID string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 1<<20 {
		_, _ = f.Seek(fi.Size()-1<<20, io.SeekStart)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return ""
	}
	sum := ""
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		var e struct {
			Type     string `json:"type"`
			PromptID string `json:"promptId"`
			Message  struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) == nil && e.Type == "user" && e.PromptID == promptID {
			if text := contentText(e.Message.Content); text != "" {
				sum = loop.PromptSum(text)
			}
		}
	}
	return sum
}
