package lifecycle

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/credential"
)

// launch is what a start needs of a kind beyond its records: where its
// pane runs, what it spawns and what it reports. Res is what a start
// returns (a standing row, a work item's start result).
type launch[R, Res any] interface {
	kind[R]
	// runner is the tmux runner of socket with the kind's entry points.
	runner(socket string) (loop.Runner, error)
	// ready resolves, before anything is probed, what the start needs of
	// the record; an error ends the start as is.
	ready(rec *R) error
	// placed is the socket an up record's pane runs on (ok false: the
	// record is not up, its pane goes on the configured socket).
	placed(rec *R) (socket string, ok bool)
	// owns reports whether rec may own a live pane under its name.
	owns(rec *R) bool
	// version is what a later transition checks it still finds.
	version(rec *R) string
	// conversation is the recorded conversation id and whether a start
	// may resume it.
	conversation(rec *R) (id string, resumable bool)
	// claimed writes the start's claim into the record, with the hash of
	// the spawn's own agent credential.
	claimed(rec *R, c *loop.Claim, socket, tokenHash string)
	// adopted writes what already-running records of a live pane.
	adopted(rec *R)
	// plan is what to spawn, or why not (after the claim).
	plan(rec *R) (spawnPlan, *refusal)
	// up writes a started or resumed session into its record.
	up(rec *R, p spawnPlan, id, socket string)
	// announce runs after a start is recorded (Slack), returning the
	// record as it then is.
	announce(ctx context.Context, rec *R) *R
	// result is the start's outcome as the kind reports it; detail says
	// why a start failed.
	result(rec *R, running bool, outcome, detail string) Res
	// spawnIn starts spec in the kind's tmux session (a dead agent pane
	// there is respawned in place).
	spawnIn(ctx context.Context, r loop.Runner, spec loop.SpawnSpec) error
	// notMine is why a live pane under an owning record is refused.
	notMine() string
	// hearing is what the record keeps of the agent's hooks.
	hearing(rec *R) *loop.Hearing
	// sessionRef is the session's ref, as the hook command names it.
	sessionRef() string
}

// spawnPlan is what a start spawns.
type spawnPlan struct {
	harness string
	adapter loop.Harness
	args    []string
	cwd     string // absolute
	// env is the entry's own variables (standingSessions.sessions[].env),
	// over routing.harnessEnv.
	env map[string]string
	// resumePrompt goes into a resumed conversation, freshPrompt boots a
	// new one.
	resumePrompt, freshPrompt string
	// trustAdded are the trust entries this start's Prepare added.
	trustAdded []loop.TrustEntry
}

// refusal is why a claimed start spawns nothing.
type refusal struct {
	detail string
	fields []loop.Field
}

// starter carries one start through its transitions.
type starter[R, Res any] struct {
	s      *Service
	cfg    *config.Config
	k      launch[R, Res]
	socket string // the configured socket: where a new pane goes
	runner loop.Runner
	// pending events ride on the next transition.
	pending []loop.Event
	// paneTag is the tag a fresh spawn's pane keeps when its conversation
	// id was captured afterwards (captured): the record's PaneTag.
	paneTag string
}

// startIn is one start: it evaluates the record and the pane until an
// evaluation is final (a claim finished, or the record changed meanwhile,
// ask for another). The error is a read's, or the kind's ready.
func startIn[R, Res any](ctx context.Context, s *Service, cfg *config.Config, k launch[R, Res]) (Res, error) {
	st := &starter[R, Res]{s: s, cfg: cfg, k: k, socket: cfg.Routing.Tmux.SocketName}
	for attempt := 0; attempt < 20; attempt++ {
		res, again, err := st.attempt(ctx)
		if err != nil || !again {
			return res, err
		}
	}
	return st.failed(nil, "the record kept changing under the start; try again"), nil
}

func (st *starter[R, Res]) failed(rec *R, detail string) Res {
	return st.k.result(rec, false, loop.OutcomeFailed, detail)
}

