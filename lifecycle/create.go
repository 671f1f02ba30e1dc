package lifecycle

import (
	"context"
	"errors"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/store"
)

// CreateStanding records a standing session's whole definition and (unless asked
// not to) starts it. A name already declared or recorded is refused; a
// create whose start fails leaves no record.
func (s *Service) CreateStanding(ctx context.Context, cfg *config.Config, req loop.StandingCreateRequest) (loop.StandingControlResult, error) {
	name := req.Name
	if err := loop.CheckName(name); err != nil {
		return loop.StandingControlResult{}, err
	}
	block, err := standingBlock(cfg)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	if _, ok := block.Get(name); ok {
		return loop.StandingControlResult{}, loop.Invalid("standing session '%[1]s' is already declared in standingSessions.sessions; start it with `the-loop standing start %[1]s` rather than creating a second definition for one name", name)
	}
	if req.Restart != "" && !loop.ValidRestartPolicy(req.Restart) {
		return loop.StandingControlResult{}, loop.Invalid("restart '%s' is not a restart policy: use on-failure, always or never (or leave it out to inherit standingSessions.restart.policy)", req.Restart)
	}
	harness, args, cwd := createdDefaults(cfg, req)
	if err := s.checkTrustCwd(cfg, cwd, req.Cwd == ""); err != nil {
		return loop.StandingControlResult{}, err
	}
	rec, err := s.transition(ctx, name, engine.EvCreate, func(r *loop.StandingRecord) error {
		r.Harness = harness
		r.Cwd = cwd
		r.Description = req.Description
		r.Prompt = req.Prompt
		r.HarnessArgs = args
		r.AutoStart = req.AutoStart
		r.SlackEnabled = req.SlackEnabled
		r.SlackChannel = req.SlackChannel
		r.Origin = loop.OriginCreated
		r.Restart = req.Restart
		r.TmuxSocket = cfg.Routing.Tmux.SocketName
		return nil
	}, s.event("standing.created", loop.LevelInfo, loop.F("standing", name), loop.F("harness", harness),
		loop.F("cwd", cwd), loop.F("auto_start", req.AutoStart)))
	if err != nil {
		if errors.Is(err, engine.ErrTransition) {
			return loop.StandingControlResult{}, loop.Invalid("standing session '%[1]s' already exists; `the-loop standing start %[1]s` to run it, or `the-loop standing delete %[1]s` to remove it first", name)
		}
		return loop.StandingControlResult{}, err
	}
	if !req.Start {
		return loop.StandingControlResult{Sessions: []loop.StandingRow{rowFor(name, nil, rec, false)}, OK: true}, nil
	}
	return s.startCreated(ctx, cfg, name)
}

// DeleteStanding stops a created session gracefully, then forgets it (its record and
// its Slack thread binding). A declared session is refused; a stop that
// fails keeps the record (decisions D17).
func (s *Service) DeleteStanding(ctx context.Context, cfg *config.Config, name string) (loop.StandingControlResult, error) {
	if err := loop.CheckName(name); err != nil {
		return loop.StandingControlResult{}, err
	}
	if _, ok := tolerantBlock(cfg).Get(name); ok {
		return loop.StandingControlResult{}, loop.Invalid("standing session '%[1]s' is declared in standingSessions.sessions, so deleting its record would not remove it — `the-loop start` would bring it back. Remove the entry from the config, or stop it with `the-loop standing stop %[1]s`", name)
	}
	rec, err := s.read(name)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	if rec == nil {
		return loop.StandingControlResult{}, unknownStanding(name)
	}
	stopped, err := s.StopStanding(ctx, cfg, name)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	if !stopped.OK {
		return stopped, nil
	}
	removed, evs := s.unseedTrust(rec)
	deleted := s.event("standing.deleted", loop.LevelInfo, loop.F("standing", name))
	if len(removed) > 0 {
		deleted = s.event("standing.deleted", loop.LevelInfo, loop.F("standing", name), loop.F("trust_removed", removed))
	}
	_, err = s.transitionWith(ctx, name, engine.EvDelete, nil, func(tx *store.Tx) error {
		_, err := tx.UnbindRef(loop.StandingRef(name))
		return err
	}, append(evs, deleted)...)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	for i := range stopped.Sessions {
		r := &stopped.Sessions[i]
		r.Outcome, r.Status, r.Running = loop.OutcomeDeleted, loop.StatusAbsent, false
		r.Detail = "stopped and forgot " + r.TmuxTarget
	}
	return stopped, nil
}

// createdDefaults are a create's harness, args and directory: the
// request's, else routing's defaults (routing.defaultHarness, else claude;
// routing.harnessArgs of the harness; routing.spawnWorkdir, else ".").
func createdDefaults(cfg *config.Config, req loop.StandingCreateRequest) (harness string, args []string, cwd string) {
	harness = req.Harness
	if harness == "" {
		harness = cfg.Routing.DefaultHarness
	}
	if harness == "" {
		harness = "claude"
	}
	args = []string{}
	if req.HarnessArgs != nil {
		args = append(args, (*req.HarnessArgs)...)
	} else if inherited, ok := cfg.Routing.HarnessArgs[harness]; ok {
		args = append(args, inherited...)
	}
	cwd = req.Cwd
	if cwd == "" {
		cwd = cfg.Routing.SpawnWorkdir
	}
	if cwd == "" {
		cwd = "."
	}
	return harness, args, cwd
}

// startCreated starts the session a create just recorded; a start that
// fails takes the record back (standing.create_failed): a failed create
// leaves no record, and its rows say absent.
func (s *Service) startCreated(ctx context.Context, cfg *config.Config, name string) (loop.StandingControlResult, error) {
	res, err := s.StartStanding(ctx, cfg, name, false)
	if err == nil && res.OK {
		return res, nil
	}
	var details []string
	for _, r := range res.Sessions {
		if r.Detail != "" {
			details = append(details, r.Detail)
		}
	}
	if err != nil {
		details = append(details, loop.ErrorMessage(err))
	}
	if _, terr := s.transition(ctx, name, engine.EvCreateFailed, nil, s.event("standing.create_failed", loop.LevelError,
		loop.F("standing", name), loop.F("error", strings.Join(details, "; ")))); terr != nil && err == nil {
		err = terr
	}
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	for i := range res.Sessions {
		res.Sessions[i].Status = loop.StatusAbsent
	}
	return res, nil
}
