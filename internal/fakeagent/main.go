//go:build linux

// Command fakeagent stands in for Claude Code in tests (and, with
// FAKE_AGENT_CONTRACT=codex or gemini, for the Codex and Gemini CLIs:
// contracts.go). It honours the
// contract the-loop relies on (docs/claude-code.md): `--session-id <id>`
// starts a conversation, `--resume <id>` continues one (failing fast when
// no transcripts/<id>.jsonl exists), the last positional argument (or the
// last one after `--`) is the prompt, submitted as the first turn (a
// variadic option such as --allowedTools takes the non-flag arguments
// after it, as Claude Code's do); during a
// start-up delay the tty stays in canonical mode and typed input is read
// and discarded; then the tty goes raw, bracketed paste is switched on and
// a `❯ ` prompt is drawn; a bracketed paste followed by a carriage return is
// one message. SIGTERM flushes transcripts/<id>.jsonl (so a later --resume
// works), fires SessionEnd (reason other) and exits 0; SIGHUP exits without
// flushing and without hooks.
//
// Flags: --settings <file or inline JSON> (repeatable; the `hooks` of all
// are merged), --model (the payloads' model), --permission-mode and
// --dangerously-skip-permissions (the payloads' permission_mode, and
// whether /fake-tool follows the modelled permission flow: below; an
// unknown mode is taken as manual); others are only recorded in the start
// entry's argv. bypassPermissions (either
// flag) is Claude Code 2.1.332's (bypass.go): run by root it prints the
// CLI's refusal and exits 1 (FAKE_AGENT_AS_USER=1: as another user); else,
// unless <config dir>/settings.json holds skipDangerousModePermissionPrompt,
// a consent screen comes before the prompt — Enter exits 1, Esc exits 0,
// Down then Enter accepts and records it.
//
// Hooks: each command hook of the event runs with `sh -c` in the agent's
// cwd and environment (plus CLAUDE_PROJECT_DIR), in a process group of its
// own, the payload as JSON on stdin, synchronously (PermissionRequest: not
// waited for, below); past its `timeout` (seconds; default the stand-in's
// 10 s, for PermissionRequest Claude Code's 600 s) its process group gets
// SIGTERM (and the shell SIGKILL a second later). A matcher (a regular expression over the whole
// notification_type, tool_name, source or reason; "" or "*" = all)
// filters. Exit statuses are only logged. Every payload has session_id,
// transcript_path, cwd, hook_event_name:
//
//	SessionStart       source (startup|resume|clear), model — once the prompt is drawn
//	UserPromptSubmit   prompt, prompt_id, permission_mode
//	Stop               prompt_id, stop_hook_active (false), last_assistant_message, effort ("medium")
//	Notification       message, notification_type
//	PreToolUse         tool_name, tool_input, tool_use_id, permission_mode, prompt_id (modelled flow only)
//	PermissionRequest  tool_name, tool_input, permission_mode, prompt_id, permission_suggestions (manual dialog only) (modelled flow only)
//	PostToolUse        tool_name, tool_input, tool_response, tool_use_id, permission_mode (+ duration_ms in the modelled flow)
//	SessionEnd         reason (clear, prompt_input_exit, other)
//
// permission_mode is --permission-mode's value, "default" for manual or
// with no flag.
//
// Turns: a submitted message starts a turn (UserPromptSubmit, new
// prompt_id); after FAKE_AGENT_TURN_MS the fake answers (FAKE_AGENT_ANSWER)
// and fires Stop. A message submitted during a turn is queued as Claude
// Code does: "⎿  Queued · ctrl+x ctrl+s to send now" on screen,
// UserPromptSubmit at once with the running turn's prompt_id, an enqueue
// line in the transcript; after the running turn's Stop, a dequeue line, a
// user entry with a new promptId and a turn (and Stop) of its own.
//
// Magic messages (typed or pasted, then submitted):
//
//	/clear                         SessionEnd (clear) under the old id, SessionStart (clear) under a new uuid, a new transcript
//	/exit                          SessionEnd (prompt_input_exit), flush, exit 0
//	/fake-notify <type> <message>  fire a Notification at once (no turn)
//	/fake-tool <tool> <argument>   a turn using a tool (Bash <command>, Write <path> [content], …): below
//
// A /fake-tool turn with no --permission-mode (nor
// --dangerously-skip-permissions) is the stand-in's legacy flow, not what
// Claude Code does (it starts in auto mode): Notification
// permission_prompt at once and a dialog ("Do you want to proceed?", "❯ 1.
// Yes") that the next return or message answers; then PostToolUse (no
// duration_ms) fires and the turn goes on to its answer and Stop.
//
// With a --permission-mode the turn follows Claude Code 2.1.332's
// permission flow as measured (permissions.go; nothing is run or
// written). PreToolUse is fired and waited for; its stdout
// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":
// "allow"|"deny"|"ask","permissionDecisionReason":"R"}} decides (of
// several hooks deny wins, then ask): allow runs the tool (in plan mode the
// mode's dialog comes all the same); deny gives the model "PreToolUse:<tool>
// hook error: R" as the tool's error and the turn goes on to Stop; ask
// draws the hook's dialog ("Hook PreToolUse:<tool> requires confirmation
// for this command:", R, 1. Yes / 2. No) and fires PermissionRequest
// without permission_suggestions. A PreToolUse past its timeout decides
// nothing (a hook_cancelled attachment, timedOut true). Undecided, the
// mode decides: manual (or default) draws "Do you want to proceed?" (Bash:
// 1. Yes / 2. Yes, and always allow access to <dir> from this project —
// for a command inside the cwd "…don't ask again for <word> commands in
// <cwd>" — / 3. Yes, and switch to auto mode / 4. No; Write: "Do you want
// to create <file>?" 1. Yes / 2. Yes, allow all edits during this session
// / 3. No) and fires PermissionRequest with permission_suggestions
// (addDirectories for a command naming a path outside the cwd, setMode
// acceptEdits for a Write, else an addRules for the command's first word);
// acceptEdits runs a Write or an `echo … > file` inside the cwd and treats
// anything else as manual; auto runs a tool use inside the cwd and, for one
// outside it (a Write's file, or a command word that is an absolute path,
// ~ or .. leading out), draws "Auto mode can't check actions in this
// session" with an unnumbered ❯ No / Yes; plan draws "Do you want to
// proceed?" 1. Yes / 2. No; dontAsk denies (a tool error; the turn goes
// on); bypassPermissions runs. Auto and plan mode's own dialogs fire no
// PermissionRequest.
//
// PermissionRequest runs while its dialog is on screen and the keys work.
// Its stdout {"hookSpecificOutput":{"hookEventName":"PermissionRequest",
// "decision":{"behavior":"allow"}}} runs the tool ("Allowed by
// PermissionRequest hook"; an updatedInput replaces the tool's input,
// not the tool_use line's); {"behavior":"deny","message":"M"} gives the
// model M as the tool's error and the turn goes on to Stop; with
// "interrupt": true the turn ends as a key No does, M lost. Anything else
// — no such output, a non-zero exit, its timeout — leaves the dialog
// open. A key that decides first sends SIGTERM to the hook's process group
// at once. FAKE_AGENT_NOTIFY_MS after a dialog is drawn, if it is still
// open, Notification fires: permission_prompt ("Claude needs your
// permission to use <tool>") for a manual or ask dialog, agent_needs_input
// for auto and plan mode's own.
//
// Keys while a modelled dialog is open (no Enter needed): a digit picks
// its option (manual Bash 1 yes, 2 always, 3 yes and the mode becomes
// auto, 4 no; manual Write 1 yes, 2 yes and the mode becomes acceptEdits,
// 3 no; ask and plan 1 yes, 2 no); Escape picks No; Up and Down move the
// ❯; Enter picks the option under it (1, or auto's No). A yes runs the tool:
// PostToolUse, then the answer and Stop. A No ends the turn with nothing
// fired (no Stop): "Interrupted · What should Claude do instead?" on
// screen, the agent idle at its prompt. Typed characters are keys, not
// text, while the dialog is open, and a pasted message is dropped whole
// (paste_ignored) — the input box is not on screen, so the paste reaches
// only the dialog, which takes no text; the return after it is the Enter
// key. A message submitted before the dialog was drawn (during a waited-for
// PreToolUse) is queued. Not measured, so the stand-in's own: the wording of
// plan mode's dialog, of dontAsk's error and of agent_needs_input's
// message ("Claude needs your input"); the keys 2 and 3 of the manual
// dialogs and what they record; the inside/outside-the-cwd rule; a
// PreToolUse that exits non-zero deciding nothing.
//
// Transcript: Claude-shaped lines are appended as they happen to
// <config dir>/projects/<cwd, each non-alphanumeric character as '-'>/<id>.jsonl,
// the config dir being $CLAUDE_CONFIG_DIR, else $FAKE_AGENT_CONFIG_DIR (set
// by internal/testkit), else $HOME/.claude: user (promptId, string content),
// attachment, assistant (one line per answer part, parts split at blank
// lines, one message.id, usage), a tool_use and a tool_result (list
// content) line for /fake-tool, queue-operation, last-prompt. In the
// modelled flow the tool_use line comes first, and the user line holding
// the tool_result (is_error true for a tool error) carries
// permissionDecision: {"decision":"accept","source":"user_temporary",
// "grantScope":"once"} for a key yes (after an ask: {"decision":"accept",
// "source":"user_temporary","reasonCode":"hook:PreToolUse"}; manual Bash's
// 2: source user_permanent, grantScope project), {"decision":"accept",
// "source":"hook","reasonType":"hook"} for a hook's allow (PreToolUse's,
// or PermissionRequest's after an attachment {"type":
// "hook_permission_decision","decision":"allow","hookEvent":
// "PermissionRequest"}), {"decision":"reject","source":"hook","reasonType":
// "hook","reasonCode":"hook:PermissionRequest"} for its deny (hook:PreToolUse
// for PreToolUse's), {"decision":"accept"|"reject","source":"config",
// "reasonType":"mode"} when the mode decided; a key No leaves none: the
// standard rejection text, toolUseResult "User rejected tool use", then a
// user line "[Request interrupted by user for tool use]".
//
// `fakeagent internal-exec FILE` is the trampoline the-loop's runner
// launches (runner.ExecFromFile), so tests need not build the-loop for it.
//
// Environment:
//
//	FAKE_AGENT_DIR              required: log.jsonl and transcripts/<id>.jsonl live here
//	FAKE_AGENT_DELAY_MS         start-up delay (default 300)
//	FAKE_AGENT_TURN_MS          think time of a turn (default 50)
//	FAKE_AGENT_HOLD             a path: while a file is there, a turn whose think time is over ends only if the number in
//	                            the file (how many held turns may end in all; empty: 0) is not used up, else it waits
//	FAKE_AGENT_ANSWER           the answer, "{prompt}" replaced by the prompt (default "fake answer to: <prompt>")
//	FAKE_AGENT_SWALLOW_SUBMITS  drop the first N carriage returns (the text stays pending; a "swallowed" entry)
//	FAKE_AGENT_CONFIG_DIR       the config dir when CLAUDE_CONFIG_DIR is unset
//	FAKE_AGENT_IGNORE_TERM=1    log SIGTERM and keep running
//	FAKE_AGENT_CHILDREN=N       start N idle children, each in its own process group
//	FAKE_AGENT_EXIT_AFTER_MS    exit by itself after this long (flushing first; SessionEnd other)
//	FAKE_AGENT_EXIT_CODE        status of that exit (default 0)
//	FAKE_AGENT_NOTIFY_MS        how long a modelled dialog is open before its Notification fires (default 6000)
//
// Every event is one JSON line appended to $FAKE_AGENT_DIR/log.jsonl with
// a single write: start, resume_failed, settings_error, message, swallowed,
// hook (one per command run, when it ends), queued, dialog_answered (the
// legacy dialog), clear, transcript_error, sigterm, sighup, exit, eof,
// bypass_refused, bypass_consent, bypass_declined, bypass_accepted, and for
// the modelled permission flow:
//
//	hook_started        a PermissionRequest command started (event, command, payload)
//	permission_dialog   a dialog was drawn (text manual|ask|auto|plan, tool, promptId)
//	permission_decided  how the tool use was decided (text: pretooluse allow|deny, mode <mode>, hook allow,
//	                    hook deny, hook deny interrupt, key <1…4|enter|escape>; decision: allow — the tool
//	                    runs —, deny — a tool error, the turn goes on —, reject — a key No —, interrupt)
//	hook_sigterm        a PermissionRequest command still running got SIGTERM (text: the decision that
//	                    closed its dialog, or exit)
//	paste_ignored       a paste a dialog dropped (text)
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/the-loop-dev/the-loop/runner"
)

