//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// The permission flow is driven end to end: the fake built from this
// package, in a pane of a private tmux server, with settings whose hooks
// are small shell scripts; every wait polls the fake's log, its transcript
// or the pane.

// patience is how long a step takes on an idle machine (testkit.Eventually
// goes on waiting past it on a loaded one).
const patience = 5 * time.Second

// TestPermissionFlow builds the fake once and runs each case in a tmux
// server of its own.
func TestPermissionFlow(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fakeagent")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cases := []struct {
		name string
		run  func(t *testing.T, bin string)
	}{
		{"Manual_PermissionRequestAllowRunsTheToolWhileTheDialogIsOpen", testManualHookAllow},
		{"Manual_PermissionRequestDenyGivesTheModelItsMessage", testManualHookDeny},
		{"Manual_AKeyWinsOverABlockingHookAndSIGTERMsIt", testManualKeyWins},
		{"Manual_EscapeRejectsWithNoStop", testManualEscape},
		{"PreToolUseDenyIsAToolError", testPreToolUseDeny},
		{"PreToolUseAskThenPermissionRequestAllow", testPreToolUseAsk},
		{"PreToolUsePastItsTimeoutIsIgnoredInAutoMode", testPreToolUseTimeout},
		{"Auto_OwnDialogFiresNoPermissionRequestButAgentNeedsInput", testAutoDialog},
		{"NoFlag_LegacyDialogIsUnchanged", testLegacy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, bin)
		})
	}
}

