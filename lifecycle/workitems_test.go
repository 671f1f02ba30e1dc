package lifecycle

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/store"
	"github.com/the-loop-dev/the-loop/talk"
)

// itemRunner is the fake tmux with the runner's work-item entry points:
// like the real runner's, they keep their refusals and delegate to the
// target-addressed calls. Terminations are recorded and leave a dead pane.
type itemRunner struct {
	*fakeRunner
	mu          sync.Mutex
	terminated  []string
	labels      []string
	spawnedRefs []string
}

func (w *itemRunner) Spawn(ctx context.Context, item loop.WorkItemRef, spec loop.SpawnSpec) error {
	w.mu.Lock()
	w.spawnedRefs = append(w.spawnedRefs, item.String())
	w.mu.Unlock()
	return w.SpawnIn(ctx, item.TmuxTarget(), spec)
}

func (w *itemRunner) Deliver(ctx context.Context, sess loop.WorkItemTarget, text string, submitDelay time.Duration) error {
	if sess.TmuxTarget == "" {
		return loop.NotFound("no tmux session recorded for %s", sess.Ref)
	}
	if !w.State(ctx, sess.TmuxTarget).LiveOrUnknown() {
		return loop.NotFound("tmux session %s not found or its harness has exited", sess.TmuxTarget)
	}
	return w.DeliverTo(ctx, sess.TmuxTarget, text, submitDelay)
}

func (w *itemRunner) Kill(ctx context.Context, sess loop.WorkItemTarget) error {
	return w.KillTarget(ctx, sess.TmuxTarget)
}

func (w *itemRunner) TerminateHarness(ctx context.Context, sess loop.WorkItemTarget, grace time.Duration) error {
	w.mu.Lock()
	w.terminated = append(w.terminated, sess.TmuxTarget)
	w.labels = append(w.labels, sess.Ref)
	w.mu.Unlock()
	w.fakeRunner.Mu.Lock()
	defer w.fakeRunner.Mu.Unlock()
	if _, ok := w.Panes[sess.TmuxTarget]; ok {
		w.Panes[sess.TmuxTarget] = loop.PaneDead
	}
	return nil
}

func (w *itemRunner) pane(target string) loop.PaneState { return w.State(context.Background(), target) }

// newItemService is newTestService with the work-item fake as its runner.
func newItemService(t *testing.T) (*Service, *itemRunner) {
	t.Helper()
	r := newFakeRunner()
	s := newTestService(t, r)
	w := &itemRunner{fakeRunner: r}
	s.Runner = func(string) loop.Runner { return w }
	return s, w
}

const octo = "github:octo/repo#5"
const octoTarget = "loop-github-octo-repo-5"

func startReq(t *testing.T, ref string) loop.WorkItemStartRequest {
	return loop.WorkItemStartRequest{Ref: ref, Cwd: t.TempDir()}
}

func mustStart(t *testing.T, s *Service, cfg *config.Config, req loop.WorkItemStartRequest, outcome string) loop.WorkItemStartResult {
	t.Helper()
	res, err := s.StartWorkItem(context.Background(), cfg, req)
	if err != nil || res.Outcome != outcome {
		t.Fatalf("start %s: %+v %v; want %s", req.Ref, res, err, outcome)
	}
	return res
}

