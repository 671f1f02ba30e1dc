package main

import (
	"context"
	"encoding/json"
	"fmt"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/redact"
)

// Pending approvals in the browser (issue A): a PermissionRequest hook the
// hook program holds at the service (awaitHook, as Claude Code runs it)
// is listed first on the dashboard with its input, and Approve and Deny on
// the page are the decision the hook prints. What was decided is read
// from the service with the operator's token, not from the page. The waits
// here have no deadline of their own: `go test -timeout` bounds them.

// pollPage waits until expression is truthy in the page.
func pollPage(t *testing.T, ctx context.Context, what, expression string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+expression+")", chromedp.WithPollingTimeout(0), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
		t.Fatalf("waiting for %s (%s): %v; the page says:\n%s", what, expression, err, text)
	}
}

// bootAnswered waits for the supervisor's boot turn to be answered (an
// approval asked during a turn is withdrawn at its end) and returns its
// row, which names the conversation a hook payload must carry.
func bootAnswered(t *testing.T, e *env) loop.StandingRow {
	t.Helper()
	var row loop.StandingRow
	waitFor(t, "the boot turn's answer", func() bool {
		row = e.supervisor()
		return row.Activity == loop.ActivityIdle && row.LastAnswerAt != "" && row.HarnessSessionID != ""
	})
	return row
}

// pendingNow waits until `standing approvals` lists n pending approvals.
func pendingNow(t *testing.T, e *env, n int) []loop.Approval {
	t.Helper()
	var list []loop.Approval
	waitFor(t, fmt.Sprintf("%d pending approval(s)", n), func() bool { list = pendingApprovals(t, e); return len(list) == n })
	return list
}

// approvalAt reads approval id from GET /api/v1/approvals with the
// operator's token.
func approvalAt(t *testing.T, e *env, base, id string) loop.Approval {
	t.Helper()
	req, _ := nethttp.NewRequest(nethttp.MethodGet, base+"/api/v1/approvals?session=supervisor", nil)
	req.Header.Set("Authorization", "Bearer "+e.token())
	resp, err := nethttp.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []loop.Approval
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != nethttp.StatusOK {
		t.Fatalf("GET /api/v1/approvals: %d %v", resp.StatusCode, err)
	}
	for _, a := range list {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("approval %s is not listed: %+v", id, list)
	return loop.Approval{}
}

// hookDecision decodes what a PermissionRequest hook printed: its
// decision's behavior and message.
func hookDecision(t *testing.T, printed string) (behavior, message string) {
	t.Helper()
	var out struct {
		HookSpecificOutput struct {
			HookEventName string `json:"hookEventName"`
			Decision      struct{ Behavior, Message string }
		}
	}
	if err := json.Unmarshal([]byte(printed), &out); err != nil || out.HookSpecificOutput.HookEventName != "PermissionRequest" {
		t.Fatalf("the hook printed %q (%v), want a PermissionRequest decision", printed, err)
	}
	return out.HookSpecificOutput.Decision.Behavior, out.HookSpecificOutput.Decision.Message
}

// approvalRow is the CSS selector of approval id's row on the page.
func approvalRow(id string) string { return fmt.Sprintf(`#approvals li.approval[data-id=%q]`, id) }

// before is a JavaScript test that the element first selects comes
// before the one second selects.
func before(first, second string) string {
	return fmt.Sprintf(`(() => { const a = document.querySelector(%q), b = document.querySelector(%q);
	  return a && b && !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING); })()`, first, second)
}

// TestDashboardBrowser_ApproveFromTheOverviewAllowsTheRequest: the
// overview lists the pending approval above the sessions, with its
// session, tool, time and input (credential shapes redacted, as the
// service's redactor redacts them), and Approve allows it: the hook prints
// allow, the service records it allowed by the operator, the row goes.
func TestDashboardBrowser_ApproveFromTheOverviewAllowsTheRequest(t *testing.T) {
	e, base := dashboardEnv(t, hookServiceConfig)
	row := bootAnswered(t, e)
	ctx := loggedIn(t, e, base, 1280, 900)
	key := "sk-ant-api03-" + strings.Repeat("Zq7_", 8)
	command := "curl -sH 'x-api-key: " + key + "' https://api.example/v1/models && ls /tmp"
	out := awaitHook(t, e, row.HarnessSessionID, command)
	a := pendingNow(t, e, 1)[0]
	sel := approvalRow(a.ID)
	pollPage(t, ctx, "the approval on the overview", `document.querySelector('`+sel+`')`)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel+" pre > code"))); err != nil {
		t.Fatal(err)
	}
	pollPage(t, ctx, "supervisor waiting", `document.querySelector('.waiting:not([hidden])')`)
	for _, later := range []string{".waiting", "#standing-rows"} {
		if !js[bool](t, ctx, before("#approvals", later)) {
			t.Errorf("the pending approvals are not listed before %s", later)
		}
	}
	if got, want := js[string](t, ctx, `document.querySelector('`+sel+` pre > code').textContent`), redact.Shapes(command); got != want || strings.Contains(got, key) {
		t.Errorf("the input shows as %q, want %q", got, want)
	}
	head := js[string](t, ctx, `document.querySelector('`+sel+` .approval-head').textContent`)
	if !strings.Contains(head, "supervisor asks to use Bash") || !strings.Contains(head, a.ID) {
		t.Errorf("the row's head says %q", head)
	}
	if at := js[string](t, ctx, `document.querySelector('`+sel+` time').getAttribute('datetime')`); at != a.RequestedAt {
		t.Errorf("requested at %q on the page, %q at the service", at, a.RequestedAt)
	}
	if title := js[string](t, ctx, `document.querySelector('#approvals h2').textContent`); title != "Pending approvals (1)" {
		t.Errorf("the section's title: %q", title)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel+" button.approve"))); err != nil {
		t.Fatal(err)
	}
	if behavior, _ := hookDecision(t, <-out); behavior != loop.DecisionAllow {
		t.Errorf("the hook's behavior is %q, want allow", behavior)
	}
	if got := approvalAt(t, e, base, a.ID); got.Status != loop.ApprovalAllowed || got.By != "operator" || got.Message != "" {
		t.Errorf("after Approve the service holds %+v, want allowed by operator", got)
	}
	pollPage(t, ctx, "the decided row gone and the section hidden", `!document.querySelector('`+sel+`') && document.getElementById('approvals').hidden`)
	if msg := js[string](t, ctx, `document.getElementById('approval-result').textContent`); !strings.Contains(msg, "allowed") || !strings.Contains(msg, a.ID) {
		t.Errorf("the decision's notice says %q", msg)
	}
}

