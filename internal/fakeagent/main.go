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
// --dangerously-skip-permissions (the payloads' permission_mode); others
// are only recorded in the start entry's argv.
//
// Hooks: each command hook of the event runs with `sh -c` in the agent's
// cwd and environment (plus CLAUDE_PROJECT_DIR), the payload as JSON on
// stdin, synchronously, within 10 s (or its `timeout`); a matcher (a
// regular expression over the whole notification_type, tool_name, source
// or reason; "" or "*" = all) filters. Exit statuses are only logged.
// Every payload has session_id, transcript_path, cwd, hook_event_name:
//
//	SessionStart      source (startup|resume|clear), model — once the prompt is drawn
//	UserPromptSubmit  prompt, prompt_id, permission_mode
//	Stop              prompt_id, stop_hook_active (false), last_assistant_message, effort ("medium")
//	Notification      message, notification_type
//	PostToolUse       tool_name, tool_input, tool_response, tool_use_id, permission_mode
//	SessionEnd        reason (clear, prompt_input_exit, other)
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
//	/fake-tool <tool> <argument>   a turn that first fires Notification permission_prompt and shows a permission
//	                               dialog ("Do you want to proceed?", "❯ 1. Yes"); the next return or message answers
//	                               it, then PostToolUse fires and the turn goes on to its answer and Stop
//
// Transcript: Claude-shaped lines are appended as they happen to
// <config dir>/projects/<cwd, each non-alphanumeric character as '-'>/<id>.jsonl,
// the config dir being $CLAUDE_CONFIG_DIR, else $FAKE_AGENT_CONFIG_DIR (set
// by internal/testkit), else $HOME/.claude: user (promptId, string content),
// attachment, assistant (one line per answer part, parts split at blank
// lines, one message.id, usage), a tool_use and a tool_result (list
// content) line for /fake-tool, queue-operation, last-prompt.
//
// `fakeagent internal-exec FILE` is the trampoline the-loop's runner
// launches (runner.ExecFromFile), so tests need not build the-loop for it.
//
// Environment:
//
//	FAKE_AGENT_DIR              required: log.jsonl and transcripts/<id>.jsonl live here
//	FAKE_AGENT_DELAY_MS         start-up delay (default 300)
//	FAKE_AGENT_TURN_MS          think time of a turn (default 50)
//	FAKE_AGENT_ANSWER           the answer, "{prompt}" replaced by the prompt (default "fake answer to: <prompt>")
//	FAKE_AGENT_SWALLOW_SUBMITS  drop the first N carriage returns (the text stays pending; a "swallowed" entry)
//	FAKE_AGENT_CONFIG_DIR       the config dir when CLAUDE_CONFIG_DIR is unset
//	FAKE_AGENT_IGNORE_TERM=1    log SIGTERM and keep running
//	FAKE_AGENT_CHILDREN=N       start N idle children, each in its own process group
//	FAKE_AGENT_EXIT_AFTER_MS    exit by itself after this long (flushing first; SessionEnd other)
//	FAKE_AGENT_EXIT_CODE        status of that exit (default 0)
//
// Every event is one JSON line appended to $FAKE_AGENT_DIR/log.jsonl with
// a single write: start, resume_failed, settings_error, message, swallowed,
// hook (one per command run), queued, dialog_answered, clear,
// transcript_error, sigterm, sighup, exit, eof.
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
	"syscall"
	"time"

	"github.com/google/uuid"
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
	answerFmt string

	cur      *turn    // the running turn, nil when idle
	queue    []string // messages submitted during the running turn
	lastUUID string   // the transcript's last uuid (parentUuid of the next line)
	timer    *time.Timer

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
	waiting  bool      // its permission dialog is on screen
}

// toolCall is the tool a /fake-tool turn uses.
type toolCall struct {
	id, name, arg string
}