func TestStartWorkItem_FreshThenAlreadyRunning(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	res := mustStart(t, s, cfg, startReq(t, " github:github.com/octo/repo#5 "), "started")
	row := res.Session
	if res.WorkItem != octo || res.ExitCode != 0 || row == nil || row.Ref != octo || row.Status != "active" ||
		!row.Running || row.TmuxTarget != octoTarget || row.URL != "https://github.com/octo/repo/issues/5" {
		t.Fatalf("result %+v row %+v", res, row)
	}
	if want := "started claude session for github:octo/repo#5 (tmux: loop-github-octo-repo-5)"; res.Messages[0].Text != want {
		t.Fatalf("messages %+v", res.Messages)
	}
	argv := w.Spawns[0].Argv
	if argv[0] != "/usr/bin/claude" || argv[1] != "--session-id" || argv[2] != row.HarnessSessionID || len(argv) != 4 {
		t.Fatalf("argv %q", argv)
	}
	if argv[3] != DefaultWorkItemPrompt(loop.WorkItemRef{Provider: "github", Host: "github.com", Owner: "octo", Repo: "repo", Number: 5}) ||
		!strings.Contains(argv[3], "github:octo/repo#5") {
		t.Fatalf("boot prompt %q does not name the work item", argv[3])
	}
	if !slices.Equal(w.spawnedRefs, []string{octo}) {
		t.Fatalf("spawned through the work-item entry point for %v", w.spawnedRefs)
	}

	again := mustStart(t, s, cfg, loop.WorkItemStartRequest{Ref: octo}, "already-running")
	if w.SpawnCount() != 1 || again.Messages[0].Text != "github:octo/repo#5 is already running (claude)" {
		t.Fatalf("second start %+v (spawns %d)", again, w.SpawnCount())
	}
	evs := events(t, s, store.EventQuery{})
	if got := eventNames(evs); !slices.Equal(got, []string{"session.started"}) {
		t.Fatalf("events %v", got)
	}
	if evs[0].Field("work_item") != octo || evs[0].Field("tmux_target") != octoTarget || evs[0].Field("standing") != nil {
		t.Fatalf("session.started %+v", evs[0])
	}
}

func TestStartWorkItem_GivenPromptAndHarnessArgs(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	cfg.Routing.HarnessArgs["claude"] = []string{"--model", "opus"}
	req := startReq(t, octo)
	req.Prompt = "Fix the flaky test."
	mustStart(t, s, cfg, req, "started")
	if got := w.Spawns[0].Argv[3:]; !slices.Equal(got, []string{"--model", "opus", "Fix the flaky test."}) {
		t.Fatalf("argv tail %q", got)
	}
	if w.Spawns[0].Cwd != req.Cwd {
		t.Fatalf("cwd %q, want %q", w.Spawns[0].Cwd, req.Cwd)
	}
}

func TestStartWorkItem_RefusesStandingRefsAndUnknownHarness(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	for _, ref := range []string{"standing:supervisor", "supervisor", "github:octo/repo"} {
		_, err := s.StartWorkItem(context.Background(), cfg, startReq(t, ref))
		if loop.ErrorCode(err) != loop.EINVALID || !strings.HasPrefix(loop.ErrorMessage(err), "invalid work-item ref '"+ref+"'") {
			t.Errorf("start %q: %v, want the invalid-ref refusal", ref, err)
		}
	}
	s.Harness = func(h, session string) (loop.Harness, error) {
		return nil, loop.Invalid("unknown harness '%s' for standing session '%s' (one of claude, cursor)", h, session)
	}
	req := startReq(t, octo)
	req.Harness = "codex"
	_, err := s.StartWorkItem(context.Background(), cfg, req)
	if want := "unknown harness 'codex' for the session of github:octo/repo#5 (one of claude, cursor)"; loop.ErrorMessage(err) != want || loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("err %v, want %q", err, want)
	}
	if w.SpawnCount() != 0 || len(events(t, s, store.EventQuery{})) != 0 {
		t.Fatal("a refused start spawned or recorded something")
	}
}

func TestStartWorkItem_RefusesLivePaneWithoutRecord(t *testing.T) {
	s, w := newItemService(t)
	w.Panes[octoTarget] = loop.PaneLive
	res, err := s.StartWorkItem(context.Background(), testConfig(t), startReq(t, octo))
	if err != nil || res.Outcome != "failed" || res.ExitCode != 1 || res.Session != nil ||
		!strings.Contains(res.Messages[0].Text, "a tmux session named loop-github-octo-repo-5 exists but the-loop has no record of it") {
		t.Fatalf("start %+v %v", res, err)
	}
	if w.SpawnCount() != 0 || len(w.Killed) != 0 {
		t.Fatal("touched the unaccounted pane")
	}
	evs := events(t, s, store.EventQuery{})
	if len(evs) != 1 || evs[0].Event != "session.spawn_failed" || evs[0].Field("work_item") != octo {
		t.Fatalf("events %+v", evs)
	}
	if _, err := s.GetWorkItem(context.Background(), testConfig(t), octo); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("a refused start left a record: %v", err)
	}
}