// childRole marks a re-executed idle child.
const childRole = "FAKE_AGENT_ROLE=child"

// childLifetime bounds an orphaned child so failed tests leave no litter.
const childLifetime = 5 * time.Minute

func main() {
	if len(os.Args) == 3 && os.Args[1] == "internal-exec" {
		// The trampoline `the-loop internal-exec FILE` is, so tests can
		// give a runner a launcher without building the-loop.
		err := runner.ExecFromFile(os.Args[2])
		fmt.Fprintln(os.Stderr, "fakeagent internal-exec:", err)
		os.Exit(1)
	}
	if os.Getenv("FAKE_AGENT_ROLE") == "child" {
		time.Sleep(childLifetime)
		return
	}
	os.Exit(run())
}

// agent is one fake session. Everything but the input goroutine runs on
// the main goroutine.
type agent struct {
	log       *logFile
	dir       string
	sessionID string
	cwd       string
	configDir string
	model     string
	permMode  string
	hooks     hookSet
	think     time.Duration
	hold      string // FAKE_AGENT_HOLD: no turn ends while this file exists, but those it grants
	released  int    // how many held turns have ended
	answerFmt string

	cur      *turn    // the running turn, nil when idle
	queue    []string // messages submitted during the running turn
	lastUUID string   // the transcript's last uuid (parentUuid of the next line)
	timer    *time.Timer

	// The modelled permission flow (permissions.go).
	dlg      *dialog          // the permission dialog on screen, nil when none
	gens     int              // dialogs drawn so far (a dialog's gen)
	keys     atomic.Bool      // a dialog has the focus: the input goroutine sends keys
	hookDone chan hookRun     // PermissionRequest hooks that ended
	notifyC  <-chan time.Time // the open dialog's notification falls due
	notifyIn time.Duration    // FAKE_AGENT_NOTIFY_MS

	mu       sync.Mutex
	messages []string
	flushed  bool

	// The Codex and Gemini contracts (contracts.go).
	contract   string
	started    time.Time
	resumed    bool
	untrusted  bool     // codex: hooks without --dangerously-bypass-hook-trust
	codexPath  string   // the rollout file
	codexFile  *os.File // held open once the first turn starts
	ordinal    int
	geminiPath string // the session file
	lastPrompt string
}