func (st *starter[R, Res]) takePending() []loop.Event {
	p := st.pending
	st.pending = nil
	return p
}

// attempt evaluates the record and the pane once; again asks for another
// evaluation.
func (st *starter[R, Res]) attempt(ctx context.Context) (res Res, again bool, err error) {
	s, k, target := st.s, st.k, st.k.target()
	rec, err := readIn(s, k)
	if err != nil {
		return res, false, err
	}
	if rec != nil && k.claim(rec) != nil {
		if err := clearClaim(ctx, s, k, rec); err != nil {
			return st.failed(rec, loop.ErrorMessage(err)), false, nil
		}
		return res, true, nil
	}
	if err := k.ready(rec); err != nil {
		return res, false, err
	}
	// An up record's pane is probed where it runs.
	socket := st.socket
	if at, ok := k.placed(rec); ok {
		socket = at
	}
	runner, err := k.runner(socket)
	if err != nil {
		return res, false, err
	}
	state := probe(ctx, runner, target)
	if state == loop.PaneUnknown {
		return st.failed(rec, fmt.Sprintf("tmux did not answer whether %s exists; not spawning over it", target)), false, nil
	}
	if state == loop.PaneLive {
		res, again := st.live(ctx, rec, runner, socket)
		return res, again, nil
	}
	if socket != st.socket { // the old socket's pane is gone: start on the configured one
		if runner, err = k.runner(st.socket); err != nil {
			return res, false, err
		}
		if state = probe(ctx, runner, target); state == loop.PaneUnknown || state == loop.PaneLive {
			return st.failed(rec, fmt.Sprintf("tmux session %s on the configured socket is %s; not spawning over it", target, state)), false, nil
		}
	}
	st.runner = runner
	res, again = st.spawn(ctx, rec, state)
	return res, again, nil
}

// unchanged is the guard of a transition that depends on what the caller
// saw: the same version of the record, and no claim.
func (st *starter[R, Res]) unchanged(seen string, then func(r *R)) func(r *R) error {
	return func(r *R) error {
		if st.k.version(r) != seen || st.k.claim(r) != nil {
			return errStale
		}
		if then != nil {
			then(r)
		}
		return nil
	}
}

// live handles a live pane: already-running when it is the agent the
// record says the-loop started (its tag), refused otherwise — with no
// record, or under a record it does not belong to — and never touched.
func (st *starter[R, Res]) live(ctx context.Context, rec *R, runner loop.Runner, socket string) (Res, bool) {
	s, k, target := st.s, st.k, st.k.target()
	var none Res
	why, shown := "the-loop has no record of it", (*R)(nil)
	if k.owns(rec) {
		shown = rec
		id, _ := k.conversation(rec)
		mine, err := ours(ctx, runner, target, k.hearing(rec).TagFor(id))
		if err != nil {
			return st.failed(rec, loop.ErrorMessage(err)), false
		}
		if mine {
			out, err := transitionIn(ctx, s, k, EvAlreadyRunning, st.unchanged(k.version(rec), k.adopted), nil)
			if stale(err) {
				return none, true
			}
			if err != nil {
				return st.failed(rec, err.Error()), false
			}
			return k.result(out, true, loop.OutcomeAlreadyRunning, ""), false
		}
		why = k.notMine()
	}
	ev := s.event(k.logEvent("spawn_failed"), loop.LevelError, k.subject(),
		loop.F("tmux_target", target), loop.F("error", "tmux session exists but "+why))
	// A refusal is a transition where the machine has one for the state
	// (it refuses "refuse" if the record changed meanwhile), else an event.
	if _, err := k.next(k.state(rec), EvRefuse); err == nil {
		_, err := transitionIn(ctx, s, k, EvRefuse, st.noteDown("its start was refused: tmux session "+target+" exists but "+why, st.unchanged(k.version(rec), nil)), nil, ev)
		if stale(err) {
			return none, true
		}
		if err != nil {
			return st.failed(shown, err.Error()), false
		}
	} else if err := s.Emit(ev); err != nil {
		return st.failed(shown, err.Error()), false
	}
	return st.failed(shown, notOurs(target, socket, why)), false
}