func TestStartWorkItem_MissingCwdFailsAndRecordsNothing(t *testing.T) {
	s, w := newItemService(t)
	req := loop.WorkItemStartRequest{Ref: octo, Cwd: filepath.Join(t.TempDir(), "gone")}
	res, err := s.StartWorkItem(context.Background(), testConfig(t), req)
	if err != nil || res.Outcome != "failed" || res.ExitCode != 1 || !strings.Contains(res.Messages[0].Text, "is not a directory") {
		t.Fatalf("start %+v %v", res, err)
	}
	if w.SpawnCount() != 0 {
		t.Fatal("spawned into a missing directory")
	}
	if got := eventNames(events(t, s, store.EventQuery{})); !slices.Equal(got, []string{"session.spawn_failed"}) {
		t.Fatalf("events %v", got)
	}
	rows, _ := s.ListWorkItems(context.Background(), testConfig(t), "")
	if len(rows) != 0 {
		t.Fatalf("rows %+v", rows)
	}
}

func TestStartWorkItem_ConcurrentStartsSpawnOnce(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	req := startReq(t, octo)
	var wg sync.WaitGroup
	outcomes := make([]string, 8)
	for i := range outcomes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.StartWorkItem(context.Background(), cfg, req)
			if err != nil {
				t.Error(err)
			}
			outcomes[i] = res.Outcome
		}()
	}
	wg.Wait()
	slices.Sort(outcomes)
	if w.SpawnCount() != 1 || outcomes[7] != "started" || outcomes[0] != "already-running" {
		t.Fatalf("spawns %d, outcomes %v", w.SpawnCount(), outcomes)
	}
}

func TestReplyWorkItem_FramedIntoTheLivePane(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	mustStart(t, s, cfg, startReq(t, octo), "started")
	res, err := s.ReplyWorkItem(context.Background(), cfg, "github:octo/repo#5", "Use the v2 API.", "ops")
	if err != nil || !res.Delivered || res.ExitCode != 0 || res.WorkItem != octo {
		t.Fatalf("reply %+v %v", res, err)
	}
	if want := "delivered the reply into loop-github-octo-repo-5 (session.reply_sent)"; res.Messages[0].Text != want {
		t.Fatalf("messages %+v", res.Messages)
	}
	want := "Reply from the operator via the-loop control plane (ops) to your question on github:octo/repo#5:\n\nUse the v2 API."
	if len(w.Delivered) != 1 || w.Delivered[0] != want {
		t.Fatalf("delivered %q, want %q", w.Delivered, want)
	}
	evs := events(t, s, store.EventQuery{Types: []string{"session.reply_sent"}})
	if len(evs) != 1 || evs[0].Field("work_item") != octo || evs[0].Field("actor") != "ops" {
		t.Fatalf("events %+v", evs)
	}
	row, _ := s.GetWorkItem(context.Background(), cfg, octo)
	if row.LastEventAt == nil || *row.LastEventAt == "" {
		t.Fatal("lastEventAt not set by the reply")
	}
	if talk.FrameReply(octo, "", "x") != "Reply from the operator via the-loop control plane to your question on github:octo/repo#5:\n\nx" {
		t.Fatal("framing without an actor")
	}
}

func TestReplyWorkItem_RefusalsNeverSpawn(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	ctx := context.Background()
	noSession := "no session registered for github:octo/repo#5 — a reply never spawns one;"
	noPane := "the session for github:octo/repo#5 has no live tmux pane to paste into — a reply never respawns one;"

	check := func(what, ref, text, code, prefix string) {
		t.Helper()
		_, err := s.ReplyWorkItem(ctx, cfg, ref, text, "ops")
		if loop.ErrorCode(err) != code || !strings.HasPrefix(loop.ErrorMessage(err), prefix) {
			t.Errorf("%s: %v, want %s %q…", what, err, code, prefix)
		}
	}
	check("standing ref", "standing:supervisor", "hi", loop.EINVALID, "invalid work-item ref 'standing:supervisor'")
	check("empty text", octo, " \n", loop.EINVALID, "the reply text is empty; nothing to deliver")
	check("unknown work item", octo, "hi", loop.ENOTFOUND, noSession)

	mustStart(t, s, cfg, startReq(t, octo), "started")
	w.fakeRunner.Mu.Lock()
	w.Panes[octoTarget] = loop.PaneDead // the agent exited
	w.fakeRunner.Mu.Unlock()
	check("dead pane", octo, "hi", loop.ENOTFOUND, noPane)

	if _, err := s.CloseWorkItem(ctx, cfg, octo, nil); err != nil {
		t.Fatal(err)
	}
	check("closed session", octo, "hi", loop.ENOTFOUND, noSession)

	if w.SpawnCount() != 1 || len(w.Delivered) != 0 {
		t.Fatalf("a refused reply spawned (%d) or delivered (%q)", w.SpawnCount(), w.Delivered)
	}
	if n := len(events(t, s, store.EventQuery{Types: []string{"session.reply_sent"}})); n != 0 {
		t.Fatalf("%d reply_sent events for refused replies", n)
	}
}