// turn is one prompt being answered.
type turn struct {
	promptID string
	text     string
	tool     *toolCall // set while a /fake-tool turn runs
	waiting  bool      // its legacy permission dialog is on screen
}

// toolCall is the tool a /fake-tool turn uses.
type toolCall struct {
	id, name, arg string
	input         map[string]any // the modelled flow's tool_input
	began         time.Time      // when the tool use began (duration_ms)
}

// run is the fake session from its command line to its exit, and returns
// its exit status: it reads the contract's arguments, opens the log,
// refuses a resume with nothing to resume, loads the hooks, records the
// start entry (and a settings error after it), draws the banner and then
// serves the terminal, the turns and the signals until an exit.
func run() int {
	dir := os.Getenv("FAKE_AGENT_DIR")
	if dir == "" {
		fmt.Fprintln(os.Stderr, "fakeagent: FAKE_AGENT_DIR is not set")
		return 2
	}
	contract := os.Getenv("FAKE_AGENT_CONTRACT")
	args := parseContractArgs(contract, os.Args[1:])
	lf, err := openLog(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		return 2
	}
	a, start := newAgent(lf, dir, contract, args)
	if !a.canResume(args, start) {
		return 1
	}
	err = a.loadHooks(args, &start)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)

	start.Children = startChildren(envInt("FAKE_AGENT_CHILDREN", 0))
	a.log.write(start)
	if err != nil {
		a.log.write(entry{Kind: "settings_error", Error: err.Error()})
	}
	if a.bypassRefused() {
		return a.refuseBypass()
	}

	term := newTerminal(0)
	fmt.Printf("fake agent %s starting…\r\n", args.sessionID)
	return a.serve(term, args, sigs)
}

