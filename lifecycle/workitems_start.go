package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
)

// DefaultWorkItemPrompt is the boot prompt of a work item's session
// started without one: it names the work item, and says how the
// operator's replies arrive.
func DefaultWorkItemPrompt(ref loop.WorkItemRef) string {
	where := ref.String()
	if u := ref.URL(); u != "" {
		where += " (" + u + ")"
	}
	return "You are the-loop's session for the work item " + where + ". Read the work item and work on it. " +
		"Replies from your operator arrive in this terminal, each starting with " +
		"\"Reply from the operator via the-loop control plane\"."
}

// StartWorkItem starts a work item's session (decisions D23: an operator
// drives one by hand). A new session is a fresh conversation
// (--session-id <uuid>) booted with req.Prompt, or DefaultWorkItemPrompt;
// a recorded one whose pane is gone resumes its conversation (probed, and
// a fresh one when the resume does not take); a live pane under a record
// is already-running and is not touched; a live pane with no record is
// refused. Empty harness and cwd take the record's, then the config's
// defaults. A start that fails is a result with outcome failed and exit
// code 1 (session.spawn_failed); an invalid ref or unknown harness is an
// EINVALID error. With req.Slack, a session that is up is announced in
// Slack (announceWorkItem).
func (s *Service) StartWorkItem(ctx context.Context, cfg *config.Config, req loop.WorkItemStartRequest) (loop.WorkItemStartResult, error) {
	item, err := loop.ParseWorkItemRef(req.Ref)
	if err != nil {
		return loop.WorkItemStartResult{}, err
	}
	defer s.engine().Lock(workItemLock(item))()
	st := &workItemStart{workItemKind: workItemKind{ref: item}, s: s, cfg: cfg, req: req}
	res, err := engine.Start(ctx, s.engine(), cfg, st)
	if err == nil && req.Slack {
		res = s.announceWorkItem(ctx, cfg, item, res)
	}
	return res, err
}

// workItemStart is a work item's start, as the engine's starter
// (starter.go) drives it.
type workItemStart struct {
	workItemKind
	s   *Service
	cfg *config.Config
	req loop.WorkItemStartRequest
	// harness and adapter are what ready resolved.
	harness string
	adapter loop.Harness
}

// ready resolves the harness: the request's, else the record's, else the
// config's default; an unknown one is EINVALID.
func (st *workItemStart) Ready(rec *loop.WorkItemRecord) error {
	harness := st.req.Harness
	if harness == "" && rec != nil {
		harness = rec.Harness
	}
	if harness == "" {
		harness = st.cfg.Routing.DefaultHarness
	}
	adapter, err := st.s.Harness(harness, st.ref.String())
	if err != nil {
		return unknownHarness(err, harness, st.ref.String())
	}
	st.harness, st.adapter = harness, adapter
	return nil
}

func (st *workItemStart) Runner(socket string) (loop.Runner, error) {
	return st.s.Runner(socket), nil
}

func (st *workItemStart) Placed(rec *loop.WorkItemRecord) (string, bool) {
	if rec != nil && rec.Status == loop.SessionActive {
		return rec.TmuxSocket, true
	}
	return "", false
}

func (st *workItemStart) Owns(rec *loop.WorkItemRecord) bool { return rec != nil }

// version is what the record's transitions change: its status and its
// conversation.
func (st *workItemStart) Version(rec *loop.WorkItemRecord) string {
	if rec == nil {
		return "\x00"
	}
	return string(rec.Status) + "\x00" + rec.HarnessSessionID
}

// conversation is resumable when the start keeps the record's harness.
func (st *workItemStart) Conversation(rec *loop.WorkItemRecord) (string, bool) {
	if rec == nil {
		return "", false
	}
	return rec.HarnessSessionID, rec.Harness == st.harness
}

func (st *workItemStart) Claimed(r *loop.WorkItemRecord, c *loop.Claim, socket, tokenHash string) {
	r.Claim = c
	r.AgentTokenHash = tokenHash
	r.TmuxSocket = socket
	r.TmuxTarget = st.Target()
}

func (st *workItemStart) Adopted(r *loop.WorkItemRecord) {
	if r.TmuxTarget == "" {
		r.TmuxTarget = st.Target()
	}
}