// In manual mode the dialog is drawn while a PermissionRequest hook still
// runs; its allow closes the dialog and runs the tool, as a hook's allow
// is recorded.
func testManualHookAllow(t *testing.T, bin string) {
	s := newSession(t, bin)
	release := filepath.Join(s.tmp, "release")
	s.settings(map[string]string{"PermissionRequest": s.waitThen(release, permissionRequest(`{"behavior":"allow"}`))})
	s.start("manual", testkit.FakeTool("Bash", "ls /etc"))

	s.waitEntry("permission_dialog manual", func(e entry) bool { return e.Kind == "permission_dialog" && e.Text == "manual" })
	started := s.waitEntry("the PermissionRequest hook's start", func(e entry) bool { return e.Kind == "hook_started" })
	s.waitScreen("Do you want to proceed?")
	s.waitScreen("2. Yes, and always allow access to /etc from this project")
	var payload map[string]any
	if err := json.Unmarshal(started.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	if _, ok := payload["tool_use_id"]; ok {
		t.Errorf("PermissionRequest payload has a tool_use_id: %v", payload)
	}
	if payload["permission_mode"] != "default" || payload["tool_name"] != "Bash" {
		t.Errorf("PermissionRequest payload %v, want tool_name Bash, permission_mode default", payload)
	}
	if sug := fmt.Sprint(payload["permission_suggestions"]); !strings.Contains(sug, "addDirectories") || !strings.Contains(sug, "/etc") {
		t.Errorf("permission_suggestions %s, want addDirectories [/etc]", sug)
	}
	if n := len(s.entries(isHook("PostToolUse"))); n != 0 {
		t.Fatalf("PostToolUse fired before the hook decided (%d)", n)
	}

	touch(t, release)
	d := s.waitEntry("the decision", func(e entry) bool { return e.Kind == "permission_decided" })
	if d.Text != "hook allow" || d.Decision != "allow" {
		t.Fatalf("decided %q (%s), want hook allow", d.Text, d.Decision)
	}
	s.waitEntry("PostToolUse", isHook("PostToolUse"))
	s.waitEntry("Stop", isHook("Stop"))
	s.waitScreen("Allowed by PermissionRequest hook")
	result := s.toolResult()
	if want := `{"decision":"accept","reasonType":"hook","source":"hook"}`; jsonOf(result["permissionDecision"]) != want {
		t.Errorf("permissionDecision %s, want %s", jsonOf(result["permissionDecision"]), want)
	}
	if !s.hasAttachment(`{"decision":"allow","hookEvent":"PermissionRequest","type":"hook_permission_decision"}`) {
		t.Errorf("no hook_permission_decision attachment in the transcript:\n%s", s.transcriptText())
	}
}

// A PermissionRequest deny gives the model exactly its message as the
// tool's error; nothing runs and the turn ends with Stop.
func testManualHookDeny(t *testing.T, bin string) {
	s := newSession(t, bin)
	s.settings(map[string]string{"PermissionRequest": s.script("deny",
		"echo '"+permissionRequest(`{"behavior":"deny","message":"not on a Friday"}`)+"'")})
	s.start("manual", testkit.FakeTool("Bash", "make deploy"))

	d := s.waitEntry("the decision", func(e entry) bool { return e.Kind == "permission_decided" })
	if d.Text != "hook deny" || d.Decision != "deny" {
		t.Fatalf("decided %q (%s), want hook deny", d.Text, d.Decision)
	}
	s.waitEntry("Stop", isHook("Stop"))
	if n := len(s.entries(isHook("PostToolUse"))); n != 0 {
		t.Errorf("PostToolUse fired for a denied tool (%d)", n)
	}
	block := s.toolResultBlock()
	if block["content"] != "not on a Friday" || block["is_error"] != true {
		t.Errorf("tool_result %v, want is_error true and the hook's message", block)
	}
	dec := jsonOf(s.toolResult()["permissionDecision"])
	if !strings.Contains(dec, `"decision":"reject"`) || !strings.Contains(dec, `"reasonCode":"hook:PermissionRequest"`) {
		t.Errorf("permissionDecision %s, want a reject with reasonCode hook:PermissionRequest", dec)
	}
}

// A key pressed while the PermissionRequest hook blocks decides, and the
// hook gets SIGTERM at once.
func testManualKeyWins(t *testing.T, bin string) {
	s := newSession(t, bin)
	trapped, marker := filepath.Join(s.tmp, "trapped"), filepath.Join(s.tmp, "terminated")
	never := filepath.Join(s.tmp, "never")
	s.settings(map[string]string{"PermissionRequest": s.script("block",
		"trap 'echo TERM > "+marker+"; exit 143' TERM",
		": > "+trapped,
		"while [ ! -e "+never+" ]; do sleep 0.02; done")})
	s.start("manual", testkit.FakeTool("Bash", "go test ./..."))

	s.waitEntry("permission_dialog", func(e entry) bool { return e.Kind == "permission_dialog" })
	testkit.Eventually(t, func() bool { _, err := os.Stat(trapped); return err == nil }, patience,
		"the PermissionRequest hook never set its TERM trap (no %s)", trapped)
	s.keys("1")
	d := s.waitEntry("the decision", func(e entry) bool { return e.Kind == "permission_decided" })
	if d.Text != "key 1" || d.Decision != "allow" {
		t.Fatalf("decided %q (%s), want key 1", d.Text, d.Decision)
	}
	s.waitEntry("hook_sigterm", func(e entry) bool { return e.Kind == "hook_sigterm" && e.Text == "key 1" })
	testkit.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, patience,
		"the hook never got SIGTERM (no %s)", marker)
	s.waitEntry("PostToolUse", isHook("PostToolUse"))
	s.waitEntry("Stop", isHook("Stop"))
	if want := `{"decision":"accept","grantScope":"once","source":"user_temporary"}`; jsonOf(s.toolResult()["permissionDecision"]) != want {
		t.Errorf("permissionDecision %s, want %s", jsonOf(s.toolResult()["permissionDecision"]), want)
	}
}

// Escape rejects the tool use: "Interrupted" on screen, the rejection in
// the transcript, and nothing fires — the next message's Stop is the only
// one.
func testManualEscape(t *testing.T, bin string) {
	s := newSession(t, bin)
	s.settings(nil)
	s.start("default", testkit.FakeTool("Bash", "rm -rf build"))

	s.waitEntry("permission_dialog", func(e entry) bool { return e.Kind == "permission_dialog" })
	s.keys("Escape")
	d := s.waitEntry("the decision", func(e entry) bool { return e.Kind == "permission_decided" })
	if d.Text != "key escape" || d.Decision != "reject" {
		t.Fatalf("decided %q (%s), want key escape, reject", d.Text, d.Decision)
	}
	s.waitScreen("Interrupted · What should Claude do instead?")
	s.paste("next")
	stop := s.waitEntry("the next message's Stop", isHook("Stop"))
	if got := payloadOf(t, stop)["last_assistant_message"]; got != "fake answer to: next" {
		t.Fatalf("the first Stop answers %q: the rejected turn fired Stop", got)
	}
	if n := len(s.entries(isHook("PostToolUse"))); n != 0 {
		t.Errorf("PostToolUse fired for a rejected tool (%d)", n)
	}
	result := s.toolResult()
	if result["toolUseResult"] != "User rejected tool use" || result["permissionDecision"] != nil {
		t.Errorf("tool_result line %v, want toolUseResult \"User rejected tool use\" and no permissionDecision", result)
	}
	if !strings.Contains(s.transcriptText(), "[Request interrupted by user for tool use]") {
		t.Errorf("no interruption line in the transcript:\n%s", s.transcriptText())
	}
}

