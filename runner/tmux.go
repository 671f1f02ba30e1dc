// Package runner is the only package that runs tmux. It implements
// loop.Runner with target-addressed operations on tmux sessions named
// "loop-…": probe, spawn, deliver, snapshot, kill and terminate.
//
// Every command names its session exactly (decisions D9): "-t =loop-x" for the
// session, "-t =loop-x:^" for the agent's window (the session's
// lowest-indexed one, which new-session made) and "-t =loop-x:^.{top-left}"
// for the agent's pane, so an operator who attaches and opens a window or
// splits one never gets a delivery, a snapshot or a respawn meant for the
// agent. Every target is checked against loop.TargetRE before any tmux call,
// and no server-wide option is ever changed (decisions D10).
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Defaults of Options.
const (
	DefaultSubmitDelay    = 50 * time.Millisecond
	DefaultProbeTimeout   = 10 * time.Second
	DefaultCommandTimeout = 30 * time.Second
	DefaultWidth          = 200
	DefaultHeight         = 50
)

// Options configures a Tmux runner. The zero value runs `tmux` on the user's
// default server with the defaults above.
type Options struct {
	// Socket is the tmux server's socket name: every call gets "-L <Socket>"
	// when it is not empty (routing.tmux.socketName). Empty means the
	// user's default server.
	Socket string
	// ConfigFile is passed as "-f <ConfigFile>" when not empty (tests pass
	// /dev/null so a private server ignores ~/.tmux.conf). Empty means
	// tmux's default.
	ConfigFile string
	// Binary is the tmux executable, looked up on PATH at each call
	// (default "tmux").
	Binary string
	// DropEnv names environment variables the default Commander runs tmux
	// without, so secrets never reach a tmux server it starts or its panes.
	DropEnv []string
	// Cmd runs tmux. Default: an ExecCommander for Binary and DropEnv.
	Cmd Commander
	// SubmitDelay is the pause between the bracketed paste and the carriage
	// return that submits it (routing.tmux.submitDelayMs; default 50ms).
	SubmitDelay time.Duration
	// ProbeTimeout bounds each read-only probe (default 10s).
	ProbeTimeout time.Duration
	// CommandTimeout bounds each other tmux call (default 30s).
	CommandTimeout time.Duration
	// Width and Height are the fixed size of a spawned window (200×50).
	Width, Height int
	// Launcher, when set, lets a harness argv too long for a tmux command
	// line still spawn: the argv goes to a 0600 JSON file and the pane runs
	// "<Launcher…> <file>" (e.g. the-loop internal-exec FILE, which calls
	// ExecFromFile). Without it such a spawn fails naming the limit.
	Launcher []string
	// LockDir holds the per-target delivery locks; it must be owned by the
	// caller and writable by nobody else. the-loop puts it under its state
	// root (<state.root>/local/locks), so every process of one project
	// serialises whatever its $TMPDIR. Default, for a runner used alone:
	// $TMPDIR/the-loop-tmux-locks-<uid>.
	LockDir string
	// LaunchDir holds the launch files of spawns too long for a tmux
	// command line (Launcher); a file stays there only when its pane died
	// before the launcher read it. the-loop puts it under its state root
	// (<state.root>/local/launch). Default: $TMPDIR.
	LaunchDir string
	// Logger receives warnings and debug lines (default: discarded).
	Logger *slog.Logger
	// Procs reads and signals processes for TerminateHarnessIn (default:
	// the /proc file system and kill(2)).
	Procs Processes
	// Sleep waits d or until ctx is done (default: a timer).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Tmux is the tmux runner. It implements loop.Runner and is safe for
// concurrent use.
type Tmux struct {
	opt        Options
	log        *slog.Logger
	bufferName func() string // a fresh tmux buffer name per delivery
	// panes coalesces AllPanePIDs: every hook an agent posts asks whose
	// pane it comes from, and two hundred agents ask at once.
	panes *fresh[map[string][]int]
}

var _ loop.Runner = (*Tmux)(nil)

// New returns a runner configured by opt, with defaults filled in.
func New(opt Options) *Tmux {
	if opt.Binary == "" {
		opt.Binary = "tmux"
	}
	if opt.Cmd == nil {
		opt.Cmd = ExecCommander{Binary: opt.Binary, DropEnv: opt.DropEnv}
	}
	if opt.SubmitDelay <= 0 {
		opt.SubmitDelay = DefaultSubmitDelay
	}
	if opt.ProbeTimeout <= 0 {
		opt.ProbeTimeout = DefaultProbeTimeout
	}
	if opt.CommandTimeout <= 0 {
		opt.CommandTimeout = DefaultCommandTimeout
	}
	if opt.Width <= 0 {
		opt.Width = DefaultWidth
	}
	if opt.Height <= 0 {
		opt.Height = DefaultHeight
	}
	if opt.LockDir == "" {
		opt.LockDir = defaultLockDir()
	}
	if opt.Procs == nil {
		opt.Procs = procFS{}
	}
	if opt.Sleep == nil {
		opt.Sleep = sleepCtx
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Tmux{opt: opt, log: log, bufferName: randomBufferName, panes: newFresh[map[string][]int]()}
}

// Socket returns the tmux socket name the runner addresses ("" = default).
func (t *Tmux) Socket() string { return t.opt.Socket }

// Commander runs one tmux command: args are tmux's arguments (global flags
// such as -L first), stdin is fed to it when not nil. A non-zero exit is
// reported as *ExitError; any error of another type means tmux did not
// answer (timeout, binary missing, could not start).
type Commander interface {
	Run(ctx context.Context, args []string, stdin io.Reader) (stdout []byte, err error)
}

// ExitError is tmux's answer with a non-zero exit status.
type ExitError struct {
	Args   []string // the arguments tmux ran with
	Code   int      // its exit status
	Stderr string   // what it said (trimmed)
}

// Error returns "tmux <verb> exited <code>: <stderr>".
func (e *ExitError) Error() string {
	return fmt.Sprintf("tmux %s exited %d: %s", verbOf(e.Args), e.Code, e.Stderr)
}

// NoAnswerError is a tmux call that got no answer: it timed out, the binary
// is missing, or it could not be started.
type NoAnswerError struct {
	Args []string
	Err  error
}

// Error explains why tmux did not answer.
func (e *NoAnswerError) Error() string {
	var nf *TmuxNotFoundError
	if errors.As(e.Err, &nf) {
		return nf.Error()
	}
	if errors.Is(e.Err, exec.ErrNotFound) {
		return (&TmuxNotFoundError{Binary: "tmux", Err: e.Err}).Error()
	}
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return fmt.Sprintf("tmux %s timed out", verbOf(e.Args))
	}
	return fmt.Sprintf("could not run tmux %s: %v", verbOf(e.Args), e.Err)
}

// Unwrap returns the cause.
func (e *NoAnswerError) Unwrap() error { return e.Err }

// TmuxNotFoundError is the tmux binary missing from PATH: tmux cannot
// answer at all, so whether a session runs cannot be known. Test for it
// with errors.As (a *NoAnswerError wraps it) or Available.
type TmuxNotFoundError struct {
	Binary string // what was looked for ("tmux")
	Err    error  // exec.LookPath's error
}

// Error names the binary and how to install it.
func (e *TmuxNotFoundError) Error() string {
	return fmt.Sprintf("tmux not found on PATH (looked for '%s') — install it: `apt-get install tmux` (Debian/Ubuntu) · "+
		"`brew install tmux` (macOS) · `dnf install tmux` (Fedora); nothing can run without it", e.Binary)
}

// Unwrap returns exec.LookPath's error.
func (e *TmuxNotFoundError) Unwrap() error { return e.Err }

// Available reports a tmux binary missing from PATH as *TmuxNotFoundError,
// before any command: nil when it is there, or when a Commander other than
// ExecCommander runs tmux (it answers for itself).
func (t *Tmux) Available() error {
	c, ok := t.opt.Cmd.(ExecCommander)
	if !ok {
		return nil
	}
	bin := c.Binary
	if bin == "" {
		bin = "tmux"
	}
	if _, err := exec.LookPath(bin); err != nil {
		return &TmuxNotFoundError{Binary: bin, Err: err}
	}
	return nil
}

// ExecCommander runs the tmux binary with exec.CommandContext, without a
// shell, capturing stdout and stderr.
type ExecCommander struct {
	Binary string // default "tmux"
	// DropEnv names environment variables tmux is run without (secrets such
	// as the Slack bot token): a tmux server the runner starts inherits the
	// client's environment, and its panes — the agents — inherit the server's.
	DropEnv []string
}

// Run implements Commander. tmux's output is complete when its pipes reach
// end of file, which can be after the client exits: a child that inherited
// them (a wrapper's, a server being started) holds them open. That wait is
// bounded by ctx, not by a fixed grace — a loaded host delays the copy —
// and, for a ctx without a deadline, by outputWait. A client that exited 0
// but whose output did not end in time is a *NoAnswerError wrapping
// exec.ErrWaitDelay: what it did took effect, what it said may be cut.
func (c ExecCommander) Run(ctx context.Context, args []string, stdin io.Reader) ([]byte, error) {
	bin := c.Binary
	if bin == "" {
		bin = "tmux"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, &NoAnswerError{Args: args, Err: &TmuxNotFoundError{Binary: bin, Err: err}}
	}
	cmd := exec.CommandContext(ctx, path, args...)
	if len(c.DropEnv) > 0 {
		cmd.Env = dropEnv(os.Environ(), c.DropEnv)
	}
	p, err := newPipes(stdin)
	if err != nil {
		return nil, &NoAnswerError{Args: args, Err: err}
	}
	cmd.Stdout, cmd.Stderr = p.childOut, p.childErr
	if p.childIn != nil { // a nil *os.File would close the client's stdin, not give it /dev/null
		cmd.Stdin = p.childIn
	}
	if err := cmd.Start(); err != nil {
		p.closeAll()
		return nil, &NoAnswerError{Args: args, Err: err}
	}
	p.start()
	err = cmd.Wait()
	cut := p.finish(ctx)
	stdout, stderr := p.out.Bytes(), p.err.Bytes()
	if err == nil {
		if cut {
			return stdout, &NoAnswerError{Args: args, Err: errOutputCut}
		}
		return stdout, nil
	}
	if ctx.Err() != nil {
		return stdout, &NoAnswerError{Args: args, Err: ctx.Err()}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		msg := strings.TrimSpace(string(stderr))
		if msg == "" {
			msg = strings.TrimSpace(string(stdout))
		}
		return stdout, &ExitError{Args: args, Code: ee.ExitCode(), Stderr: msg}
	}
	return stdout, &NoAnswerError{Args: args, Err: err}
}

// outputWait bounds how long ExecCommander reads a client's output after it
// exited when ctx has no deadline.
const outputWait = DefaultCommandTimeout

// errOutputCut is a tmux client that exited 0 but whose output did not end
// before its call's bound.
var errOutputCut = fmt.Errorf("tmux exited 0 but its output did not end in time: %w", exec.ErrWaitDelay)

// pipes are the three pipes of one tmux client, read and written by the
// runner itself rather than by os/exec, whose WaitDelay is one fixed grace
// for both the wait after the client exits and the one after ctx kills it.
type pipes struct {
	childIn, childOut, childErr *os.File // the client's ends (nil stdin: none)
	in, outR, errR              *os.File // ours
	src                         io.Reader
	out, err                    bytes.Buffer
	done                        chan struct{} // one per reader and writer finished
	n                           int           // how many send on done
}

func newPipes(stdin io.Reader) (*pipes, error) {
	p := &pipes{src: stdin, done: make(chan struct{}, 3)}
	var err error
	if p.outR, p.childOut, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.errR, p.childErr, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, err
	}
	if stdin != nil {
		if p.childIn, p.in, err = os.Pipe(); err != nil {
			p.closeAll()
			return nil, err
		}
	}
	return p, nil
}

