package engine

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

// Launch is what a start needs of a kind beyond its records: where its
// pane runs, what it spawns and what it reports. Res is what a start
// returns (a standing row, a work item's start result).
type Launch[R, Res any] interface {
	Kind[R]
	// runner is the tmux runner of socket with the kind's entry points.
	Runner(socket string) (loop.Runner, error)
	// ready resolves, before anything is probed, what the start needs of
	// the record; an error ends the start as is.
	Ready(rec *R) error
	// placed is the socket an up record's pane runs on (ok false: the
	// record is not up, its pane goes on the configured socket).
	Placed(rec *R) (socket string, ok bool)
	// owns reports whether rec may own a live pane under its name.
	Owns(rec *R) bool
	// version is what a later transition checks it still finds.
	Version(rec *R) string
	// conversation is the recorded conversation id and whether a start
	// may resume it.
	Conversation(rec *R) (id string, resumable bool)
	// claimed writes the start's claim into the record, with the hash of
	// the spawn's own agent credential.
	Claimed(rec *R, c *loop.Claim, socket, tokenHash string)
	// adopted writes what already-running records of a live pane.
	Adopted(rec *R)
	// plan is what to spawn, or why not (after the claim).
	Plan(rec *R) (Plan, *Refusal)
	// up writes a started or resumed session into its record.
	Up(rec *R, p Plan, id, socket string)
	// announce runs after a start is recorded (Slack), returning the
	// record as it then is.
	Announce(ctx context.Context, rec *R) *R
	// result is the start's outcome as the kind reports it; detail says
	// why a start failed.
	Result(rec *R, running bool, outcome, detail string) Res
	// spawnIn starts spec in the kind's tmux session (a dead agent pane
	// there is respawned in place).
	SpawnIn(ctx context.Context, r loop.Runner, spec loop.SpawnSpec) error
	// notMine is why a live pane under an owning record is refused.
	NotMine() string
	// hearing is what the record keeps of the agent's hooks.
	Hearing(rec *R) *loop.Hearing
	// sessionRef is the session's ref, as the hook command names it.
	SessionRef() string
}

// Plan is what a start spawns.
type Plan struct {
	Harness string
	Adapter loop.Harness
	Args    []string
	Cwd     string // absolute
	// Env is the entry's own variables (standingSessions.sessions[].Env),
	// over routing.harnessEnv.
	Env map[string]string
	// ResumePrompt goes into a resumed conversation, FreshPrompt boots a
	// new one.
	ResumePrompt, FreshPrompt string
	// TrustAdded are the trust entries this start's Prepare added.
	TrustAdded []loop.TrustEntry
	// Rules are the session's approval rules (its entry's, then the
	// shared ones), evaluated by its PreToolUse hook; none declares no
	// such hook.
	Rules []loop.ApprovalRule
}

// Refusal is why a claimed start spawns nothing.
type Refusal struct {
	Detail string
	Fields []loop.Field
}

// starter carries one start through its transitions.
type starter[R, Res any] struct {
	e      *Engine
	cfg    *config.Config
	k      Launch[R, Res]
	socket string // the configured socket: where a new pane goes
	runner loop.Runner
	// pending events ride on the next transition.
	pending []loop.Event
	// paneTag is the tag a fresh spawn's pane keeps when its conversation
	// id was captured afterwards (captured): the record's PaneTag.
	paneTag string
	// absent: the attempt's probe saw no session named the target, so the
	// next spawn does not look again (loop.SpawnSpec.Absent); a spawn
	// clears it.
	absent bool
}

// Start is one start: it evaluates the record and the pane until an
// evaluation is final (a claim finished, or the record changed meanwhile,
// ask for another). The error is a read's, or the kind's ready.
func Start[R, Res any](ctx context.Context, e *Engine, cfg *config.Config, k Launch[R, Res]) (Res, error) {
	st := &starter[R, Res]{e: e, cfg: cfg, k: k, socket: cfg.Routing.Tmux.SocketName}
	for attempt := 0; attempt < 20; attempt++ {
		res, again, err := st.attempt(ctx)
		if err != nil || !again {
			return res, err
		}
	}
	return st.failed(nil, "the record kept changing under the start; try again"), nil
}

