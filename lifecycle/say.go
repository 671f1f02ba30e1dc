package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
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

// SayStanding pastes text into a running standing session and submits it. It never
// spawns or resumes one. It waits for the agent to be ready for input
// (decisions D14) and never reports delivered what the agent could not read.
func (s *Service) SayStanding(ctx context.Context, cfg *config.Config, name, text, actor string) (loop.SayResult, error) {
	if err := loop.CheckName(name); err != nil {
		return loop.SayResult{}, err
	}
	if Blank(text) {
		return loop.SayResult{}, loop.Invalid("the message is empty (nothing but whitespace and control characters); nothing to deliver")
	}
	rec, err := s.read(name)
	if err != nil {
		return loop.SayResult{}, err
	}
	if rec == nil || rec.Status == loop.StatusAbsent {
		return loop.SayResult{}, loop.NotFound("no standing session '%[1]s' has been started — a message never spawns one; run `the-loop standing start %[1]s` first", name)
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
	fail := func(msg string) loop.SayResult {
		return loop.SayResult{Name: name, Delivered: false, ExitCode: 1, Messages: []loop.Message{{Stream: "err", Text: msg}}}
	}
	adapter, err := s.Harness(rec.Harness, name)
	if err != nil {
		return fail("error: could not deliver the message: " + loop.ErrorMessage(err)), nil
	}
	ready := time.Duration(cfg.Routing.Tmux.ReadySeconds * float64(time.Second))
	// A stop that claims the session meanwhile ends the wait (issue 16
	// #18), and one that claimed it before the paste refuses it: the agent
	// is flushing to exit and would never read it (#17).
	still := func() error {
		rec, err := s.read(name)
		if err != nil {
			return err
		}
		return stopClaimed(name, rec)
	}
	if err := waitReady(ctx, runner, adapter, target, ready, still); err != nil {
		if loop.ErrorCode(err) == loop.ENOTFOUND {
			return loop.SayResult{}, err
		}
		return fail("error: " + err.Error()), nil
	}
	if err := still(); err != nil {
		return loop.SayResult{}, err
	}
	if err := runner.DeliverTo(ctx, target, strings.NewReader(FrameSay(name, actor, text))); err != nil {
		return fail("error: could not deliver the message: " + loop.ErrorMessage(err)), nil
	}
	actor = actorOrUser(actor)
	ev := s.event("standing.said", loop.LevelInfo, loop.F("standing", name), loop.F("tmux_target", target), loop.F("actor", actor))
	err = delivered(ctx, s, standingKind{name: name}, EvSay, func(r *loop.StandingRecord) { r.LastMessageAt = s.stamp() }, ev)
	res := loop.SayResult{Name: name, Delivered: true, ExitCode: 0,
		Messages: []loop.Message{{Stream: "out", Text: fmt.Sprintf("delivered into %s (standing.said)", target)}}}
	if err != nil {
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: "warning: delivered, but the event could not be recorded: " + err.Error()})
	}
	return res, nil
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