func TestCloseWorkItem_KeepsTmuxAndEndsTheHarnessByDefault(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	mustStart(t, s, cfg, startReq(t, octo), "started")
	res, err := s.CloseWorkItem(context.Background(), cfg, octo, nil)
	if err != nil || !res.Closed || res.ExitCode != 0 {
		t.Fatalf("close %+v %v", res, err)
	}
	var texts []string
	for _, m := range res.Messages {
		texts = append(texts, m.Text)
	}
	want := []string{
		"ended the harness in tmux session loop-github-octo-repo-5",
		"kept tmux session loop-github-octo-repo-5 — attach: tmux attach -r -t loop-github-octo-repo-5 (pass --kill-tmux to end it)",
		"closed session for github:octo/repo#5",
	}
	if !slices.Equal(texts, want) {
		t.Fatalf("messages %q, want %q", texts, want)
	}
	if !slices.Equal(w.terminated, []string{octoTarget}) || !slices.Equal(w.labels, []string{octo}) || len(w.Killed) != 0 {
		t.Fatalf("terminated %v (labels %v), killed %v", w.terminated, w.labels, w.Killed)
	}
	row, err := s.GetWorkItem(context.Background(), cfg, octo)
	if err != nil || row.Status != "closed" || row.Running {
		t.Fatalf("row %+v %v", row, err)
	}
	evs := events(t, s, store.EventQuery{Types: []string{"session.closed"}})
	if len(evs) != 1 || evs[0].Field("work_item") != octo || evs[0].Field("tmux") != "kept" {
		t.Fatalf("events %+v", evs)
	}

	again, err := s.CloseWorkItem(context.Background(), cfg, octo, nil)
	if err != nil || again.Closed || again.ExitCode != 1 || again.Messages[0].Text != "no active session for github:octo/repo#5" {
		t.Fatalf("second close %+v %v", again, err)
	}
}

func TestCloseWorkItem_KillsTmuxWhenNotKept(t *testing.T) {
	for name, c := range map[string]struct {
		keepCfg bool
		flag    *bool
	}{
		"config":   {keepCfg: false},
		"override": {keepCfg: true, flag: new(bool)},
	} {
		t.Run(name, func(t *testing.T) {
			s, w := newItemService(t)
			cfg := testConfig(t)
			cfg.Routing.Tmux.KeepSessionOnClose = c.keepCfg
			mustStart(t, s, cfg, startReq(t, octo), "started")
			res, err := s.CloseWorkItem(context.Background(), cfg, octo, c.flag)
			if err != nil || !res.Closed || res.Messages[0].Text != "killed tmux session loop-github-octo-repo-5" {
				t.Fatalf("close %+v %v", res, err)
			}
			if !slices.Equal(w.Killed, []string{octoTarget}) || !slices.Equal(w.terminated, []string{octoTarget}) ||
				w.pane(octoTarget) != loop.PaneAbsent {
				t.Fatalf("killed %v terminated %v pane %s", w.Killed, w.terminated, w.pane(octoTarget))
			}
		})
	}
}

func TestCloseWorkItem_KeepsHarnessWhenKillHarnessOnCloseIsOff(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	cfg.Routing.Tmux.KillHarnessOnClose = false
	mustStart(t, s, cfg, startReq(t, octo), "started")
	if _, err := s.CloseWorkItem(context.Background(), cfg, octo, nil); err != nil {
		t.Fatal(err)
	}
	if len(w.terminated) != 0 || w.pane(octoTarget) != loop.PaneLive {
		t.Fatalf("terminated %v, pane %s", w.terminated, w.pane(octoTarget))
	}
	// A live pane under a closed record: a start adopts it, spawning nothing.
	res := mustStart(t, s, cfg, loop.WorkItemStartRequest{Ref: octo}, "already-running")
	if res.Session.Status != "active" || w.SpawnCount() != 1 {
		t.Fatalf("start %+v, spawns %d", res, w.SpawnCount())
	}
}