func (st *starter[R, Res]) failed(rec *R, detail string) Res {
	return st.k.Result(rec, false, loop.OutcomeFailed, detail)
}

func (st *starter[R, Res]) takePending() []loop.Event {
	p := st.pending
	st.pending = nil
	return p
}

// attempt evaluates the record and the pane once; again asks for another
// evaluation.
func (st *starter[R, Res]) attempt(ctx context.Context) (res Res, again bool, err error) {
	e, k, target := st.e, st.k, st.k.Target()
	rec, err := Read(e, k)
	if err != nil {
		return res, false, err
	}
	if rec != nil && k.Claim(rec) != nil {
		if err := ClearClaim(ctx, e, k, rec); err != nil {
			return st.failed(rec, loop.ErrorMessage(err)), false, nil
		}
		return res, true, nil
	}
	if err := k.Ready(rec); err != nil {
		return res, false, err
	}
	// An up record's pane is probed where it runs.
	socket := st.socket
	if at, ok := k.Placed(rec); ok {
		socket = at
	}
	runner, err := k.Runner(socket)
	if err != nil {
		return res, false, err
	}
	state := Probe(ctx, runner, target)
	if state == loop.PaneUnknown {
		return st.failed(rec, fmt.Sprintf("tmux did not answer whether %s exists; not spawning over it", target)), false, nil
	}
	if state == loop.PaneLive {
		res, again := st.live(ctx, rec, runner, socket)
		return res, again, nil
	}
	if socket != st.socket { // the old socket's pane is gone: start on the configured one
		if runner, err = k.Runner(st.socket); err != nil {
			return res, false, err
		}
		if state = Probe(ctx, runner, target); state == loop.PaneUnknown || state == loop.PaneLive {
			return st.failed(rec, fmt.Sprintf("tmux session %s on the configured socket is %s; not spawning over it", target, state)), false, nil
		}
	}
	st.runner = runner
	st.absent = state == loop.PaneAbsent
	res, again = st.spawn(ctx, rec, state)
	return res, again, nil
}