// A PreToolUse deny gives the model the hook error; no dialog, no
// PermissionRequest, no PostToolUse, and the turn ends with Stop.
func testPreToolUseDeny(t *testing.T, bin string) {
	s := newSession(t, bin)
	s.settings(map[string]string{
		"PreToolUse":        s.script("pre", "echo '"+preToolUse("deny", "no rm here")+"'"),
		"PermissionRequest": s.script("perm", "echo '"+permissionRequest(`{"behavior":"allow"}`)+"'"),
	})
	s.start("manual", testkit.FakeTool("Bash", "rm -rf /"))

	d := s.waitEntry("the decision", func(e entry) bool { return e.Kind == "permission_decided" })
	if d.Text != "pretooluse deny" || d.Decision != "deny" {
		t.Fatalf("decided %q (%s), want pretooluse deny", d.Text, d.Decision)
	}
	s.waitEntry("Stop", isHook("Stop"))
	for _, kind := range []string{"permission_dialog", "hook_started"} {
		if n := len(s.entries(func(e entry) bool { return e.Kind == kind })); n != 0 {
			t.Errorf("%d %s entries after a PreToolUse deny", n, kind)
		}
	}
	if n := len(s.entries(isHook("PostToolUse"))); n != 0 {
		t.Errorf("PostToolUse fired for a denied tool (%d)", n)
	}
	pre := payloadOf(t, s.entries(isHook("PreToolUse"))[0])
	if pre["tool_use_id"] == nil || pre["prompt_id"] == nil || jsonOf(pre["tool_input"]) != `{"command":"rm -rf /","description":"Run rm -rf /"}` {
		t.Errorf("PreToolUse payload %v", pre)
	}
	if block := s.toolResultBlock(); block["content"] != "PreToolUse:Bash hook error: no rm here" || block["is_error"] != true {
		t.Errorf("tool_result %v, want the hook error", block)
	}
}

// A PreToolUse ask draws the hook's own dialog and fires PermissionRequest
// (no suggestions), whose allow runs the tool.
func testPreToolUseAsk(t *testing.T, bin string) {
	s := newSession(t, bin)
	release := filepath.Join(s.tmp, "release")
	s.settings(map[string]string{
		"PreToolUse":        s.script("pre", "echo '"+preToolUse("ask", "a human should look")+"'"),
		"PermissionRequest": s.waitThen(release, permissionRequest(`{"behavior":"allow"}`)),
	})
	s.start("auto", testkit.FakeTool("Bash", "ls"))

	s.waitEntry("permission_dialog ask", func(e entry) bool { return e.Kind == "permission_dialog" && e.Text == "ask" })
	started := s.waitEntry("the PermissionRequest hook's start", func(e entry) bool { return e.Kind == "hook_started" })
	s.waitScreen("Hook PreToolUse:Bash requires confirmation for this command:")
	s.waitScreen("a human should look")
	p := map[string]any{}
	if err := json.Unmarshal(started.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if _, ok := p["permission_suggestions"]; ok || p["permission_mode"] != "auto" {
		t.Errorf("PermissionRequest payload after ask %v, want no permission_suggestions and permission_mode auto", p)
	}
	touch(t, release)
	d := s.waitEntry("the decision", func(e entry) bool { return e.Kind == "permission_decided" })
	if d.Text != "hook allow" {
		t.Fatalf("decided %q, want hook allow", d.Text)
	}
	s.waitEntry("PostToolUse", isHook("PostToolUse"))
	s.waitEntry("Stop", isHook("Stop"))
}

// A PreToolUse hook past its timeout decides nothing: in auto mode a
// command inside the cwd runs, and the transcript records the cancelled
// hook.
func testPreToolUseTimeout(t *testing.T, bin string) {
	s := newSession(t, bin)
	s.settingsDoc(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "timeout": 1,
			"command": s.script("slow", "sleep 30")}}}},
		"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "true"}}}},
	}})
	s.start("auto", testkit.FakeTool("Bash", "ls"))

	d := s.waitEntry("the decision", func(e entry) bool { return e.Kind == "permission_decided" })
	if d.Text != "mode auto" || d.Decision != "allow" {
		t.Fatalf("decided %q (%s), want mode auto", d.Text, d.Decision)
	}
	if pre := s.entries(isHook("PreToolUse")); len(pre) != 1 || !strings.Contains(pre[0].Error, "timed out") {
		t.Fatalf("PreToolUse entries %+v, want one that timed out", pre)
	}
	s.waitEntry("Stop", isHook("Stop"))
	if !strings.Contains(s.transcriptText(), `"type":"hook_cancelled"`) || !strings.Contains(s.transcriptText(), `"timedOut":true`) {
		t.Errorf("no hook_cancelled attachment in the transcript:\n%s", s.transcriptText())
	}
}