// start closes the client's ends in this process and copies the streams.
func (p *pipes) start() {
	for _, f := range []*os.File{p.childIn, p.childOut, p.childErr} {
		if f != nil {
			_ = f.Close()
		}
	}
	copyTo := func(w io.Writer, r io.Reader, closer *os.File) {
		_, _ = io.Copy(w, r)
		if closer != nil {
			_ = closer.Close()
		}
		p.done <- struct{}{}
	}
	p.n = 2
	go copyTo(&p.out, p.outR, nil)
	go copyTo(&p.err, p.errR, nil)
	if p.in != nil {
		p.n++
		go copyTo(p.in, p.src, p.in)
	}
}

// finish waits, after the client exited, for its output to end: until ctx
// is done or, without a deadline, outputWait. It reports whether the output
// was cut; every copy has stopped when it returns.
func (p *pipes) finish(ctx context.Context) (cut bool) {
	var late <-chan time.Time
	if _, ok := ctx.Deadline(); !ok {
		tm := time.NewTimer(outputWait)
		defer tm.Stop()
		late = tm.C
	}
	left := p.n
	for left > 0 {
		select {
		case <-p.done:
			left--
			continue
		case <-ctx.Done():
		case <-late:
		}
		break
	}
	if left > 0 {
		cut = true
		p.closeAll() // unblocks the copies
		for ; left > 0; left-- {
			<-p.done
		}
	}
	p.closeAll()
	return cut
}

