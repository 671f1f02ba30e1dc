package hearing

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// permission is a PermissionRequest payload of the world's session for a
// Bash command.
func (w *hookWorld) permission(command string) loop.HookDelivery {
	data, _ := json.Marshal(map[string]any{"session_id": w.id, "hook_event_name": "PermissionRequest", "tool_name": "Bash",
		"tool_input": map[string]any{"command": command, "description": "d"}, "prompt_id": "p1", "cwd": "/w"})
	return loop.HookDelivery{Session: "standing:supervisor", Payload: data}
}

// awaited runs AwaitDecision on d in the background: the answer arrives
// on the channel; held is closed once the request is recorded.
func (w *hookWorld) awaited(ctx context.Context, d loop.HookDelivery) (<-chan loop.ApprovalAnswer, <-chan struct{}) {
	out, held := make(chan loop.ApprovalAnswer, 1), make(chan struct{})
	go func() {
		a, err := hearer(w.s).AwaitDecision(ctx, w.cfg.StateDir(), d, func() { close(held) })
		if err != nil {
			w.t.Error(err)
		}
		out <- a
	}()
	return out, held
}

// pendingID is the one pending approval's id.
func (w *hookWorld) pendingID() string {
	w.t.Helper()
	list, err := hearer(w.s).Approvals(context.Background(), "supervisor")
	if err != nil || len(list) == 0 || list[0].Status != loop.ApprovalPending {
		w.t.Fatalf("approvals = %+v, %v; want one pending first", list, err)
	}
	return list[0].ID
}

// A PermissionRequest waits as a pending approval (the session waiting,
// the event raised); an allow is what its hook gets, recorded with who
// decided; a second decision of it is a conflict.
func TestAwaitDecision_AnAllowReachesTheWaitingHook(t *testing.T) {
	w := newHookWorld(t)
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "go", "prompt_id": "p1"})
	answer, held := w.awaited(context.Background(), w.permission("ls /tmp"))
	<-held
	if got := w.record().Hearing.Activity; got != loop.ActivityWaiting {
		t.Errorf("activity while the approval is pending = %s, want waiting", got)
	}
	id := w.pendingID()
	a, err := hearer(w.s).Decide(context.Background(), id, loop.ApprovalDecision{Decision: loop.DecisionAllow, Session: "supervisor"}, "operator")
	if err != nil || a.Status != loop.ApprovalAllowed || a.By != "operator" {
		t.Fatalf("Decide = %+v, %v", a, err)
	}
	if got := <-answer; got.Behavior != loop.DecisionAllow || got.ID != id {
		t.Errorf("the hook got %+v, want allow of %s", got, id)
	}
	if got := w.record().Hearing.Activity; got != loop.ActivityWorking {
		t.Errorf("activity once the approval is decided = %s, want working (the turn goes on)", got)
	}
	_, err = hearer(w.s).Decide(context.Background(), id, loop.ApprovalDecision{Decision: loop.DecisionDeny}, "operator")
	if loop.ErrorCode(err) != loop.ECONFLICT {
		t.Errorf("a second decision = %v, want a conflict", err)
	}
	names := eventNames(events(t, w.s, store.EventQuery{}))
	for _, want := range []string{"standing.approval_requested", "standing.approval_decided"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s event in %v", want, names)
		}
	}
}