func run() int {
	dir := os.Getenv("FAKE_AGENT_DIR")
	if dir == "" {
		fmt.Fprintln(os.Stderr, "fakeagent: FAKE_AGENT_DIR is not set")
		return 2
	}
	contract := os.Getenv("FAKE_AGENT_CONTRACT")
	var args args
	switch contract {
	case contractCodex:
		args = parseCodexArgs(os.Args[1:])
	case contractGemini:
		args = parseGeminiArgs(os.Args[1:])
	default:
		args = parseArgs(os.Args[1:])
	}
	lf, err := openLog(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		return 2
	}
	cwd, _ := os.Getwd()
	a := &agent{log: lf, dir: dir, sessionID: args.sessionID, cwd: cwd, configDir: claudeConfigDir(),
		model: args.model, permMode: args.permissionMode,
		think:     time.Duration(envInt("FAKE_AGENT_TURN_MS", 50)) * time.Millisecond,
		answerFmt: os.Getenv("FAKE_AGENT_ANSWER"), contract: contract, started: time.Now().UTC(), resumed: args.resume}
	if a.model == "" {
		a.model = map[string]string{contractCodex: "gpt-fake", contractGemini: "gemini-fake"}[contract]
	}
	if a.model == "" {
		a.model = "claude-opus-4-5"
	}
	if contract == contractCodex && !args.resume {
		a.sessionID = "" // Codex chooses its id itself
	}
	if a.sessionID == "" {
		a.sessionID = uuid.NewString()
	}
	logged := args.sessionID
	if contract == contractCodex {
		logged = a.sessionID // the id it chose (or resumes)
	}
	start := entry{Kind: "start", Pid: os.Getpid(), Argv: os.Args[1:], SessionID: logged,
		Resume: args.resume, Prompt: args.prompt, Cwd: cwd, Env: selectedEnv()}

	if args.resume && contract == contractCodex {
		if a.codexPath = findCodexSession(args.sessionID); a.codexPath == "" {
			a.log.write(start)
			a.log.write(entry{Kind: "resume_failed", SessionID: args.sessionID})
			fmt.Fprintf(os.Stderr, "ERROR: No saved session found with ID %s\n", args.sessionID)
			return 1
		}
	}
	if args.resume && contract == contractGemini {
		if a.geminiPath = findGeminiSession(cwd, args.sessionID); a.geminiPath == "" {
			a.log.write(start)
			a.log.write(entry{Kind: "resume_failed", SessionID: args.sessionID})
			fmt.Fprintf(os.Stderr, "Error resuming session: no session %s found for this project\n", args.sessionID)
			return 1
		}
	}
	if args.resume && contract == contractClaude {
		if _, err := os.Stat(a.transcriptPath()); err != nil {
			a.log.write(start)
			a.log.write(entry{Kind: "resume_failed", SessionID: args.sessionID})
			fmt.Fprintf(os.Stderr, "No conversation found with session ID: %s\n", args.sessionID)
			return 1
		}
	}
	if args.resume && contract == contractClaude {
		a.lastUUID = a.lastTranscriptUUID()
	}
	var hooks hookSet
	switch contract {
	case contractCodex:
		var enabled bool
		hooks, enabled, a.untrusted, err = loadCodexHooks(args)
		start.Text = fmt.Sprintf("codex hooks enabled=%v untrusted=%v no-daemon=%v", enabled, a.untrusted, args.noDaemon)
		if a.untrusted {
			hooks = hookSet{}
		}
	case contractGemini:
		hooks, err = loadGeminiHooks()
		if oerr := a.openGemini(); oerr != nil && err == nil {
			err = oerr
		}
		if len(args.dropped) > 0 {
			start.Text = "dropped positional: " + strings.Join(args.dropped, " ")
		}
	default:
		hooks, err = loadSettings(args.settings)
	}
	a.hooks = hooks
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)

	start.Children = startChildren(envInt("FAKE_AGENT_CHILDREN", 0))
	a.log.write(start)
	if err != nil {
		a.log.write(entry{Kind: "settings_error", Error: err.Error()})
	}

	term := newTerminal(0)
	fmt.Printf("fake agent %s starting…\r\n", args.sessionID)

	var exitAfter <-chan time.Time
	if ms := envInt("FAKE_AGENT_EXIT_AFTER_MS", -1); ms >= 0 {
		exitAfter = time.After(time.Duration(ms) * time.Millisecond)
	}
	inputs := make(chan input)
	ready := make(chan struct{})
	eof := make(chan error, 1)
	delay := time.Duration(envInt("FAKE_AGENT_DELAY_MS", 300)) * time.Millisecond
	go a.input(term, delay, parser{swallow: envInt("FAKE_AGENT_SWALLOW_SUBMITS", 0), dropWithin: a.dropWithin()}, ready, inputs, eof)

	a.timer = time.NewTimer(time.Hour)
	a.timer.Stop()
	ignoreTerm := os.Getenv("FAKE_AGENT_IGNORE_TERM") == "1"
	for {
		select {
		case <-ready:
			ready = nil
			source := "startup"
			if args.resume {
				source = "resume"
			}
			a.fire("SessionStart", map[string]any{"source": source, "model": a.model})
			if args.prompt != "" {
				a.process(args.prompt)
			}
		case in := <-inputs:
			if code, exit := a.handle(in); exit {
				err := a.flush()
				a.log.write(entry{Kind: "exit", Code: code, Error: errText(err)})
				term.restore()
				return code
			}
		case <-a.timer.C:
			a.finishTurn()
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				a.log.write(entry{Kind: "sighup"})
				return 129
			}
			if ignoreTerm {
				a.log.write(entry{Kind: "sigterm", Ignored: true})
				continue
			}
			err := a.flush()
			a.fire("SessionEnd", map[string]any{"reason": "other"})
			a.log.write(entry{Kind: "sigterm", Error: errText(err)})
			term.restore()
			return 0
		case <-exitAfter:
			code := envInt("FAKE_AGENT_EXIT_CODE", 0)
			err := a.flush()
			a.fire("SessionEnd", map[string]any{"reason": "other"})
			a.log.write(entry{Kind: "exit", Code: code, Error: errText(err)})
			term.restore()
			return code
		case err := <-eof:
			select { // the terminal went away: a SIGHUP is usually on its way
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
	}
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

// args is what the fake understood of its command line.
type args struct {
	sessionID      string
	resume         bool
	prompt         string
	settings       []string // every --settings value, in order
	model          string
	permissionMode string
	// codex
	overrides       []string // every -c value
	bypassHookTrust bool
	noDaemon        bool
	// gemini: positional arguments it drops
	dropped []string
}

// parseArgs reads --session-id/--resume (also in --flag=value form) and
// takes the last positional argument as the prompt — everything after
// "--" is positional, as Claude Code reads it; other flags are only
// recorded (in the start entry's argv).
func parseArgs(argv []string) args {
	var a args
	var positional []string
	for i := 0; i < len(argv); i++ {
		s := argv[i]
		switch {
		case s == "--": // the end of the options: the rest is positional
			positional = append(positional, argv[i+1:]...)
			i = len(argv)
		case s == "--session-id" || s == "--resume":
			if i+1 < len(argv) {
				a.sessionID, a.resume = argv[i+1], s == "--resume"
				i++
			}
		case strings.HasPrefix(s, "--session-id="):
			a.sessionID, a.resume = strings.TrimPrefix(s, "--session-id="), false
		case strings.HasPrefix(s, "--resume="):
			a.sessionID, a.resume = strings.TrimPrefix(s, "--resume="), true
		case variadic(s):
			// As Claude Code's variadic options: every following argument
			// that does not start with "-" is one of its values.
			for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
			}
		case s == "--settings" || s == "--model" || s == "--permission-mode":
			if i+1 < len(argv) {
				a.setValue(s, argv[i+1])
				i++
			}
		case strings.HasPrefix(s, "--settings=") || strings.HasPrefix(s, "--model=") || strings.HasPrefix(s, "--permission-mode="):
			k, v, _ := strings.Cut(s, "=")
			a.setValue(k, v)
		case s == "--dangerously-skip-permissions":
			a.permissionMode = "bypassPermissions"
		case strings.HasPrefix(s, "-"):
		default:
			positional = append(positional, s)
		}
	}
	if len(positional) > 0 {
		a.prompt = positional[len(positional)-1]
	}
	return a
}

// variadic reports whether a flag takes every following non-flag argument
// (Claude Code's <values...> options), so a prompt after one without "--"
// is swallowed as it would be by Claude Code.
func variadic(flag string) bool {
	switch flag {
	case "--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools", "--mcp-config", "--add-dir", "--tools", "--betas":
		return true
	}
	return false
}

// setValue records a flag that takes a value.
func (a *args) setValue(flag, v string) {
	switch flag {
	case "--settings":
		a.settings = append(a.settings, v)
	case "--model":
		a.model = v
	case "--permission-mode":
		a.permissionMode = v
	}
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