// spawn claims the session, clears a dead pane, checks what the kind plans
// to spawn and spawns it (resume first when there is a conversation to
// continue).
func (st *starter[R, Res]) spawn(ctx context.Context, rec *R, state loop.PaneState) (Res, bool) {
	claimed, cred, resume, res, again, ok := st.claimSpawn(ctx, rec, state)
	if !ok {
		return res, again
	}
	p, bin, res, again, ok := st.prepare(ctx, rec)
	if !ok {
		return res, again
	}
	id := st.k.claim(claimed).HarnessSessionID
	note := "" // what the row says of a resume that fell back
	if resume {
		var done bool
		if id, note, res, again, done = st.resume(ctx, rec, claimed, cred, p, bin); done {
			return res, again
		}
	}
	argv, err := p.adapter.FreshArgv(id, p.args, p.freshPrompt)
	if err == nil {
		err = st.k.spawnIn(ctx, st.runner, st.spec(cred, p, bin, argv, id))
	}
	if err != nil && !st.spawned(ctx, id) {
		return st.spawnFailed(ctx, rec, loop.ErrorMessage(err), loop.F("harness", p.harness), loop.F("tmux_target", st.k.target()))
	}
	if id, err = st.captured(ctx, p, id); err != nil { // a CLI that chooses its own id (codex)
		return st.captureFailed(ctx, rec, p, err)
	}
	return st.up(ctx, EvStarted, p, id, loop.OutcomeStarted, note)
}

// claimSpawn claims the start of rec (resuming its recorded conversation
// when it may), with the spawn's own credential, and clears a dead pane.
// ok is false when the start ends here: with res, again (the record
// changed under it) as spawn returns them.
func (st *starter[R, Res]) claimSpawn(ctx context.Context, rec *R, state loop.PaneState) (claimed *R, cred agentCredential, resume bool, res Res, again, ok bool) {
	s, k, target := st.s, st.k, st.k.target()
	recorded, resumable := k.conversation(rec)
	resume = recorded != "" && resumable && st.cfg.Routing.Tmux.ResumeOnRespawn
	claim := s.newClaim("start")
	claim.Resume = resume
	if resume {
		claim.HarnessSessionID = recorded
	} else {
		claim.HarnessSessionID = s.newID()
	}
	cred, err := s.newAgentCredential(st.cfg, target, st.k.sessionRef()) // the spawn's own credential
	if err != nil {
		return nil, cred, resume, st.failed(rec, loop.ErrorMessage(err)), false, false
	}
	claimed, err = transitionIn(ctx, s, k, EvClaimStart, st.unchanged(k.version(rec), func(r *R) {
		k.claimed(r, claim, st.socket, cred.hash)
		st.hearFrom(k.hearing(r), resume)
	}), nil)
	if stale(err) {
		return nil, cred, resume, res, true, false
	}
	if err != nil {
		return nil, cred, resume, st.failed(rec, err.Error()), false, false
	}
	if state == loop.PaneDead {
		// The dead agent pane is cleared by the spawn itself, which
		// respawns the harness into it: the tmux session, and any window
		// an operator opened in it, lives on.
		if _, err := transitionIn(ctx, s, k, EvClearDead, nil, nil, s.event(k.logEvent("dead_pane_cleared"), loop.LevelInfo,
			k.subject(), loop.F("tmux_target", target))); err != nil {
			return nil, cred, resume, st.failed(rec, err.Error()), false, false
		}
	}
	return claimed, cred, resume, res, false, true
}