// serve runs the session's main loop once the start is recorded: the
// input goroutine reads term (after the start-up delay), and the loop
// answers whichever comes first — the prompt drawn, a submit, a turn's
// think time ending, a signal, FAKE_AGENT_EXIT_AFTER_MS, the terminal's
// end. It returns the exit status.
func (a *agent) serve(term *terminal, args args, sigs <-chan os.Signal) int {
	var exitAfter <-chan time.Time
	if ms := envInt("FAKE_AGENT_EXIT_AFTER_MS", -1); ms >= 0 {
		exitAfter = time.After(time.Duration(ms) * time.Millisecond)
	}
	inputs := make(chan input)
	ready := make(chan struct{})
	eof := make(chan error, 1)
	delay := time.Duration(envInt("FAKE_AGENT_DELAY_MS", 300)) * time.Millisecond
	go a.input(term, delay, parser{swallow: envInt("FAKE_AGENT_SWALLOW_SUBMITS", 0), dropWithin: a.dropWithin(), keys: &a.keys}, ready, inputs, eof)

	a.timer = time.NewTimer(time.Hour)
	a.timer.Stop()
	defer a.stopHooks()
	ignoreTerm := os.Getenv("FAKE_AGENT_IGNORE_TERM") == "1"
	for {
		select {
		case <-ready:
			ready = nil
			a.onReady(args)
		case in := <-inputs:
			if in.kind == inputExit { // a declined consent screen: no conversation to flush
				a.log.write(entry{Kind: "exit", Code: in.code})
				term.restore()
				return in.code
			}
			if code, exit := a.handle(in); exit {
				err := a.flush()
				a.log.write(entry{Kind: "exit", Code: code, Error: errText(err)})
				term.restore()
				return code
			}
		case <-a.timer.C:
			if a.held() {
				a.timer.Reset(holdPoll)
				continue
			}
			a.finishTurn()
		case r := <-a.hookDone:
			a.onPermissionHook(r)
		case <-a.notifyC:
			a.onNotifyDue()
		case sig := <-sigs:
			if code, exit := a.onSignal(term, sig, ignoreTerm); exit {
				return code
			}
		case <-exitAfter:
			code := envInt("FAKE_AGENT_EXIT_CODE", 0)
			a.endSession(term, entry{Kind: "exit", Code: code})
			return code
		case err := <-eof:
			return a.onEOF(err, sigs)
		}
	}
}

