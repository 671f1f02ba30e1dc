//go:build linux

// Command fakeagent stands in for Claude Code in tests. It honours the
// contract the-loop relies on: `--session-id <id>` starts a conversation,
// `--resume <id>` continues one (failing fast when no transcript exists),
// the last positional argument is the prompt (after `--`, every argument
// is positional; a variadic option such as --allowedTools takes the
// non-flag arguments after it, as Claude Code's do); during a start-up delay the
// tty stays in canonical mode and typed input is read and discarded; then
// the tty goes raw, bracketed paste is switched on and a `❯ ` prompt is
// drawn; a bracketed paste followed by a carriage return is one message.
// SIGTERM flushes the transcript (so a later --resume works) and exits 0;
// SIGHUP exits without flushing.
//
// `fakeagent internal-exec FILE` is the trampoline the-loop's runner
// launches (runner.ExecFromFile), so tests need not build the-loop for it.
//
// Environment:
//
//	FAKE_AGENT_DIR            required: log.jsonl and transcripts/<id>.jsonl live here
//	FAKE_AGENT_DELAY_MS       start-up delay (default 300)
//	FAKE_AGENT_IGNORE_TERM=1  log SIGTERM and keep running
//	FAKE_AGENT_CHILDREN=N     start N idle children, each in its own process group
//	FAKE_AGENT_EXIT_AFTER_MS  exit by itself after this long (flushing first)
//	FAKE_AGENT_EXIT_CODE      status of that exit (default 0)
//
// Every event is one JSON line appended to $FAKE_AGENT_DIR/log.jsonl with
// a single write: start, resume_failed, message, sigterm, sighup, exit, eof.
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

// agent is one fake session.
type agent struct {
	log       *logFile
	dir       string
	sessionID string

	mu       sync.Mutex
	messages []string
	flushed  bool
}

func run() int {
	dir := os.Getenv("FAKE_AGENT_DIR")
	if dir == "" {
		fmt.Fprintln(os.Stderr, "fakeagent: FAKE_AGENT_DIR is not set")
		return 2
	}
	args := parseArgs(os.Args[1:])
	lf, err := openLog(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		return 2
	}
	a := &agent{log: lf, dir: dir, sessionID: args.sessionID}
	cwd, _ := os.Getwd()
	start := entry{Kind: "start", Pid: os.Getpid(), Argv: os.Args[1:], SessionID: args.sessionID,
		Resume: args.resume, Prompt: args.prompt, Cwd: cwd, Env: selectedEnv()}

	if args.resume {
		if _, err := os.Stat(a.transcriptPath()); err != nil {
			a.log.write(start)
			a.log.write(entry{Kind: "resume_failed", SessionID: args.sessionID})
			fmt.Fprintf(os.Stderr, "No conversation found with session ID: %s\n", args.sessionID)
			return 1
		}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)

	start.Children = startChildren(envInt("FAKE_AGENT_CHILDREN", 0))
	a.log.write(start)

	term := newTerminal(0)
	fmt.Printf("fake agent %s starting…\r\n", args.sessionID)

	var exitAfter <-chan time.Time
	if ms := envInt("FAKE_AGENT_EXIT_AFTER_MS", -1); ms >= 0 {
		exitAfter = time.After(time.Duration(ms) * time.Millisecond)
	}
	msgs := make(chan string)
	eof := make(chan error, 1)
	delay := time.Duration(envInt("FAKE_AGENT_DELAY_MS", 300)) * time.Millisecond
	go a.input(term, delay, msgs, eof)

	ignoreTerm := os.Getenv("FAKE_AGENT_IGNORE_TERM") == "1"
	for {
		select {
		case m := <-msgs:
			a.mu.Lock()
			a.messages = append(a.messages, m)
			a.mu.Unlock()
			a.log.write(entry{Kind: "message", Text: m})
			fmt.Printf("\r\n● received %d bytes\r\n❯ ", len(m))
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
			a.log.write(entry{Kind: "sigterm", Error: errText(err)})
			term.restore()
			return 0
		case <-exitAfter:
			code := envInt("FAKE_AGENT_EXIT_CODE", 0)
			err := a.flush()
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
// raw terminal and sends each submitted message.
func (a *agent) input(term *terminal, delay time.Duration, msgs chan<- string, eof chan<- error) {
	term.discardUntil(time.Now().Add(delay))
	term.makeRaw()
	fmt.Print("\x1b[?2004h\r\n❯ ")
	var p parser
	buf := make([]byte, 32*1024)
	for {
		n, err := term.read(buf)
		for _, b := range buf[:n] {
			if m, ok := p.feed(b); ok {
				msgs <- m
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
	sessionID string
	resume    bool
	prompt    string
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

// selectedEnv returns the environment variables worth recording.
func selectedEnv() map[string]string {
	out := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "TERM", k == "TMUX_PANE", k == "CLAUDE_CONFIG_DIR",
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