// Auto mode's own dialog (a command outside the cwd) fires no
// PermissionRequest; agent_needs_input follows FAKE_AGENT_NOTIFY_MS later;
// No is preselected, Down then Enter picks Yes.
func testAutoDialog(t *testing.T, bin string) {
	s := newSession(t, bin)
	s.notifyMS = 100
	s.settings(map[string]string{
		"PermissionRequest": s.script("perm", "echo '"+permissionRequest(`{"behavior":"allow"}`)+"'"),
		"Notification":      "true",
	})
	s.start("auto", testkit.FakeTool("Bash", "cat /etc/hostname"))

	s.waitEntry("permission_dialog auto", func(e entry) bool { return e.Kind == "permission_dialog" && e.Text == "auto" })
	s.waitScreen("Auto mode can't check actions in this session")
	s.waitScreen("❯ No")
	n := s.waitEntry("a Notification", isHook("Notification"))
	if typ := payloadOf(t, n)["notification_type"]; typ != "agent_needs_input" {
		t.Fatalf("notification_type %v, want agent_needs_input", typ)
	}
	s.keys("Down")
	s.waitScreen("❯ Yes")
	s.keys("Enter")
	d := s.waitEntry("the decision", func(e entry) bool { return e.Kind == "permission_decided" })
	if d.Text != "key enter" || d.Decision != "allow" {
		t.Fatalf("decided %q (%s), want key enter, allow", d.Text, d.Decision)
	}
	s.waitEntry("Stop", isHook("Stop"))
	if n := len(s.entries(func(e entry) bool { return e.Kind == "hook_started" || e.Event == "PermissionRequest" })); n != 0 {
		t.Errorf("PermissionRequest ran for auto mode's own dialog (%d entries)", n)
	}
}

// With no --permission-mode the legacy flow stays: Notification
// permission_prompt at once, a dialog the next return answers, no
// PreToolUse or PermissionRequest.
func testLegacy(t *testing.T, bin string) {
	s := newSession(t, bin)
	s.settings(map[string]string{
		"PreToolUse":        s.script("pre", "echo '"+preToolUse("deny", "never asked")+"'"),
		"PermissionRequest": "true",
		"Notification":      "true",
	})
	s.start("", "")
	s.waitScreen("❯")
	s.paste(testkit.FakeTool("Bash", "make test"))
	n := s.waitEntry("the Notification", isHook("Notification"))
	if typ := payloadOf(t, n)["notification_type"]; typ != "permission_prompt" {
		t.Fatalf("notification_type %v, want permission_prompt", typ)
	}
	s.waitScreen("Do you want to proceed?")
	s.keys("Enter")
	s.waitEntry("dialog_answered", func(e entry) bool { return e.Kind == "dialog_answered" })
	post := payloadOf(t, s.waitEntry("PostToolUse", isHook("PostToolUse")))
	if _, ok := post["duration_ms"]; ok {
		t.Errorf("the legacy PostToolUse has a duration_ms: %v", post)
	}
	s.waitEntry("Stop", isHook("Stop"))
	for _, ev := range []string{"PreToolUse", "PermissionRequest"} {
		if n := len(s.entries(isHook(ev))); n != 0 {
			t.Errorf("%s fired in the legacy flow (%d)", ev, n)
		}
	}
	if n := len(s.entries(func(e entry) bool { return strings.HasPrefix(e.Kind, "permission_") })); n != 0 {
		t.Errorf("%d permission_* entries in the legacy flow", n)
	}
}