// unchanged is the guard of a transition that depends on what the caller
// saw: the same version of the record, and no claim.
func (st *starter[R, Res]) unchanged(seen string, then func(r *R)) func(r *R) error {
	return func(r *R) error {
		if st.k.Version(r) != seen || st.k.Claim(r) != nil {
			return ErrStale
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
	e, k, target := st.e, st.k, st.k.Target()
	var none Res
	why, shown := "the-loop has no record of it", (*R)(nil)
	if k.Owns(rec) {
		shown = rec
		id, _ := k.Conversation(rec)
		mine, err := Ours(ctx, runner, target, k.Hearing(rec).TagFor(id))
		if err != nil {
			return st.failed(rec, loop.ErrorMessage(err)), false
		}
		if mine {
			out, err := Transition(ctx, e, k, EvAlreadyRunning, st.unchanged(k.Version(rec), k.Adopted), nil)
			if Stale(err) {
				return none, true
			}
			if err != nil {
				return st.failed(rec, err.Error()), false
			}
			return k.Result(out, true, loop.OutcomeAlreadyRunning, ""), false
		}
		why = k.NotMine()
	}
	ev := e.h.Event(k.LogEvent("spawn_failed"), loop.LevelError, k.Subject(),
		loop.F("tmux_target", target), loop.F("error", "tmux session exists but "+why))
	// A refusal is a transition where the machine has one for the state
	// (it refuses "refuse" if the record changed meanwhile), else an event.
	if _, err := k.Next(k.State(rec), EvRefuse); err == nil {
		_, err := Transition(ctx, e, k, EvRefuse, st.withDownNote("its start was refused: tmux session "+target+" exists but "+why, st.unchanged(k.Version(rec), nil)), nil, ev)
		if Stale(err) {
			return none, true
		}
		if err != nil {
			return st.failed(shown, err.Error()), false
		}
	} else if err := e.h.Emit(ev); err != nil {
		return st.failed(shown, err.Error()), false
	}
	return st.failed(shown, NotOurs(target, socket, why)), false
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
	id := st.k.Claim(claimed).HarnessSessionID
	note := "" // what the row says of a resume that fell back
	if resume {
		var done bool
		if id, note, res, again, done = st.resume(ctx, rec, claimed, cred, p, bin); done {
			return res, again
		}
	}
	argv, err := p.Adapter.FreshArgv(id, p.Args, p.FreshPrompt)
	if err == nil {
		err = st.k.SpawnIn(ctx, st.runner, st.spec(cred, p, bin, argv, id))
	}
	if err != nil && !st.spawned(ctx, id) {
		return st.spawnFailed(ctx, rec, loop.ErrorMessage(err), loop.F("harness", p.Harness), loop.F("tmux_target", st.k.Target()))
	}
	if id, err = st.captured(ctx, p, id); err != nil { // a CLI that chooses its own id (codex)
		return st.captureFailed(ctx, rec, p, err)
	}
	return st.recordUp(ctx, EvStarted, p, id, loop.OutcomeStarted, note)
}

// claimSpawn claims the start of rec (resuming its recorded conversation
// when it may), with the spawn's own credential, and clears a dead pane.
// ok is false when the start ends here: with res, again (the record
// changed under it) as spawn returns them.
func (st *starter[R, Res]) claimSpawn(ctx context.Context, rec *R, state loop.PaneState) (claimed *R, cred agentCredential, resume bool, res Res, again, ok bool) {
	e, k, target := st.e, st.k, st.k.Target()
	recorded, resumable := k.Conversation(rec)
	resume = recorded != "" && resumable && st.cfg.Routing.Tmux.ResumeOnRespawn
	claim := e.NewClaim("start")
	claim.Resume = resume
	if resume {
		claim.HarnessSessionID = recorded
	} else {
		claim.HarnessSessionID = e.h.NewID()
	}
	cred, err := e.newAgentCredential(st.cfg, target, st.k.SessionRef()) // the spawn's own credential
	if err != nil {
		return nil, cred, resume, st.failed(rec, loop.ErrorMessage(err)), false, false
	}
	claimed, err = Transition(ctx, e, k, EvClaimStart, st.unchanged(k.Version(rec), func(r *R) {
		k.Claimed(r, claim, st.socket, cred.hash)
		st.hearFrom(k.Hearing(r), resume)
	}), nil)
	if Stale(err) {
		return nil, cred, resume, res, true, false
	}
	if err != nil {
		return nil, cred, resume, st.failed(rec, err.Error()), false, false
	}
	if state == loop.PaneDead {
		// The dead agent pane is cleared by the spawn itself, which
		// respawns the harness into it: the tmux session, and any window
		// an operator opened in it, lives on.
		if _, err := Transition(ctx, e, k, EvClearDead, nil, nil, e.h.Event(k.LogEvent("dead_pane_cleared"), loop.LevelInfo,
			k.Subject(), loop.F("tmux_target", target))); err != nil {
			return nil, cred, resume, st.failed(rec, err.Error()), false, false
		}
	}
	return claimed, cred, resume, res, false, true
}

// prepare checks what the kind plans to spawn and readies it: the harness
// binary, the directory's trust, the hooks. ok is false when the start
// ends here, with res and again as spawn returns them.
func (st *starter[R, Res]) prepare(ctx context.Context, rec *R) (p Plan, bin string, res Res, again, ok bool) {
	e, k := st.e, st.k
	p, no := k.Plan(rec)
	if no != nil {
		res, again = st.spawnFailed(ctx, rec, no.Detail, no.Fields...)
		return p, "", res, again, false
	}
	bin, err := st.binary(p)
	if err != nil {
		res, again = st.spawnFailed(ctx, rec, err.Error(), loop.F("harness", p.Harness))
		return p, "", res, again, false
	}
	if err := seedTrust(&p); err != nil {
		st.pending = append(st.pending, e.h.Event("workspace.trust_failed", loop.LevelWarning,
			k.Subject(), loop.F("harness", p.Harness), loop.F("cwd", p.Cwd), loop.F("error", err.Error())))
	}
	if Hooked(p.Adapter.Name()) && e.h.HookBinary() != "" {
		// Every spawn of a CLI with hooks declares the hooks the-loop hears it by.
		if err := st.wireHooks(&p); err != nil {
			res, again = st.spawnFailed(ctx, rec, loop.ErrorMessage(err), loop.F("harness", p.Harness))
			return p, "", res, again, false
		}
	}
	return p, bin, res, false, true
}

// resume spawns the claimed conversation again. done is true when the start
// ends here (up, or failed: res and again as spawn returns them); else the
// resume did not survive its probe, its pane is cleared and the start goes
// on fresh as id, with note saying so.
func (st *starter[R, Res]) resume(ctx context.Context, rec, claimed *R, cred agentCredential, p Plan, bin string) (id, note string, res Res, again, done bool) {
	e, k, target := st.e, st.k, st.k.Target()
	id = k.Claim(claimed).HarnessSessionID
	argv, err := resumeArgv(p.Adapter, id, p.Args, p.ResumePrompt)
	if err == nil {
		err = k.SpawnIn(ctx, st.runner, st.spec(cred, p, bin, argv, id))
	}
	if err != nil && st.spawned(ctx, id) {
		res, again = st.recordUp(ctx, EvResumed, p, id, loop.OutcomeResumed, "")
		return id, "", res, again, true
	}
	if err != nil {
		// The resume never ran, so it did not fail its probe: the
		// conversation stays recorded and whatever holds the name is
		// left alone.
		res, again = st.spawnFailed(ctx, rec, loop.ErrorMessage(err), loop.F("harness", p.Harness), loop.F("tmux_target", target))
		return id, "", res, again, true
	}
	if e.survives(ctx, st.runner, st.socket, target, st.cfg.Routing.Tmux.ResumeProbe()) || st.spawned(ctx, id) {
		res, again = st.recordUp(ctx, EvResumed, p, id, loop.OutcomeResumed, "")
		return id, "", res, again, true
	}
	last := lastLine(ctx, st.runner, target)
	err = fmt.Errorf("the resumed pane did not survive the probe (%s)", last)
	if detail := clearOwn(ctx, st.runner, target, id); detail != "" {
		res, again = st.spawnFailed(ctx, rec, detail, loop.F("tmux_target", target))
		return id, "", res, again, true
	}
	id = e.h.NewID()
	note = fmt.Sprintf("resume of %s failed (%s); started fresh as %s", k.Claim(claimed).HarnessSessionID, last, id)
	if _, terr := Transition(ctx, e, k, EvResumeFailed, func(r *R) error {
		c := k.Claim(r)
		c.HarnessSessionID, c.Resume = id, false
		h := k.Hearing(r)
		h.Tokens, h.TokensThrough = nil, "" // a new conversation counts from zero
		return nil
	}, nil, append(st.takePending(), e.h.Event(k.LogEvent("resume_failed"), loop.LevelWarning,
		k.Subject(), loop.F("harness_session_id", k.Claim(claimed).HarnessSessionID),
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
	target := st.k.Target()
	if st.runner.State(cctx, target) != loop.PaneLive {
		return false
	}
	mine, err := Ours(cctx, st.runner, target, id)
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
func (st *starter[R, Res]) spec(cred agentCredential, p Plan, bin string, argv []string, id string) loop.SpawnSpec {
	spec := cred.spec(p.Adapter.Name(), loop.SpawnSpec{Argv: append([]string{bin}, argv...), Cwd: p.Cwd, Tag: id, Absent: st.absent})
	st.absent = false // a later spawn (a resume's fresh fallback) meets what this one left
	spec.Env = overlayEnv(spec.Env, st.cfg.Routing.HarnessEnv, p.Env)
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
func (st *starter[R, Res]) binary(p Plan) (string, error) {
	return st.e.Binary(st.cfg, p.Adapter)
}

// Binary is adapter's binary: routing.harnessBinaries' path for it, else
// the one on this process's PATH.
func (e *Engine) Binary(cfg *config.Config, adapter loop.Harness) (string, error) {
	name := adapter.Name()
	if path := cfg.Routing.HarnessBinaries[name]; path != "" {
		fi, err := os.Stat(path)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("routing.harnessBinaries.%s is '%s', which is not an executable file — install the %s CLI there or fix the path", name, path, name)
		}
		return path, nil
	}
	bin, err := e.h.LookPath(adapter.Binary())
	if err == nil {
		return bin, nil
	}
	whose := fmt.Sprintf("this the-loop CLI's (pid %d: with no service running, the CLI spawns the agent in its own environment)", os.Getpid())
	switch e.h.Source() {
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
	if st.e.h.HookBinary() != "" {
		h.Activity, h.ActivityAt = loop.ActivityStarting, st.e.stamp()
	}
	if !resume {
		h.Tokens, h.TokensThrough = nil, ""
	}
}

// DownNoter is a kind whose record keeps why it last went down (a
// standing session's LastDown).
type DownNoter[R any] interface {
	NoteDown(rec *R, why, at string)
}

// noteDown is a transition's mutate recording why (then) on a kind that
// keeps it; then runs first and may refuse.
func (st *starter[R, Res]) withDownNote(why string, then func(r *R) error) func(r *R) error {
	return func(r *R) error {
		if then != nil {
			if err := then(r); err != nil {
				return err
			}
		}
		if n, ok := any(st.k).(DownNoter[R]); ok {
			n.NoteDown(r, why, st.e.stamp())
		}
		return nil
	}
}

// spawnFailed records <kind>.spawn_failed and releases the claim (back to
// where the start came from).
func (st *starter[R, Res]) spawnFailed(ctx context.Context, prior *R, detail string, extra ...loop.Field) (Res, bool) {
	e, k := st.e, st.k
	fields := append([]loop.Field{k.Subject()}, extra...)
	fields = append(fields, loop.F("error", detail))
	out, err := Transition(ctx, e, k, EvSpawnFailed, st.withDownNote("its start failed: "+detail, nil), nil, append(st.takePending(), e.h.Event(k.LogEvent("spawn_failed"), loop.LevelError, fields...))...)
	if err != nil {
		detail += "; and the failure could not be recorded: " + err.Error()
		out = prior
	}
	return st.failed(out, detail), false
}

// up records a successful start or resume and announces it; note, when
// set, is what the row says of it (a resume that fell back).
func (st *starter[R, Res]) recordUp(ctx context.Context, event string, p Plan, id, outcome, note string) (Res, bool) {
	e, k, target := st.e, st.k, st.k.Target()
	ev := k.LogEvent("started")
	if event == EvResumed {
		ev = k.LogEvent("resumed")
	}
	hooked := Hooked(p.Adapter.Name()) && e.h.HookBinary() != ""
	out, err := Transition(ctx, e, k, event, func(r *R) error {
		k.Up(r, p, id, st.socket)
		if h := k.Hearing(r); !hooked { // a harness without hooks: nothing will be heard
			h.Activity, h.ActivityAt = "", ""
		}
		if st.paneTag != "" && st.paneTag != id { // the id was captured after the spawn
			k.Hearing(r).PaneTag = st.paneTag
		}
		return nil
	}, nil, append(st.takePending(), e.h.Event(ev, loop.LevelInfo,
		k.Subject(), loop.F("harness", p.Harness), loop.F("harness_session_id", id),
		loop.F("tmux_target", target), loop.F("cwd", p.Cwd)))...)
	if err != nil {
		return st.failed(nil, "the agent runs in "+target+" but its record could not be written: "+err.Error()), false
	}
	out = k.Announce(ctx, out)
	return k.Result(out, true, outcome, note), false
}

// seedTrust pre-seeds p's trust (the adapter's SeedTrust) and keeps in
// p.trustAdded the entries it added.
func seedTrust(p *Plan) error {
	added, err := p.Adapter.SeedTrust(p.Cwd, p.Args)
	for _, d := range added {
		p.TrustAdded = append(p.TrustAdded, loop.TrustEntry{Harness: p.Adapter.Name(), Dir: d})
	}
	return err
}

// resumeArgv is adapter's ResumeArgv for id once the adapter has checked
// id's shape: an id that is not the CLI's never reaches its argv.
func resumeArgv(adapter loop.Harness, id string, args []string, prompt string) ([]string, error) {
	if err := adapter.CheckSessionID(id); err != nil {
		return nil, loop.Errorf(loop.EINVALID, "not resuming the recorded conversation: %w; "+
			"such a record was not written by the CLI's hooks — look at the events (`the-loop events`) for who set it", err)
	}
	return adapter.ResumeArgv(id, args, prompt)
}

// SourceRestart is the Source of a Service that only checks, for `the-loop
// restart`, what the restarted service would find (HarnessBinary): its
// refusals name the restart's environment.
const SourceRestart = "restart"