// prepare checks what the kind plans to spawn and readies it: the harness
// binary, the directory's trust, the hooks. ok is false when the start
// ends here, with res and again as spawn returns them.
func (st *starter[R, Res]) prepare(ctx context.Context, rec *R) (p spawnPlan, bin string, res Res, again, ok bool) {
	s, k := st.s, st.k
	p, no := k.plan(rec)
	if no != nil {
		res, again = st.spawnFailed(ctx, rec, no.detail, no.fields...)
		return p, "", res, again, false
	}
	bin, err := st.binary(p)
	if err != nil {
		res, again = st.spawnFailed(ctx, rec, err.Error(), loop.F("harness", p.harness))
		return p, "", res, again, false
	}
	if err := seedTrust(&p); err != nil {
		st.pending = append(st.pending, s.event("workspace.trust_failed", loop.LevelWarning,
			k.subject(), loop.F("harness", p.harness), loop.F("cwd", p.cwd), loop.F("error", err.Error())))
	}
	if hookedHarness(p.adapter.Name()) && s.HookBinary != "" {
		// Every spawn of a CLI with hooks declares the hooks the-loop hears it by.
		if err := st.wireHooks(&p); err != nil {
			res, again = st.spawnFailed(ctx, rec, loop.ErrorMessage(err), loop.F("harness", p.harness))
			return p, "", res, again, false
		}
	}
	return p, bin, res, false, true
}

// resume spawns the claimed conversation again. done is true when the start
// ends here (up, or failed: res and again as spawn returns them); else the
// resume did not survive its probe, its pane is cleared and the start goes
// on fresh as id, with note saying so.
func (st *starter[R, Res]) resume(ctx context.Context, rec, claimed *R, cred agentCredential, p spawnPlan, bin string) (id, note string, res Res, again, done bool) {
	s, k, target := st.s, st.k, st.k.target()
	id = k.claim(claimed).HarnessSessionID
	argv, err := resumeArgv(p.adapter, id, p.args, p.resumePrompt)
	if err == nil {
		err = k.spawnIn(ctx, st.runner, st.spec(cred, p, bin, argv, id))
	}
	if err != nil && st.spawned(ctx, id) {
		res, again = st.up(ctx, EvResumed, p, id, loop.OutcomeResumed, "")
		return id, "", res, again, true
	}
	if err != nil {
		// The resume never ran, so it did not fail its probe: the
		// conversation stays recorded and whatever holds the name is
		// left alone.
		res, again = st.spawnFailed(ctx, rec, loop.ErrorMessage(err), loop.F("harness", p.harness), loop.F("tmux_target", target))
		return id, "", res, again, true
	}
	if s.survives(ctx, st.runner, st.socket, target, st.cfg.Routing.Tmux.ResumeProbe()) || st.spawned(ctx, id) {
		res, again = st.up(ctx, EvResumed, p, id, loop.OutcomeResumed, "")
		return id, "", res, again, true
	}
	last := lastLine(ctx, st.runner, target)
	err = fmt.Errorf("the resumed pane did not survive the probe (%s)", last)
	if detail := clearOwn(ctx, st.runner, target, id); detail != "" {
		res, again = st.spawnFailed(ctx, rec, detail, loop.F("tmux_target", target))
		return id, "", res, again, true
	}
	id = s.newID()
	note = fmt.Sprintf("resume of %s failed (%s); started fresh as %s", k.claim(claimed).HarnessSessionID, last, id)
	if _, terr := transitionIn(ctx, s, k, EvResumeFailed, func(r *R) error {
		c := k.claim(r)
		c.HarnessSessionID, c.Resume = id, false
		h := k.hearing(r)
		h.Tokens, h.TokensThrough = nil, "" // a new conversation counts from zero
		return nil
	}, nil, append(st.takePending(), s.event(k.logEvent("resume_failed"), loop.LevelWarning,
		k.subject(), loop.F("harness_session_id", k.claim(claimed).HarnessSessionID),
		loop.F("error", loop.ErrorMessage(err))))...); terr != nil {
		return id, note, st.failed(rec, terr.Error()), false, true
	}
	return id, note, res, false, false
}

