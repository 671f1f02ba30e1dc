package lifecycle

import (
	"context"
	"sort"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/store"
)

// standingBlock returns the parsed standingSessions block, refusing a
// malformed one (every verb but stop lets the refusal through).
func standingBlock(cfg *config.Config) (*config.StandingConfig, error) {
	if cfg.StandingErr != nil {
		return nil, cfg.StandingErr
	}
	if cfg.Standing == nil {
		return &config.StandingConfig{}, nil
	}
	return cfg.Standing, nil
}

// tolerantBlock is the block for stop, delete's and create's checks: a
// malformed block counts as no declaration.
func tolerantBlock(cfg *config.Config) *config.StandingConfig {
	if cfg.StandingErr != nil || cfg.Standing == nil {
		return &config.StandingConfig{}
	}
	return cfg.Standing
}

// records lists every standing record.
func (s *Service) records() ([]*loop.StandingRecord, error) {
	return engine.ReadAll(s.engine(), (*store.Tx).ListStanding)
}

// unknownStanding is the one wording of a standing session name that is
// neither declared nor recorded (ENOTFOUND), whichever verb was asked.
func unknownStanding(name string) *loop.Error {
	return loop.NotFound("no standing session '%s' — it is neither declared in standingSessions.sessions nor recorded; `the-loop standing list` shows the ones there are", name)
}

// neverStarted is the one wording of a declared standing session that has
// never been started (ENOTFOUND), for a verb that needs it running; why
// says what it cannot do without it.
func neverStarted(name, why string) *loop.Error {
	return loop.NotFound("standing session '%[1]s' has never been started, so %[2]s; run `the-loop standing start %[1]s` first", name, why)
}

// entryFor answers "what is this session" from whichever source has it
// (original §5.3): the config entry when declared, else the record's definition.
func (s *Service) entryFor(cfg *config.Config, block *config.StandingConfig, name string) (loop.StandingDefinition, error) {
	if def, ok := block.Get(name); ok {
		return def, nil
	}
	rec, err := s.read(name)
	if err != nil {
		return loop.StandingDefinition{}, err
	}
	if rec == nil || rec.Status == loop.StatusAbsent {
		return loop.StandingDefinition{}, unknownStanding(name)
	}
	def := rec.Definition()
	def.PermissionMode = block.ModeFor(def.Harness, "") // a created session's is the block's
	return def, nil
}

// rowFor renders one session (original §5.2, with decisions D16's accurate declared
// and autoStart).
func rowFor(name string, def *loop.StandingDefinition, rec *loop.StandingRecord, running bool) loop.StandingRow {
	row := loop.StandingRow{
		Name:       name,
		TmuxTarget: loop.TmuxTargetFor(name),
		Ref:        loop.StandingRef(name),
		Status:     loop.StatusAbsent,
		Running:    running,
		Activity:   loop.ActivityUnknown,
	}
	if def != nil && def.Declared {
		row.Declared = true
		row.Description = def.Description
		row.AutoStart = def.AutoStart
		row.Harness = def.Harness
		row.Cwd = def.Cwd
		row.Origin = loop.OriginConfig
	}
	if rec != nil {
		if rec.Status != "" {
			row.Status = rec.Status
		}
		if rec.Harness != "" {
			row.Harness = rec.Harness
		}
		if rec.Cwd != "" {
			row.Cwd = rec.Cwd
		}
		if !row.Declared {
			row.Description = rec.Description
			row.AutoStart = rec.Origin == loop.OriginCreated && rec.AutoStart
			row.Origin = rec.Origin
		}
		row.HarnessSessionID = rec.HarnessSessionID
		row.SlackChannel = rec.SlackChannel
		row.SlackThread = rec.SlackThread
		row.StartedAt = rec.StartedAt
		row.LastMessageAt = rec.LastMessageAt
		row.Restarts = rec.Restarts
		row.LastExit = rec.LastExit
		row.Activity, row.ActivityAt, row.LastAnswerAt, row.Tokens = rec.RowFields(running)
		if rec.Status == loop.StatusBroken { // undecodable: say why, claim nothing runs
			row.Running = false
			row.Detail = rec.Broken + " — the other sessions are unaffected; `the-loop standing delete " + name + "` removes it"
		} else if !row.Running {
			row.DownReason = downReason(rec)
		}
	}
	return row
}

// downReason says why a recorded session that is not running is down
// (StandingRow.DownReason): what the record last noted (LastDown), else
// its last exit, else that a running record's pane went away unrecorded.
func downReason(rec *loop.StandingRecord) string {
	switch {
	case rec.LastDown != nil:
		return rec.LastDown.Why + " (" + rec.LastDown.At + ")"
	case rec.Status == loop.StatusRunning && rec.LastExit != nil:
		return "its agent " + rec.LastExit.String() + " (" + rec.LastExit.At + ")"
	case rec.Status == loop.StatusRunning:
		return "its tmux session is gone and no exit was recorded (only the service's supervisor records exits)"
	}
	return ""
}

// ListStanding returns one row per declared or recorded session, sorted by name,
// with liveness from one tmux query per socket in use.
func (s *Service) ListStanding(ctx context.Context, cfg *config.Config) ([]loop.StandingRow, error) {
	_ = s.applySpool(ctx, cfg.StateDir()) // hooks heard while the store was locked; best-effort
	block, err := standingBlock(cfg)
	if err != nil {
		return nil, err
	}
	recs, err := s.records()
	if err != nil {
		return nil, err
	}
	rows := s.rows(ctx, block, recs)
	s.markSupervised(cfg, block, recs, rows)
	return rows, nil
}

func (s *Service) rows(ctx context.Context, block *config.StandingConfig, recs []*loop.StandingRecord) []loop.StandingRow {
	byName := map[string]*loop.StandingRecord{}
	bySocket := map[string][]string{}
	for _, r := range recs {
		byName[r.Name] = r
		if r.Status != loop.StatusBroken {
			bySocket[r.TmuxSocket] = append(bySocket[r.TmuxSocket], loop.TmuxTargetFor(r.Name))
		}
	}
	live := map[string]bool{}
	for socket, targets := range bySocket {
		for target, st := range s.Runner(socket).States(ctx, targets) {
			// Liveness that cannot be known is not running:
			// a cron check on status must not pass while tmux is
			// missing or silent.
			live[target] = st == loop.PaneLive
		}
	}
	names := map[string]bool{}
	for _, d := range block.Sessions {
		names[d.Name] = true
	}
	for n := range byName {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	rows := make([]loop.StandingRow, 0, len(sorted))
	for _, n := range sorted {
		var def *loop.StandingDefinition
		if d, ok := block.Get(n); ok {
			def = &d
		}
		rec := byName[n]
		rows = append(rows, rowFor(n, def, rec, rec != nil && live[loop.TmuxTargetFor(n)]))
	}
	return rows
}

// GetStanding returns one session's row.
func (s *Service) GetStanding(ctx context.Context, cfg *config.Config, name string) (loop.StandingRow, error) {
	if err := loop.CheckName(name); err != nil {
		return loop.StandingRow{}, err
	}
	rows, err := s.ListStanding(ctx, cfg)
	if err != nil {
		return loop.StandingRow{}, err
	}
	for _, r := range rows {
		if r.Name == name {
			return r, nil
		}
	}
	return loop.StandingRow{}, unknownStanding(name)
}