// closeAll closes every end still open (a second close is harmless).
func (p *pipes) closeAll() {
	for _, f := range []*os.File{p.childIn, p.childOut, p.childErr, p.in, p.outR, p.errR} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// run runs one tmux command with the global flags, bounded by timeout.
func (t *Tmux) run(ctx context.Context, timeout time.Duration, stdin io.Reader, args ...string) (string, error) {
	full := make([]string, 0, len(args)+4)
	if t.opt.Socket != "" {
		full = append(full, "-L", t.opt.Socket)
	}
	if t.opt.ConfigFile != "" {
		full = append(full, "-f", t.opt.ConfigFile)
	}
	full = append(full, args...)
	// A call waits for a client slot within ctx (the verb's bound); its
	// own timeout runs from when its client starts.
	release, err := clientSlot(ctx)
	if err != nil {
		return "", &NoAnswerError{Args: full, Err: err}
	}
	defer release()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	out, err := t.opt.Cmd.Run(ctx, full, stdin)
	if err != nil {
		var ee *ExitError
		if !errors.As(err, &ee) {
			var na *NoAnswerError
			if !errors.As(err, &na) {
				err = &NoAnswerError{Args: full, Err: err}
			}
		}
		t.log.Debug("tmux", "args", full, "error", err)
		return string(out), err
	}
	return string(out), nil
}

// clients bounds how many tmux clients this process runs at once: a
// batch of 200 sessions would otherwise fork hundreds of clients that the
// one tmux server answers in turn, each client's timeout running while it
// waits for the CPU and the server — on a loaded host a fixed per-call
// bound is then a failure waiting to happen. Queued here, a call waits
// within its verb's bound and is timed only once it runs.
var clients = make(chan struct{}, max(16, 16*runtime.NumCPU()))

// clientSlot takes a client slot, waiting within ctx; release gives it
// back.
func clientSlot(ctx context.Context) (release func(), err error) {
	select {
	case clients <- struct{}{}:
		return func() { <-clients }, nil
	default:
	}
	select {
	case clients <- struct{}{}:
		return func() { <-clients }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// probe runs a query — a command with no effect a repeat could duplicate —
// with the probe timeout, asked once more when it got no answer (query).
func (t *Tmux) probe(ctx context.Context, args ...string) (string, error) {
	return t.query(ctx, t.opt.ProbeTimeout, args...)
}

// set runs a command whose effect a repeat leaves as it is (set-option to a
// fixed value) with the command timeout, asked once more when it got no
// answer (query).
func (t *Tmux) set(ctx context.Context, args ...string) error {
	_, err := t.query(ctx, t.opt.CommandTimeout, args...)
	return err
}

// query runs args and, when tmux gave no answer in time or its output was
// cut (a loaded host) and ctx still has time, runs them once more, each try
// with its own timeout.
func (t *Tmux) query(ctx context.Context, timeout time.Duration, args ...string) (string, error) {
	out, err := t.run(ctx, timeout, nil, args...)
	if err != nil && t.askAgain(ctx, err) {
		t.log.Debug("tmux gave no answer to a query; asking once more", "args", args, "error", err)
		out, err = t.run(ctx, timeout, nil, args...)
	}
	return out, err
}

// askAgain reports whether a failed call could get an answer if repeated:
// tmux did not answer, for a cause other than its binary missing, and ctx
// is not done.
func (t *Tmux) askAgain(ctx context.Context, err error) bool {
	var nf *TmuxNotFoundError
	return ctx.Err() == nil && !answered(err) && !errors.As(err, &nf) && !errors.Is(err, exec.ErrNotFound)
}

// do runs a command that changes something, with the command timeout, and
// never repeats it: a caller that can check its effect does so (kill,
// newSession, harnessStarted). A client that exited 0 with its output cut
// (exec.ErrWaitDelay) ran the command: that is success, as do reads no
// output.
func (t *Tmux) do(ctx context.Context, args ...string) error {
	return t.doIn(ctx, nil, args...)
}

// doIn is do with stdin fed to tmux.
func (t *Tmux) doIn(ctx context.Context, stdin io.Reader, args ...string) error {
	_, err := t.run(ctx, t.opt.CommandTimeout, stdin, args...)
	if err != nil && errors.Is(err, exec.ErrWaitDelay) {
		t.log.Debug("tmux ran a command but its output was cut", "args", args, "error", err)
		return nil
	}
	return err
}

// answered reports whether err is tmux's own (non-zero exit) answer.
func answered(err error) bool {
	var ee *ExitError
	return errors.As(err, &ee)
}

// stderrOf returns what tmux said in err, or err's text.
func stderrOf(err error) string {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return err.Error()
}

// sessionGone reports whether a tmux answer says the session (or the whole
// server) does not exist — "no current target" too: a server left with no
// session at all, as while its last one ends; it decides ENOTFOUND for a
// failed operation.
func sessionGone(err error) bool {
	var ee *ExitError
	if !errors.As(err, &ee) {
		return false
	}
	s := strings.ToLower(ee.Stderr)
	return strings.Contains(s, "can't find") || strings.Contains(s, "no such session") ||
		strings.Contains(s, "no current target") || noServer(s)
}

// absentAnswer reports whether err is tmux answering that the session does
// not exist: "can't find session", "no such session" (the option commands'
// wording), "no current target" (a server left with no session at all, as
// while its last one ends), or no server (noServer). Any other non-zero answer — permission
// denied on the socket, a protocol version mismatch, … — says nothing about
// the session, and its state is unknown.
func absentAnswer(err error) bool {
	var ee *ExitError
	if !errors.As(err, &ee) {
		return false
	}
	s := strings.ToLower(ee.Stderr)
	return strings.Contains(s, "can't find session") || strings.Contains(s, "no such session") ||
		strings.Contains(s, "no current target") || noServer(s)
}

// noServer reports whether tmux's message says no server is running: "no
// server running", a socket that is missing or refuses connections ("error
// connecting to … (No such file or directory)" / "(Connection refused)"),
// or a server that exited while answering (its last session just ended).
// Other connection failures ("(Permission denied)", …) are not absence.
func noServer(stderr string) bool {
	s := strings.ToLower(stderr)
	switch {
	case strings.Contains(s, "no server running"), strings.Contains(s, "server exited unexpectedly"):
		return true
	case strings.Contains(s, "error connecting to"):
		return strings.Contains(s, "(no such file or directory)") || strings.Contains(s, "(connection refused)")
	}
	return false
}

// verbOf returns the tmux command name in args (after global flags).
func verbOf(args []string) string {
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-L", "-S", "-f":
			i++
			continue
		}
		if !strings.HasPrefix(args[i], "-") {
			return args[i]
		}
	}
	return "command"
}

// sessionTarget is the exact session form of target ("=loop-x").
func sessionTarget(target string) string { return "=" + target }

// agentWindow is the agent's window ("=loop-x:^"): the session's
// lowest-indexed window, the one new-session made. A window an operator
// opens gets a higher index.
func agentWindow(target string) string { return "=" + target + ":^" }

// agentPane is the agent's pane ("=loop-x:^.{top-left}"), the top-left pane
// of agentWindow: a pane an operator splits off goes right or below it.
// Pane-level commands need a window part on tmux 3.3a (decisions D9); the bare
// window form "=loop-x:" would be the session's current window, which an
// attached operator can change.
func agentPane(target string) string { return "=" + target + ":^.{top-left}" }

// optionTarget names the session for set-option and show-options
// ("=loop-x:"): they resolve -t as a pane, so on tmux 3.3a the bare
// "=loop-x" answers "no such session".
func optionTarget(target string) string { return "=" + target + ":" }

// cleanupTimeout bounds a clean-up step that runs after the caller's
// context is done.
const cleanupTimeout = 5 * time.Second

// cleanupCtx is the context of a clean-up step (abandoning a half-made
// session, dropping a delivery's buffers, waiting out a SIGKILL): it keeps
// ctx's values but not its cancellation, so an interrupted caller (Ctrl-C)
// still leaves nothing behind, and is bounded by cleanupTimeout.
func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// guard refuses a target that is not a the-loop session name, before any
// tmux call.
func guard(target string) error {
	if loop.TargetRE.MatchString(target) {
		return nil
	}
	return &loop.Error{Code: loop.EINVALID,
		Message: fmt.Sprintf("'%s' is not a the-loop tmux session name", target),
		Err:     ErrInvalidTarget}
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// uid is the caller's user id, for per-user temp paths.
func uid() int { return os.Getuid() }

// dropEnv returns env without the named variables.
func dropEnv(env, names []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}