// TestDashboardBrowser_DenyWithAMessageFromTheSessionsPage: a session's
// page lists its pending approvals first; Deny sends the message typed
// beside it, which the model reads framed with who denied, and only that
// row goes. An input past 3,000 characters shows its first 3,000 with a
// note, and Approve is off for it (nobody approves what they were not
// shown); Deny with no message is a deny with no reason. Markup in an
// input is text.
func TestDashboardBrowser_DenyWithAMessageFromTheSessionsPage(t *testing.T) {
	e, base := dashboardEnv(t, hookServiceConfig)
	row := bootAnswered(t, e)
	ctx := loggedIn(t, e, base, 1280, 900)
	navigate(t, ctx, base+"/#/s/supervisor")
	short := `rm -rf build <img src=x id=planted onerror="document.title='pwned'">`
	long := "printf '%s' " + strings.Repeat("0123456789", 350)
	shortOut, longOut := awaitHook(t, e, row.HarnessSessionID, short), awaitHook(t, e, row.HarnessSessionID, long)
	list := pendingNow(t, e, 2)
	s, l := list[0], list[1]
	if strings.Contains(string(s.Input), "printf") {
		s, l = l, s
	}
	shortSel, longSel := approvalRow(s.ID), approvalRow(l.ID)
	pollPage(t, ctx, "both approvals on the session's page", `document.querySelector('`+shortSel+`') && document.querySelector('`+longSel+`')`)
	for _, later := range []string{".buttons", "#say-panel", "#transcript-panel"} {
		if !js[bool](t, ctx, before("#approvals", later)) {
			t.Errorf("the pending approvals are not listed before %s", later)
		}
	}
	if got := js[string](t, ctx, `document.querySelector('`+shortSel+` pre > code').textContent`); got != short {
		t.Errorf("the input shows as %q, want %q", got, short)
	}
	if js[bool](t, ctx, `!!document.getElementById('planted') || document.title === 'pwned'`) {
		t.Error("the input's markup became part of the page")
	}
	if got := js[string](t, ctx, `document.querySelector('`+longSel+` pre > code').textContent`); got != long[:3000] {
		t.Errorf("the long input shows %d characters, want its first 3000", len(got))
	}
	if !js[bool](t, ctx, `document.querySelector('`+longSel+` button.approve').disabled && !!document.querySelector('`+longSel+` .cut-note')`) {
		t.Error("the long input's Approve is enabled, or no note says it is cut")
	}

	message := "use `make clean` — the build dir is shared"
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(shortSel+" input.deny-message"), message),
		chromedp.Click(chromedp.CSS(shortSel+" button.deny")),
	); err != nil {
		t.Fatal(err)
	}
	if behavior, framed := hookDecision(t, <-shortOut); behavior != loop.DecisionDeny || !strings.Contains(framed, "Denied by operator") || !strings.Contains(framed, message) {
		t.Errorf("the denied hook printed %s %q", behavior, framed)
	}
	if got := approvalAt(t, e, base, s.ID); got.Status != loop.ApprovalDenied || got.By != "operator" || got.Message != message {
		t.Errorf("after Deny the service holds %+v, want denied by operator with %q", got, message)
	}
	pollPage(t, ctx, "the denied row gone, the other listed", `!document.querySelector('`+shortSel+`') && document.querySelector('`+longSel+`') && document.querySelector('#approvals h2').textContent === 'Pending approvals (1)'`)
	if got := approvalAt(t, e, base, l.ID); got.Status != loop.ApprovalPending {
		t.Errorf("the other approval is %s, want pending", got.Status)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(longSel+" button.deny"))); err != nil {
		t.Fatal(err)
	}
	if behavior, framed := hookDecision(t, <-longOut); behavior != loop.DecisionDeny || !strings.Contains(framed, "no reason was given") {
		t.Errorf("the hook denied with no message printed %s %q", behavior, framed)
	}
	if got := approvalAt(t, e, base, l.ID); got.Status != loop.ApprovalDenied || got.Message != "" {
		t.Errorf("after Deny with no message the service holds %+v", got)
	}
	pollPage(t, ctx, "the section hidden", `document.getElementById('approvals').hidden && !document.querySelector('#approvals li')`)
}