// spawned reports, for a start interrupted (ctx done: Ctrl-C) while it
// spawned or probed, whether the agent it spawned for conversation id runs
// and is tagged: then the start is recorded as what exists, a running
// agent, not as failed. A start that was not interrupted is judged as it is.
func (st *starter[R, Res]) spawned(ctx context.Context, id string) bool {
	if ctx.Err() == nil {
		return false
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	target := st.k.target()
	if st.runner.State(cctx, target) != loop.PaneLive {
		return false
	}
	mine, err := ours(cctx, st.runner, target, id)
	return err == nil && mine
}

// lastLine is the last line the pane shows (a dead pane's last output, not
// tmux's own "Pane is dead" notice), or a word saying there is none.
func lastLine(ctx context.Context, runner loop.Runner, target string) string {
	snap, err := runner.Snapshot(ctx, target)
	if err != nil {
		return "its pane could not be read: " + loop.ErrorMessage(err)
	}
	lines := strings.Split(snap.Screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "Pane is dead") {
			if r := []rune(l); len(r) > 200 {
				l = string(r[:200]) + "…"
			}
			return l
		}
	}
	return "its pane showed nothing"
}

// spec is what a spawn runs: bin and argv in p's directory, tagged id, in
// the agent's environment — the credential's (this process's environment
// without the-loop's secrets, plus the agent's token), with
// routing.harnessEnv and then the entry's env over it (the token stays).
func (st *starter[R, Res]) spec(cred agentCredential, p spawnPlan, bin string, argv []string, id string) loop.SpawnSpec {
	spec := cred.spec(p.adapter.Name(), loop.SpawnSpec{Argv: append([]string{bin}, argv...), Cwd: p.cwd, Tag: id})
	spec.Env = overlayEnv(spec.Env, st.cfg.Routing.HarnessEnv, p.env)
	return spec
}

// overlayEnv sets each overlay's variables in env, later overlays winning;
// the agent's own credential is never replaced.
func overlayEnv(env []string, overlays ...map[string]string) []string {
	set := map[string]string{}
	for _, o := range overlays {
		for k, v := range o {
			if k != "" && k != credential.AgentTokenEnv && !strings.Contains(k, "=") {
				set[k] = v
			}
		}
	}
	if len(set) == 0 {
		return env
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := set[k]; !over {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+set[k])
	}
	return out
}

// binary is the harness binary a spawn runs: routing.harnessBinaries'
// path for it, else the one on this process's PATH. The refusal says whose
// PATH was searched: the agent runs in the environment of the process that
// spawns it (the CLI in-process, the service otherwise).
func (st *starter[R, Res]) binary(p spawnPlan) (string, error) {
	return st.s.binaryOf(st.cfg, p.adapter)
}

// SourceRestart is the Source of a Service that only checks, for `the-loop
// restart`, what the restarted service would find (HarnessBinary): its
// refusals name the restart's environment.
const SourceRestart = "restart"

// HarnessBinary is the binary a spawn of harness (for session) would run,
// resolved as the spawn resolves it in this process's environment — or the
// error that spawn would fail with (EINVALID), naming whose PATH was
// searched and the remedy. Restart asks it before it stops anything.
func (s *Service) HarnessBinary(cfg *config.Config, harness, session string) (string, error) {
	adapter, err := s.Harness(harness, session)
	if err != nil {
		return "", err
	}
	bin, err := s.binaryOf(cfg, adapter)
	if err != nil {
		return "", loop.Invalid("%s", err.Error())
	}
	return bin, nil
}

// binaryOf is adapter's binary: routing.harnessBinaries' path for it, else
// the one on this process's PATH.
func (s *Service) binaryOf(cfg *config.Config, adapter loop.Harness) (string, error) {
	name := adapter.Name()
	if path := cfg.Routing.HarnessBinaries[name]; path != "" {
		fi, err := os.Stat(path)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("routing.harnessBinaries.%s is '%s', which is not an executable file — install the %s CLI there or fix the path", name, path, name)
		}
		return path, nil
	}
	bin, err := s.LookPath(adapter.Binary())
	if err == nil {
		return bin, nil
	}
	whose := fmt.Sprintf("this the-loop CLI's (pid %d: with no service running, the CLI spawns the agent in its own environment)", os.Getpid())
	switch s.Source {
	case "service":
		whose = fmt.Sprintf("the the-loop service's (pid %d: the service spawns the agent, in the environment it was started with)", os.Getpid())
	case SourceRestart:
		whose = fmt.Sprintf("this `the-loop restart`'s (pid %d: the service it starts again, and each agent, inherit its environment)", os.Getpid())
	}
	return "", fmt.Errorf("harness CLI '%s' not found on PATH — the PATH searched is %s, PATH=%s; install it there, set routing.harnessBinaries.%s to its absolute path, or restart the service with it on its PATH",
		adapter.Binary(), whose, os.Getenv("PATH"), name)
}