// A deny's message reaches the hook fenced, naming who denied; a message
// over 4 KiB, a bad decision, an unknown id and another session's name are
// refused, and the approval stays pending through them.
func TestAwaitDecision_ADenyIsFramedAndBadInputRefused(t *testing.T) {
	w := newHookWorld(t)
	answer, held := w.awaited(context.Background(), w.permission("rm -rf build"))
	<-held
	id := w.pendingID()
	h := hearer(w.s)
	for _, c := range []struct {
		id   string
		d    loop.ApprovalDecision
		code string
	}{
		{id, loop.ApprovalDecision{Decision: loop.DecisionDeny, Message: strings.Repeat("x", loop.MaxDenyMessage+1)}, loop.EINVALID},
		{id, loop.ApprovalDecision{Decision: "maybe"}, loop.EINVALID},
		{"ffffffff", loop.ApprovalDecision{Decision: loop.DecisionAllow}, loop.ENOTFOUND},
		{id, loop.ApprovalDecision{Decision: loop.DecisionAllow, Session: "worker"}, loop.ECONFLICT},
	} {
		if _, err := h.Decide(context.Background(), c.id, c.d, "operator"); loop.ErrorCode(err) != c.code {
			t.Errorf("Decide(%s, %+v) = %v, want %s", c.id, c.d.Decision, err, c.code)
		}
	}
	if _, err := h.Decide(context.Background(), id, loop.ApprovalDecision{Decision: loop.DecisionDeny, Message: "use make clean"}, "slack:U1"); err != nil {
		t.Fatal(err)
	}
	got := <-answer
	if got.Behavior != loop.DecisionDeny || !strings.Contains(got.Message, "Denied by slack:U1") || !strings.Contains(got.Message, "\nuse make clean\n") {
		t.Errorf("the hook got %+v, want a framed deny by slack:U1", got)
	}
	out := string(loop.PermissionRequestAnswer(got))
	if !strings.Contains(out, `"behavior":"deny"`) || !strings.Contains(out, `"hookEventName":"PermissionRequest"`) {
		t.Errorf("the hook prints %s", out)
	}
}

// The hook going away first (a key answered the dialog) records the
// approval answered at the terminal and the session idle; a wait that
// ends undecided expires and its hook gets nothing; a turn's end
// withdraws a pending one.
func TestAwaitDecision_TerminalExpiryAndWithdrawal(t *testing.T) {
	w := newHookWorld(t)
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "go", "prompt_id": "p1"})
	ctx, cancel := context.WithCancel(context.Background())
	answer, held := w.awaited(ctx, w.permission("make"))
	<-held
	id := w.pendingID()
	cancel()
	if got := <-answer; got.Behavior != "" {
		t.Errorf("a hook gone away got %+v", got)
	}
	status := func(id string) string {
		var a *loop.Approval
		_ = w.s.DB.View(func(tx *store.Tx) (err error) { a, err = tx.Approval(id); return err })
		return a.Status
	}
	if s := status(id); s != loop.ApprovalAtTerminal {
		t.Errorf("status after the hook went away = %s, want %s", s, loop.ApprovalAtTerminal)
	}
	if got := w.record().Hearing.Activity; got != loop.ActivityIdle {
		t.Errorf("activity after a key answered = %s, want idle", got)
	}

	hearer(w.s).ApprovalWait = func() time.Duration { return time.Millisecond }
	answer, held = w.awaited(context.Background(), w.permission("make install"))
	<-held
	if got := <-answer; got.Behavior != "" {
		t.Errorf("an expired wait gave the hook %+v; nothing is allowed by a timeout", got)
	}
	list, _ := hearer(w.s).Approvals(context.Background(), "supervisor")
	if list[0].Status != loop.ApprovalExpired && list[1].Status != loop.ApprovalExpired {
		t.Errorf("no expired approval in %+v", list)
	}

	hearer(w.s).ApprovalWait = nil
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "again", "prompt_id": "p2"})
	answer, held = w.awaited(context.Background(), w.permission("make check"))
	<-held
	id = w.pendingID()
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p2", "last_assistant_message": "done"})
	if got := <-answer; got.Behavior != "" {
		t.Errorf("a withdrawn wait gave the hook %+v", got)
	}
	if s := status(id); s != loop.ApprovalWithdrawn {
		t.Errorf("status after the turn ended = %s, want withdrawn", s)
	}
}

// A turn's Stop withdraws the requests made before it was heard, never
// one a later turn made while it was being applied: that one stays
// pending and its hook waits on.
func TestAwaitDecision_AStopLeavesALaterRequestPending(t *testing.T) {
	w := newHookWorld(t)
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "go", "prompt_id": "p1"})
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	hearer(w.s).Clock = func() time.Time { return at }
	answer, held := w.awaited(context.Background(), w.permission("make"))
	<-held
	id := w.pendingID()
	at = at.Add(-time.Second) // the Stop was heard before the request was made
	w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": "p1", "last_assistant_message": "done"})
	if got := w.pendingID(); got != id {
		t.Fatalf("pending %s after the Stop, want %s still", got, id)
	}
	if _, err := hearer(w.s).Decide(context.Background(), id, loop.ApprovalDecision{Decision: loop.DecisionAllow}, "operator"); err != nil {
		t.Fatalf("deciding the later request: %v", err)
	}
	if got := <-answer; got.Behavior != loop.DecisionAllow {
		t.Errorf("its hook got %+v, want the allow", got)
	}
}