func TestOutside_IsTheDirectoryOutsideTheCwdAToolUseReaches(t *testing.T) {
	cwd := t.TempDir()
	home, _ := os.UserHomeDir()
	cases := []struct{ tool, arg, want string }{
		{"Bash", "ls -la", ""},
		{"Bash", "cat " + cwd + "/notes.txt", ""},
		{"Bash", "ls /etc", "/etc"},
		{"Bash", "cat /etc/no-such-file", "/etc"},
		{"Bash", "cat ../secret", filepath.Dir(cwd)},
		{"Bash", "echo hi > /tmp/no-such-dir/f", "/tmp/no-such-dir"},
		{"Bash", "ls ~", home},
		{"Write", "notes.txt", ""},
		{"Write", "/etc/motd", "/etc"},
	}
	for _, c := range cases {
		a := &agent{cwd: cwd, cur: &turn{tool: &toolCall{name: c.tool, arg: c.arg}}}
		a.cur.tool.input = a.toolInput(a.cur.tool)
		if got := a.outside(); got != c.want {
			t.Errorf("%s(%s): outside %q, want %q", c.tool, c.arg, got, c.want)
		}
	}
}

// session is one fake agent in a pane of a private tmux server.
type session struct {
	t        *testing.T
	bin      string
	socket   string
	tmp      string // scripts, markers
	dir      string // FAKE_AGENT_DIR
	cwd      string
	config   string // CLAUDE_CONFIG_DIR
	id       string
	file     string // the settings file
	notifyMS int
}

// newSession prepares the directories of one fake agent and its private
// tmux server (killed when the test ends).
func newSession(t *testing.T, bin string) *session {
	base := t.TempDir()
	s := &session{t: t, bin: bin, socket: testkit.Tmux(t), tmp: filepath.Join(base, "tmp"), dir: filepath.Join(base, "agent"),
		cwd: filepath.Join(base, "cwd"), config: filepath.Join(base, "config"), id: uuid.NewString(),
		file: filepath.Join(base, "settings.json"), notifyMS: 600000}
	for _, d := range []string{s.tmp, s.dir, s.cwd, s.config} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// settings writes a settings file with one command hook for each event
// given, and `true` hooks for PostToolUse and Stop (so the log shows them).
func (s *session) settings(commands map[string]string) {
	hooks := map[string]any{}
	for _, ev := range []string{"PostToolUse", "Stop"} {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "true"}}}}
	}
	for ev, cmd := range commands {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd}}}}
	}
	s.settingsDoc(map[string]any{"hooks": hooks})
}