func TestStartWorkItem_ResumesAClosedSessionsConversation(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	first := mustStart(t, s, cfg, startReq(t, octo), "started")
	id := first.Session.HarnessSessionID
	if _, err := s.CloseWorkItem(context.Background(), cfg, octo, nil); err != nil {
		t.Fatal(err)
	}
	res := mustStart(t, s, cfg, loop.WorkItemStartRequest{Ref: octo}, "resumed")
	if res.Session.HarnessSessionID != id || res.Session.Status != "active" || res.Session.Cwd != first.Session.Cwd {
		t.Fatalf("resumed %+v", res.Session)
	}
	// No prompt is submitted into a resumed conversation unless one is
	// given (the fake harness writes the empty one the real adapter omits).
	if a := w.Spawns[1].Argv; !slices.Equal(a, []string{"/usr/bin/claude", "--resume", id, ""}) {
		t.Fatalf("resume argv %q", a)
	}
	if len(w.Killed) != 0 { // the spawn respawns into the dead kept pane
		t.Fatalf("the dead kept pane's session was killed: %v", w.Killed)
	}
	got := eventNames(events(t, s, store.EventQuery{}))
	if want := []string{"session.started", "session.closed", "session.dead_pane_cleared", "session.resumed"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestStartWorkItem_ResumeThatDiesFallsBackFresh(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	first := mustStart(t, s, cfg, startReq(t, octo), "started")
	old := first.Session.HarnessSessionID
	cfg.Routing.Tmux.KeepSessionOnClose = false
	if _, err := s.CloseWorkItem(context.Background(), cfg, octo, nil); err != nil {
		t.Fatal(err)
	}
	w.OnSpawn = func(spec loop.SpawnSpec) loop.PaneState {
		if spec.Argv[1] == "--resume" {
			return loop.PaneDead
		}
		return loop.PaneLive
	}
	res := mustStart(t, s, cfg, loop.WorkItemStartRequest{Ref: octo}, "started")
	if res.Session.HarnessSessionID == old {
		t.Fatal("kept the conversation id of a resume that died")
	}
	if a := w.Spawns[2].Argv; a[1] != "--session-id" || a[2] != res.Session.HarnessSessionID {
		t.Fatalf("fallback argv %q", a)
	}
	evs := events(t, s, store.EventQuery{Types: []string{"session.resume_failed"}})
	if len(evs) != 1 || evs[0].Field("harness_session_id") != old || evs[0].Field("work_item") != octo {
		t.Fatalf("resume_failed %+v", evs)
	}
}

func TestStartWorkItem_SettlesAStaleClaim(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	ref, _ := loop.ParseWorkItemRef(octo)
	// A process that died mid-start left its claim on a placeholder.
	if err := s.DB.Update(func(tx *store.Tx) error {
		return tx.PutWorkItem(ref.Slug(), &loop.WorkItemRecord{WorkItem: loop.WorkItemInfo{Ref: octo},
			Claim: &loop.Claim{Op: "start", PID: 1 << 30, Since: "2020-01-01T00:00:00Z", HarnessSessionID: "x"}})
	}); err != nil {
		t.Fatal(err)
	}
	mustStart(t, s, cfg, startReq(t, octo), "started")
	got := eventNames(events(t, s, store.EventQuery{}))
	if !slices.Equal(got, []string{"session.claim_abandoned", "session.started"}) || w.SpawnCount() != 1 {
		t.Fatalf("events %v, spawns %d", got, w.SpawnCount())
	}
}

func TestListWorkItems_OnlyWorkItemsAndStatusFilter(t *testing.T) {
	s, _ := newItemService(t)
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || !res.OK {
		t.Fatalf("standing start %+v %v", res, err)
	}
	mustStart(t, s, cfg, startReq(t, octo), "started")
	mustStart(t, s, cfg, startReq(t, "github:octo/other#9"), "started")
	if _, err := s.CloseWorkItem(ctx, cfg, "github:octo/other#9", nil); err != nil {
		t.Fatal(err)
	}

	rows, err := s.ListWorkItems(ctx, cfg, "")
	if err != nil || len(rows) != 2 || rows[0].Ref != "github:octo/other#9" || rows[1].Ref != octo {
		t.Fatalf("sessions %+v %v", rows, err)
	}
	active, _ := s.ListWorkItems(ctx, cfg, "active")
	closed, _ := s.ListWorkItems(ctx, cfg, "closed")
	paused, _ := s.ListWorkItems(ctx, cfg, "paused")
	if len(active) != 1 || active[0].Ref != octo || !active[0].Running || len(closed) != 1 || closed[0].Running || len(paused) != 0 {
		t.Fatalf("active %+v closed %+v paused %+v", active, closed, paused)
	}
	if _, err := s.ListWorkItems(ctx, cfg, "open"); loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("status open: %v", err)
	}
	standing, _ := s.ListStanding(ctx, cfg)
	if len(standing) != 1 || standing[0].Name != "supervisor" {
		t.Fatalf("standing rows %+v", standing)
	}
	// A work-item ref is not a standing name: a caller's mistake.
	if _, err := s.SayStanding(ctx, cfg, octo, "hi", ""); loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("standing say to a work item: %v", err)
	}
	if _, err := s.GetWorkItem(ctx, cfg, "standing:supervisor"); loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("get standing:supervisor: %v", err)
	}
}