// onReady starts the conversation once the prompt is drawn: SessionStart
// (source startup, or resume), then the command line's prompt, if any, as
// the first turn.
func (a *agent) onReady(args args) {
	source := "startup"
	if args.resume {
		source = "resume"
	}
	a.fire("SessionStart", map[string]any{"source": source, "model": a.model})
	if args.prompt != "" {
		a.process(args.prompt)
	}
}

// onSignal answers sig and reports whether the agent exits, and with what
// status: SIGHUP exits 129 at once, without flushing and without hooks;
// SIGTERM is logged and ignored under FAKE_AGENT_IGNORE_TERM=1, else it
// ends the session (endSession) and exits 0.
func (a *agent) onSignal(term *terminal, sig os.Signal, ignoreTerm bool) (code int, exit bool) {
	if sig == syscall.SIGHUP {
		a.log.write(entry{Kind: "sighup"})
		return 129, true
	}
	if ignoreTerm {
		a.log.write(entry{Kind: "sigterm", Ignored: true})
		return 0, false
	}
	a.endSession(term, entry{Kind: "sigterm"})
	return 0, true
}

// endSession ends the session from outside the conversation (SIGTERM,
// FAKE_AGENT_EXIT_AFTER_MS): the transcript flushed, SessionEnd (reason
// other) fired, last logged with the flush's error, the terminal restored.
func (a *agent) endSession(term *terminal, last entry) {
	err := a.flush()
	a.fire("SessionEnd", map[string]any{"reason": "other"})
	last.Error = errText(err)
	a.log.write(last)
	term.restore()
}