// settingsDoc writes doc as the settings file.
func (s *session) settingsDoc(doc map[string]any) {
	if err := os.WriteFile(s.file, []byte(jsonOf(doc)), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// script writes an executable shell script (its stdin, the payload, read
// first) and returns its path.
func (s *session) script(name string, lines ...string) string {
	p := filepath.Join(s.tmp, name+".sh")
	body := "#!/bin/sh\ncat >/dev/null\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// waitThen is a hook script that waits for file to exist and then prints
// out.
func (s *session) waitThen(file, out string) string {
	return s.script("wait-"+filepath.Base(file), "while [ ! -e "+file+" ]; do sleep 0.02; done", "echo '"+out+"'")
}

// start runs the fake in a new pane: --permission-mode mode (none when
// ""), the settings file, and prompt as the first turn (none when "").
func (s *session) start(mode, prompt string) {
	argv := []string{"new-session", "-d", "-s", "fake", "-x", "200", "-y", "50", "-c", s.cwd, "env",
		"FAKE_AGENT_DIR=" + s.dir, "CLAUDE_CONFIG_DIR=" + s.config, "FAKE_AGENT_DELAY_MS=0", "FAKE_AGENT_TURN_MS=20",
		fmt.Sprintf("FAKE_AGENT_NOTIFY_MS=%d", s.notifyMS), s.bin, "--session-id", s.id, "--settings", s.file}
	if mode != "" {
		argv = append(argv, "--permission-mode", mode)
	}
	if prompt != "" {
		argv = append(argv, "--", prompt)
	}
	if _, err := testkit.TmuxRun(s.socket, argv...); err != nil {
		s.t.Fatal(err)
	}
	start := s.waitEntry("the start entry", func(e entry) bool { return e.Kind == "start" })
	// Runs before testkit.Tmux's cleanup and the temp dirs' removal: the
	// fake (and its hooks) must be gone before its directories go.
	s.t.Cleanup(func() {
		_, _ = testkit.TmuxRun(s.socket, "kill-server")
		testkit.Eventually(s.t, func() bool { return testkit.ProcessGone(start.Pid) }, patience,
			"the fake (pid %d) still runs after its tmux server was killed", start.Pid)
	})
}

// keys sends tmux key names to the pane.
func (s *session) keys(keys ...string) {
	s.t.Helper()
	if _, err := testkit.TmuxRun(s.socket, append([]string{"send-keys", "-t", "fake"}, keys...)...); err != nil {
		s.t.Fatal(err)
	}
}

// paste pastes text (bracketed) and presses Enter.
func (s *session) paste(text string) {
	s.t.Helper()
	if _, err := testkit.TmuxRun(s.socket, "set-buffer", "-b", "p", text); err != nil {
		s.t.Fatal(err)
	}
	if _, err := testkit.TmuxRun(s.socket, "paste-buffer", "-p", "-d", "-b", "p", "-t", "fake"); err != nil {
		s.t.Fatal(err)
	}
	s.keys("Enter")
}

// screen is the pane's text.
func (s *session) screen() string {
	out, _ := testkit.TmuxRun(s.socket, "capture-pane", "-p", "-t", "fake")
	return out
}

// waitScreen waits for text on the pane.
func (s *session) waitScreen(text string) {
	s.t.Helper()
	testkit.Eventually(s.t, func() bool { return strings.Contains(s.screen(), text) }, patience,
		"%q not on screen:\n%s", text, s.screen())
}

// entries are the fake's log entries that pred selects.
func (s *session) entries(pred func(entry) bool) []entry {
	data, _ := os.ReadFile(filepath.Join(s.dir, "log.jsonl"))
	var out []entry
	for _, line := range strings.Split(string(data), "\n") {
		var e entry
		if json.Unmarshal([]byte(line), &e) == nil && pred(e) {
			out = append(out, e)
		}
	}
	return out
}

// waitEntry waits for the first log entry pred selects (what names it).
func (s *session) waitEntry(what string, pred func(entry) bool) entry {
	s.t.Helper()
	var found []entry
	testkit.Eventually(s.t, func() bool { found = s.entries(pred); return len(found) > 0 }, patience,
		"no %s in the log; screen:\n%s", what, s.screen())
	return found[0]
}

// transcriptText is the conversation's transcript.
func (s *session) transcriptText() string {
	data, _ := os.ReadFile(filepath.Join(s.config, "projects", projectDirName(s.cwd), s.id+".jsonl"))
	return string(data)
}

// transcript is the transcript's lines.
func (s *session) transcript() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.transcriptText(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// toolResult is the user line holding the tool_result (fails the test
// when there is none).
func (s *session) toolResult() map[string]any {
	s.t.Helper()
	for _, l := range s.transcript() {
		if l["type"] == "user" && strings.Contains(jsonOf(l["message"]), `"type":"tool_result"`) {
			return l
		}
	}
	s.t.Fatalf("no tool_result in the transcript:\n%s", s.transcriptText())
	return nil
}

// toolResultBlock is the tool_result block itself.
func (s *session) toolResultBlock() map[string]any {
	s.t.Helper()
	msg, _ := s.toolResult()["message"].(map[string]any)
	content, _ := msg["content"].([]any)
	if len(content) == 0 {
		s.t.Fatalf("tool_result line without content: %v", msg)
	}
	block, _ := content[0].(map[string]any)
	return block
}

// hasAttachment reports whether the transcript has an attachment whose
// JSON is want.
func (s *session) hasAttachment(want string) bool {
	for _, l := range s.transcript() {
		if l["type"] == "attachment" && jsonOf(l["attachment"]) == want {
			return true
		}
	}
	return false
}

// isHook selects the hook entries of event.
func isHook(event string) func(entry) bool {
	return func(e entry) bool { return e.Kind == "hook" && e.Event == event }
}

// payloadOf is a hook entry's payload.
func payloadOf(t *testing.T, e entry) map[string]any {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatalf("payload %s: %v", e.Payload, err)
	}
	return p
}

// preToolUse is a PreToolUse hook's output deciding decision.
func preToolUse(decision, reason string) string {
	return fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":%q,"permissionDecisionReason":%q}}`, decision, reason)
}

// permissionRequest is a PermissionRequest hook's output with decision.
func permissionRequest(decision string) string {
	return `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":` + decision + `}}`
}

// touch creates file.
func touch(t *testing.T, file string) {
	t.Helper()
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// jsonOf is v as compact JSON (keys sorted).
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
