package lifecycle

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
)

// The read side of an agent: what its conversation says (the transcript)
// and what its terminal shows (a peek at its pane). Both only read: no
// state changes, no event, no claim.

// Bounds of the reads.
const (
	// DefaultTranscriptLast is how many entries a transcript shows when
	// the caller names no number.
	DefaultTranscriptLast = 20
	// MaxTranscriptLast bounds one transcript read (it is read from the
	// file's end, so its cost follows the entries asked for).
	MaxTranscriptLast = 1000
	// DefaultPeekLines is how many lines of the pane a peek shows when the
	// caller names no number.
	DefaultPeekLines = 40
	// MaxPeekLines bounds one peek (the pane's history included).
	MaxPeekLines = 2000
)

// TranscriptStanding returns the last `last` entries (0: DefaultTranscriptLast;
// at most MaxTranscriptLast) of the conversation the record of name holds:
// one per user prompt and one per assistant answer, oldest first. The file
// read is the harness adapter's, computed from the recorded cwd and
// conversation id — for claude, <CLAUDE_CONFIG_DIR or ~/.claude>/projects/
// <cwd, each non-alphanumeric character as '-'>/<id>.jsonl, with
// CLAUDE_CONFIG_DIR read from this process's environment: the process that
// spawns an agent passes it its own, so the service (or the CLI) that
// started the agent reads where the agent writes. A session declared but
// never started, or a file missing or half-written, gives fewer entries
// (none), never an error. An unknown name is ENOTFOUND; a harness whose
// adapter reads no transcript is EINVALID, naming it.
func (s *Service) TranscriptStanding(ctx context.Context, cfg *config.Config, name string, last int) (loop.TranscriptResult, error) {
	if err := loop.CheckName(name); err != nil {
		return loop.TranscriptResult{}, err
	}
	if last == 0 {
		last = DefaultTranscriptLast
	}
	if last < 1 || last > MaxTranscriptLast {
		return loop.TranscriptResult{}, loop.Invalid("last %d is out of range: ask for 1 to %d entries (default %d)", last, MaxTranscriptLast, DefaultTranscriptLast)
	}
	rec, err := s.read(name)
	if err != nil {
		return loop.TranscriptResult{}, err
	}
	def, declared := tolerantBlock(cfg).Get(name)
	started := rec != nil && rec.Status != loop.StatusAbsent
	if !started && !declared {
		return loop.TranscriptResult{}, unknownStanding(name)
	}
	harnessName := def.Harness
	if started && rec.Harness != "" {
		harnessName = rec.Harness
	}
	adapter, err := s.Harness(harnessName, name)
	if err != nil {
		return loop.TranscriptResult{}, err
	}
	if !adapter.ReadsTranscripts() {
		return loop.TranscriptResult{}, loop.Invalid("standing session '%[1]s' runs the %[2]s harness, whose transcript the-loop cannot read (claude's, codex's and gemini's it can); "+
			"see its screen with `the-loop standing peek %[1]s` instead", name, adapter.Name())
	}
	res := loop.TranscriptResult{Name: name, Entries: []loop.TranscriptEntry{}}
	if !started || rec.HarnessSessionID == "" {
		return res, nil
	}
	if err := adapter.CheckSessionID(rec.HarnessSessionID); err != nil {
		return loop.TranscriptResult{}, recordedIDRefused(name, err)
	}
	entries, err := adapter.ReadTranscript(rec.Cwd, rec.HarnessSessionID, last)
	if err != nil {
		return loop.TranscriptResult{}, err
	}
	if entries != nil {
		res.Entries = entries
	}
	return res, nil
}

// PeekStanding returns the last `lines` lines (0: DefaultPeekLines; at most
// MaxPeekLines) of the agent's own pane of name — the tmux session the-loop
// spawned for the recorded conversation (its tag), never one someone else
// put under the name — with where it runs (target, socket) and whether its
// process still runs (a dead pane is shown too: it holds the agent's last
// words). No pane to peek at is ENOTFOUND, tmux not answering EINTERNAL.
func (s *Service) PeekStanding(ctx context.Context, cfg *config.Config, name string, lines int) (loop.PeekResult, error) {
	if err := loop.CheckName(name); err != nil {
		return loop.PeekResult{}, err
	}
	if lines == 0 {
		lines = DefaultPeekLines
	}
	if lines < 1 || lines > MaxPeekLines {
		return loop.PeekResult{}, loop.Invalid("lines %d is out of range: ask for 1 to %d lines (default %d)", lines, MaxPeekLines, DefaultPeekLines)
	}
	rec, err := s.read(name)
	if err != nil {
		return loop.PeekResult{}, err
	}
	if rec == nil || rec.Status == loop.StatusAbsent {
		if _, declared := tolerantBlock(cfg).Get(name); !declared {
			return loop.PeekResult{}, unknownStanding(name)
		}
		return loop.PeekResult{}, neverStarted(name, "there is no pane to peek at")
	}
	target := loop.TmuxTargetFor(name)
	runner := s.Runner(rec.TmuxSocket)
	state := engine.Probe(ctx, runner, target)
	switch state {
	case loop.PaneAbsent:
		return loop.PeekResult{}, loop.NotFound("standing session '%[1]s' has no tmux session %[2]s (on %[3]s) to peek at; run `the-loop standing start %[1]s` to start it", name, target, loop.TmuxCommand(rec.TmuxSocket))
	case loop.PaneUnknown:
		return loop.PeekResult{}, loop.Internal("tmux (%s) did not answer whether %s exists; try again shortly", loop.TmuxCommand(rec.TmuxSocket), target)
	}
	if mine, err := engine.Ours(ctx, runner, target, rec.TagFor(rec.HarnessSessionID)); err != nil {
		return loop.PeekResult{}, err
	} else if !mine {
		return loop.PeekResult{}, loop.NotFound("standing session '%s' has no pane of the-loop's to peek at — %s", name,
			engine.NotOurs(target, rec.TmuxSocket, "it is not the agent the-loop started for this record"))
	}
	got, err := runner.Capture(ctx, target, lines)
	if err != nil {
		return loop.PeekResult{}, err
	}
	if got == nil {
		got = []string{}
	}
	return loop.PeekResult{Name: name, TmuxTarget: target, TmuxSocket: rec.TmuxSocket, Running: state == loop.PaneLive, Lines: got}, nil
}