// hearFrom readies a claimed record's hearing for the spawn: starting (no
// SessionStart yet) when hooks will be installed, no running turn, and a
// fresh conversation's token totals from zero.
func (st *starter[R, Res]) hearFrom(h *loop.Hearing, resume bool) {
	h.Activity, h.ActivityAt, h.TurnPromptID, h.PaneTag, h.Queued = "", "", "", "", 0
	if st.s.HookBinary != "" {
		h.Activity, h.ActivityAt = loop.ActivityStarting, st.s.stamp()
	}
	if !resume {
		h.Tokens, h.TokensThrough = nil, ""
	}
}

// downNoter is a kind whose record keeps why it last went down (a
// standing session's LastDown).
type downNoter[R any] interface {
	noteDown(rec *R, why, at string)
}

// noteDown is a transition's mutate recording why (then) on a kind that
// keeps it; then runs first and may refuse.
func (st *starter[R, Res]) noteDown(why string, then func(r *R) error) func(r *R) error {
	return func(r *R) error {
		if then != nil {
			if err := then(r); err != nil {
				return err
			}
		}
		if n, ok := any(st.k).(downNoter[R]); ok {
			n.noteDown(r, why, st.s.stamp())
		}
		return nil
	}
}

// spawnFailed records <kind>.spawn_failed and releases the claim (back to
// where the start came from).
func (st *starter[R, Res]) spawnFailed(ctx context.Context, prior *R, detail string, extra ...loop.Field) (Res, bool) {
	s, k := st.s, st.k
	fields := append([]loop.Field{k.subject()}, extra...)
	fields = append(fields, loop.F("error", detail))
	out, err := transitionIn(ctx, s, k, EvSpawnFailed, st.noteDown("its start failed: "+detail, nil), nil, append(st.takePending(), s.event(k.logEvent("spawn_failed"), loop.LevelError, fields...))...)
	if err != nil {
		detail += "; and the failure could not be recorded: " + err.Error()
		out = prior
	}
	return st.failed(out, detail), false
}

// up records a successful start or resume and announces it; note, when
// set, is what the row says of it (a resume that fell back).
func (st *starter[R, Res]) up(ctx context.Context, event string, p spawnPlan, id, outcome, note string) (Res, bool) {
	s, k, target := st.s, st.k, st.k.target()
	ev := k.logEvent("started")
	if event == EvResumed {
		ev = k.logEvent("resumed")
	}
	hooked := hookedHarness(p.adapter.Name()) && s.HookBinary != ""
	out, err := transitionIn(ctx, s, k, event, func(r *R) error {
		k.up(r, p, id, st.socket)
		if h := k.hearing(r); !hooked { // a harness without hooks: nothing will be heard
			h.Activity, h.ActivityAt = "", ""
		}
		if st.paneTag != "" && st.paneTag != id { // the id was captured after the spawn
			k.hearing(r).PaneTag = st.paneTag
		}
		return nil
	}, nil, append(st.takePending(), s.event(ev, loop.LevelInfo,
		k.subject(), loop.F("harness", p.harness), loop.F("harness_session_id", id),
		loop.F("tmux_target", target), loop.F("cwd", p.cwd)))...)
	if err != nil {
		return st.failed(nil, "the agent runs in "+target+" but its record could not be written: "+err.Error()), false
	}
	out = k.announce(ctx, out)
	return k.result(out, true, outcome, note), false
}