// onEOF answers the terminal's end (err, from reading it) and returns the
// exit status: a SIGHUP is usually on its way, so one that arrives within
// 200 ms exits as SIGHUP does (129); otherwise the end is logged (eof) and
// the agent exits 1.
func (a *agent) onEOF(err error, sigs <-chan os.Signal) int {
	select {
	case sig := <-sigs:
		if sig == syscall.SIGHUP {
			a.log.write(entry{Kind: "sighup"})
			return 129
		}
	case <-time.After(200 * time.Millisecond):
	}
	a.log.write(entry{Kind: "eof", Error: errText(err)})
	return 1
}

// input discards what is typed during the start-up delay, then reads the
// raw terminal, signals ready once the prompt is drawn, and sends each
// submit, empty return and swallowed return.
func (a *agent) input(term *terminal, delay time.Duration, p parser, ready chan<- struct{}, inputs chan<- input, eof chan<- error) {
	term.discardUntil(time.Now().Add(delay))
	term.makeRaw()
	if a.untrusted { // Codex stops on its hook review; the composer never shows
		fmt.Print("\x1b[?2004h\r\n  Hooks need review\r\n  1 hook is new or changed.\r\n› 1. Review hooks\r\n  2. Trust all and continue\r\n")
		a.log.write(entry{Kind: "hooks_review"})
		return
	}
	if a.consentAsked() {
		if code, exit := a.consent(term); exit {
			inputs <- input{kind: inputExit, code: code}
			return
		}
	}
	a.printf("\x1b[?2004h\r\n❯ ")
	ready <- struct{}{}
	buf := make([]byte, 32*1024)
	for {
		n, err := term.read(buf)
		for _, b := range buf[:n] {
			if in := p.feedEvent(b); in.kind != inputNone {
				inputs <- in
			}
		}
		if in := p.endOfRead(); in.kind != inputNone {
			inputs <- in
		}
		if err != nil {
			if term.saved != nil { // the terminal went away; plain stdin just ended
				eof <- err
			}
			return
		}
	}
}

// transcriptPath is transcripts/<id>.jsonl.
func (a *agent) transcriptPath() string {
	return filepath.Join(a.dir, "transcripts", a.sessionID+".jsonl")
}

// flush appends the conversation's messages to its transcript, creating it
// for a fresh id.
func (a *agent) flush() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.flushed || a.sessionID == "" {
		return nil
	}
	a.flushed = true
	if err := os.MkdirAll(filepath.Join(a.dir, "transcripts"), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(a.transcriptPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, m := range a.messages {
		b.Write(jsonLine(transcriptLine{Type: "user", SessionID: a.sessionID, Text: m}))
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startChildren starts n idle copies of this program, each in its own
// process group, and returns their pids.
func startChildren(n int) []int {
	if n <= 0 {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	var pids []int
	for i := 0; i < n; i++ {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), childRole)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			continue
		}
		pids = append(pids, cmd.Process.Pid)
		go func() { _ = cmd.Wait() }()
	}
	return pids
}

// selectedEnv returns the environment variables worth recording.
func selectedEnv() map[string]string {
	out := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "TERM", k == "TMUX_PANE", k == "CLAUDE_CONFIG_DIR", k == "CODEX_HOME", strings.HasPrefix(k, "GEMINI_CLI_"),
			strings.HasPrefix(k, "FAKE_AGENT_"), strings.HasPrefix(k, "THE_LOOP_"):
			out[k] = v
		}
	}
	return out
}

// envInt reads an integer variable, def when unset or malformed.
func envInt(name string, def int) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return def
	}
	return n
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// dropWithin is how soon after a paste the Gemini contract takes a
// carriage return as a newline (FAKE_AGENT_GEMINI_DROP_MS, default 40).
func (a *agent) dropWithin() time.Duration {
	if a.contract != contractGemini {
		return 0
	}
	return time.Duration(envInt("FAKE_AGENT_GEMINI_DROP_MS", 40)) * time.Millisecond
}