func TestWorkItems_ThroughTheLivenessCache(t *testing.T) {
	s, w := newItemService(t)
	cached := runner.NewCache(w, time.Hour)
	s.Runner = func(string) loop.Runner { return cached }
	cfg := testConfig(t)
	ctx := context.Background()
	if st := cached.State(ctx, octoTarget); st != loop.PaneAbsent { // cached for an hour…
		t.Fatalf("state %s", st)
	}
	mustStart(t, s, cfg, startReq(t, octo), "started") // …but a spawn invalidates it
	if _, err := s.ReplyWorkItem(ctx, cfg, octo, "hi", ""); err != nil {
		t.Fatalf("reply right after the start: %v", err)
	}
	if _, err := s.CloseWorkItem(ctx, cfg, octo, nil); err != nil || cached.State(ctx, octoTarget) != loop.PaneDead {
		t.Fatalf("close: %v, state %s", err, cached.State(ctx, octoTarget))
	}
}

func TestWorkItems_SharedKeyIsRefused(t *testing.T) {
	s, _ := newItemService(t)
	cfg := testConfig(t)
	mustStart(t, s, cfg, startReq(t, "github:octo/re po#5"), "started")
	_, err := s.StartWorkItem(context.Background(), cfg, startReq(t, "github:octo/re-po#5"))
	if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(loop.ErrorMessage(err), "shares its session key 'github-octo-re-po-5'") {
		t.Fatalf("start of a ref sharing the key: %v", err)
	}
	if _, err := s.GetWorkItem(context.Background(), cfg, "github:octo/re-po#5"); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("get: %v", err)
	}
}

func TestStartWorkItem_ResumeSpawnFailureKeepsTheConversationAndTheForeignSession(t *testing.T) {
	s, w := newItemService(t)
	cfg := testConfig(t)
	ctx := context.Background()
	first := mustStart(t, s, cfg, startReq(t, octo), "started")
	id := first.Session.HarnessSessionID
	cfg.Routing.Tmux.KeepSessionOnClose = false
	if _, err := s.CloseWorkItem(ctx, cfg, octo, nil); err != nil {
		t.Fatal(err)
	}
	ref, _ := loop.ParseWorkItemRef(octo)
	usurp(w.fakeRunner, ref.TmuxTarget())
	killed := len(w.Killed)
	mustStart(t, s, cfg, loop.WorkItemStartRequest{Ref: octo}, "failed")
	if len(w.Killed) != killed || w.State(ctx, ref.TmuxTarget()) != loop.PaneLive {
		t.Fatalf("the foreign session was killed: %v", w.Killed[killed:])
	}
	rec, err := s.readWorkItem(ref)
	if err != nil || rec == nil || rec.HarnessSessionID != id || rec.Status != loop.SessionClosed || rec.Claim != nil {
		t.Fatalf("record %+v (%v), want closed with conversation %s", rec, err, id)
	}
}