// A call that runs while its approval is pending — its PostToolUse, of
// the request's prompt and input, heard before its hook went away — was
// answered by a key at the terminal: the approval says so, by terminal,
// and the hook prints nothing. Another call's PostToolUse leaves it
// pending.
func TestAwaitDecision_ACallThatRanWasAnsweredAtTheTerminal(t *testing.T) {
	w := newHookWorld(t)
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "go", "prompt_id": "p1"})
	answer, held := w.awaited(context.Background(), w.permission("touch keyed.txt"))
	<-held
	id := w.pendingID()
	ran := func(command string) {
		w.hook(map[string]any{"hook_event_name": "PostToolUse", "prompt_id": "p1", "tool_name": "Bash", "tool_use_id": "toolu_1",
			"tool_input": map[string]any{"command": command, "description": "d"}, "tool_response": map[string]any{"stdout": ""}})
	}
	ran("ls")
	if got := w.pendingID(); got != id {
		t.Fatalf("another call's PostToolUse settled %s", id)
	}
	ran("touch keyed.txt")
	if got := <-answer; got.Behavior != "" {
		t.Errorf("the hook of a call answered at the terminal got %+v", got)
	}
	list, _ := hearer(w.s).Approvals(context.Background(), "supervisor")
	if len(list) != 1 || list[0].Status != loop.ApprovalAtTerminal || list[0].By != "terminal" {
		t.Errorf("approvals after the call ran: %+v, want %s answered-at-terminal by terminal", list, id)
	}
}

// BenchmarkApproval_RequestToDecisionToAnswer times one approval's round
// trip in the hearing room: the request recorded (held called), then the
// decision, until the waiting hook has its answer. The figures it reports
// are the request's recording (request-ms) and the decision's reaching
// the hook (decide-ms).
func BenchmarkApproval_RequestToDecisionToAnswer(b *testing.B) {
	w := newHookWorld(b)
	var request, decide time.Duration
	for i := 0; b.Loop(); i++ {
		began := time.Now()
		out, held := w.awaited(context.Background(), w.permission("ls "+time.Now().String()))
		<-held
		request += time.Since(began)
		list, _ := hearer(w.s).Approvals(context.Background(), "supervisor")
		began = time.Now()
		if _, err := hearer(w.s).Decide(context.Background(), list[0].ID, loop.ApprovalDecision{Decision: loop.DecisionAllow}, "operator"); err != nil {
			b.Fatal(err)
		}
		<-out
		decide += time.Since(began)
	}
	b.ReportMetric(float64(request.Microseconds())/1000/float64(b.N), "request-ms")
	b.ReportMetric(float64(decide.Microseconds())/1000/float64(b.N), "decide-ms")
}

// What an approval rule decided, told by the PreToolUse hook
// (loop.RuleReport), is standing.approval_decided by rule:<n> with the
// call's id; a PreToolUse with no report, or an ask, records nothing.
func TestApplyHook_ARulesDecisionIsRecordedByTheRule(t *testing.T) {
	w := newHookWorld(t)
	w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "go", "prompt_id": "p1"})
	payload := func(extra map[string]any) map[string]any {
		m := map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
			"tool_input": map[string]any{"command": "rm -rf /w"}, "prompt_id": "p1"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	w.hook(payload(nil))
	w.hook(payload(map[string]any{"the_loop_rule": 3, "the_loop_decision": "ask"}))
	data, _ := json.Marshal(payload(map[string]any{"session_id": w.id}))
	w.hook(mapOf(t, loop.RuleReport(data, 2, loop.RuleDeny)))
	var decided []loop.Event
	for _, e := range events(t, w.s, store.EventQuery{}) {
		if e.Event == "standing.approval_decided" {
			decided = append(decided, e)
		}
	}
	if len(decided) != 1 {
		t.Fatalf("approval_decided events = %+v, want the deny rule's alone", decided)
	}
	for key, want := range map[string]any{"by": "rule:2", "decision": "deny", "id": "toolu_1", "tool": "Bash", "standing": "supervisor"} {
		if got := decided[0].Field(key); got != want {
			t.Errorf("approval_decided %s = %v, want %v", key, got, want)
		}
	}
}

// mapOf decodes a JSON object.
func mapOf(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return m
}