func (st *workItemStart) NotMine() string {
	return "it is not the agent the-loop started for this work item"
}

func (st *workItemStart) SpawnIn(ctx context.Context, r loop.Runner, spec loop.SpawnSpec) error {
	return r.Spawn(ctx, st.ref, spec)
}

// plan checks the directory: the request's, else the record's, else
// routing.spawnWorkdir. A resumed conversation goes on with only a prompt
// the operator gave; a fresh one boots with it or DefaultWorkItemPrompt.
func (st *workItemStart) Plan(rec *loop.WorkItemRecord) (engine.Plan, *engine.Refusal) {
	cwd := st.req.Cwd
	if cwd == "" && rec != nil {
		cwd = rec.Cwd
	}
	if cwd == "" {
		cwd = st.cfg.Routing.SpawnWorkdir
	}
	given := cwd
	cwd = config.ExpandHome(cwd)
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs // the record names the directory, wherever the next verb runs from
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return engine.Plan{}, &engine.Refusal{Detail: fmt.Sprintf("cwd '%s' is not a directory; a session is never spawned into a directory that is not there", given)}
	}
	if err := st.s.checkTrustCwd(st.cfg, given, st.req.Cwd == "" && (rec == nil || rec.Cwd == "")); err != nil {
		return engine.Plan{}, &engine.Refusal{Detail: loop.ErrorMessage(err), Fields: []loop.Field{loop.F("cwd", given)}}
	}
	fresh := st.req.Prompt
	if fresh == "" {
		fresh = DefaultWorkItemPrompt(st.ref)
	}
	return engine.Plan{Harness: st.harness, Adapter: st.adapter, Args: st.cfg.Routing.HarnessArgs[st.harness], Cwd: cwd,
		ResumePrompt: st.req.Prompt, FreshPrompt: fresh}, nil
}

func (st *workItemStart) Up(r *loop.WorkItemRecord, p engine.Plan, id, socket string) {
	r.Harness = p.Harness
	r.HarnessSessionID = id
	r.Cwd = p.Cwd
	r.TmuxTarget = st.Target()
	r.TmuxSocket = socket
	r.URL = st.ref.URL()
	if r.RecentDeliveries == nil {
		r.RecentDeliveries = []string{}
	}
}

// announce is StartSession's, once the start is final.
func (st *workItemStart) Announce(_ context.Context, rec *loop.WorkItemRecord) *loop.WorkItemRecord {
	return rec
}

// result is the start's result, with the lines the CLI prints.
func (st *workItemStart) Result(rec *loop.WorkItemRecord, running bool, outcome, detail string) loop.WorkItemStartResult {
	name := st.ref.String()
	res := loop.WorkItemStartResult{WorkItem: name, Outcome: outcome, Messages: []loop.Message{}}
	if rec != nil && shown(rec) {
		row := workItemRow(rec, running)
		res.Session = &row
	}
	switch {
	case outcome == loop.OutcomeFailed:
		res.ExitCode = 1
		res.Messages = append(res.Messages, loop.Message{Stream: "err", Text: fmt.Sprintf("error: could not start a session for %s: %s", name, detail)})
	case outcome == loop.OutcomeAlreadyRunning && rec != nil:
		res.Messages = append(res.Messages, loop.Message{Stream: "out", Text: fmt.Sprintf("%s is already running (%s)", name, rec.Harness)})
	case rec != nil:
		res.Messages = append(res.Messages, loop.Message{Stream: "out",
			Text: fmt.Sprintf("%s %s session for %s (tmux: %s)", outcome, rec.Harness, name, st.Target())})
		if detail != "" { // a resume that fell back says so
			res.Messages = append(res.Messages, loop.Message{Stream: "out", Text: detail})
		}
	}
	return res
}

// unknownHarness words an adapter lookup's refusal for a work item.
func unknownHarness(err error, harness, ref string) error {
	msg := loop.ErrorMessage(err)
	known := ""
	if i := strings.LastIndex(msg, "(one of "); i >= 0 {
		known = " " + msg[i:]
	}
	return loop.Invalid("unknown harness '%s' for the session of %s%s", harness, ref, known)
}