// TestDashboardBrowser_ApprovalInputRedactsAsTheService: the page's
// redaction of an input gives what the service's redactor gives
// (redact.Shapes) on each credential shape and on text that only looks
// like one.
func TestDashboardBrowser_ApprovalInputRedactsAsTheService(t *testing.T) {
	e, base := dashboardEnv(t, dashboardSessions)
	ctx := loggedIn(t, e, base, 1280, 800)
	samples := []string{
		"ANTHROPIC_API_KEY=sk-ant-api03-" + strings.Repeat("a1B2", 6) + " claude",
		"sk-proj-" + strings.Repeat("x9", 12) + " and sk-" + strings.Repeat("Q", 24),
		`{"token":"xoxb-1234567890-abcdefghij","bot":"xoxp-12345"}`,
		"git push https://ghp_" + strings.Repeat("A1", 18) + "@github.com/o/r",
		"github_pat_" + strings.Repeat("Z_9", 8) + " gho_" + strings.Repeat("b", 35),
		"aws AKIAIOSFODNN7EXAMPLE and AKIA123",
		"risk-ant-" + strings.Repeat("a", 30) + " whisk-" + strings.Repeat("b", 30) + " ésk-" + strings.Repeat("c", 24),
		"nothing secret here: ls -la /tmp",
	}
	in, _ := json.Marshal(samples)
	got := js[[]string](t, ctx, `import('/assets/approvals.js').then((m) => `+string(in)+`.map(m.redact))`)
	if len(got) != len(samples) {
		t.Fatalf("the page redacted %d samples of %d", len(got), len(samples))
	}
	for i, s := range samples {
		if want := redact.Shapes(s); got[i] != want {
			t.Errorf("sample %d: the page gives %q, the service %q", i, got[i], want)
		}
	}
}
