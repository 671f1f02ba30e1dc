package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/alecthomas/kong"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/hearing"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/store"
)

// CLI is the command tree. Each command lives in its own *_cmd.go file.
type CLI struct {
	Version kong.VersionFlag `help:"Print the-loop's version and commit, and exit."`

	Config   string              `short:"c" help:"Path of the CLI config (else THE_LOOP_CLI_CONFIG, the first .the-loop/cli-config.yaml in this directory or one above it, ~/.the-loop/cli-config.yaml, $XDG_CONFIG_HOME/the-loop/cli-config.yaml)." placeholder:"PATH"`
	Verbose  bool                `short:"v" help:"Say on stderr which CLI config this command uses."`
	Init     InitCmd             `cmd:"" help:"Write a commented starter config, .the-loop/cli-config.yaml, and a .gitignore for the state beside it."`
	Start    StartCmd            `cmd:"" help:"Start the service (when enabled) and the standing sessions that auto-start."`
	Stop     StopCmd             `cmd:"" help:"Stop every recorded standing session, then the service."`
	Status   StatusCmd           `cmd:"" help:"Report the service and the standing sessions; exit 1 when something that should be up is not."`
	Restart  RestartCmd          `cmd:"" help:"Stop, then start (conversations resume)."`
	Serve    ServeCmd            `cmd:"" help:"Run the service in the foreground."`
	Service  ServiceCmd          `cmd:"" help:"Start the service at login and boot: install or remove its systemd user unit or launchd agent."`
	Standing StandingCmd         `cmd:"" help:"Standing sessions: named, long-lived agent sessions that belong to no work item."`
	Sessions SessionsCmd         `cmd:"" help:"Work-item sessions: a work item's agent session, started, replied to and closed by hand."`
	Events   EventsCmd           `cmd:"" help:"Read the event log."`
	Logs     LogsCmd             `cmd:"" help:"The service log and the sessions' lifecycle events, interleaved by time (NAME: one session's; -f: follow)."`
	Channels ChannelsCmd         `cmd:"" help:"The Slack channel: poll its bound threads once, or show its settings."`
	Cfg      ConfigCmd           `cmd:"" name:"config" help:"Check or print the CLI config's schema."`
	Token    TokenCmd            `cmd:"" help:"Print the operator's token (or replace it with --rotate)."`
	Doctor   DoctorCmd           `cmd:"" help:"Check tmux, the harness CLIs, the state root, the token, the port, the service, the config and the login; exit 1 on a problem, each with its remedy."`
	Dash     DashboardCmd        `cmd:"" name:"dashboard" help:"Print a one-time login link for the web dashboard (or end every dashboard session with --logout-all)."`
	Exec     InternalExecCmd     `cmd:"" name:"internal-exec" hidden:"" help:"Exec a harness argv from a file (used inside tmux panes)."`
	Hook     HookCmd             `cmd:"" hidden:"" help:"Hand one Claude Code hook payload (stdin) to the-loop; always exits 0."`
	MCP      MCPCmd              `cmd:"" name:"mcp" help:"Serve the-loop's MCP tools on stdin and stdout, bridged to the service over its socket (what an agent's --mcp-config runs)."`
	Announce InternalAnnounceCmd `cmd:"" name:"internal-announce" hidden:"" help:"Post one Slack announcement read from stdin and print its thread (what the CLI posts through)."`

	Completion CompletionCmd `cmd:"" help:"Print the shell completion script for bash, zsh or fish (verbs, flags, session names)."`
	Complete   CompleteCmd   `cmd:"" name:"__complete" hidden:"" help:"Print the completion candidates for the words given (used by the completion scripts)."`
}

// App is what every command's Run receives: the resolved config path, the
// streams, and constructors for the store and the verbs.
type App struct {
	ConfigPath string
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
	// reads is set for a verb that only reads (readVerb): run in this
	// process where no store exists yet, it reads an empty one and creates
	// none (emptyStore).
	reads bool
	// verb is kong's command ("standing start <name>"): a verb an agent may
	// not run is refused in an agent's pane (agent_rights.go).
	verb string
}

// readVerbs are the commands that only read: in a directory with no
// config they say so ("no config found; using defaults") and create no
// store.
var readVerbs = []string{"status", "standing list", "standing approvals", "standing transcript", "standing peek", "sessions list", "events", "channels status"}

// readVerb reports whether kong's command (e.g. "standing peek <name>")
// only reads.
func readVerb(cmd string) bool { return oneOf(cmd, readVerbs) }

// oneOf reports whether kong's command is one of verbs, its arguments
// ("<name>") aside.
func oneOf(cmd string, verbs []string) bool {
	for _, v := range verbs {
		if cmd == v || strings.HasPrefix(cmd, v+" ") {
			return true
		}
	}
	return false
}

// noConfigNote is what a read verb says on stderr when no config file was
// found.
const noConfigNote = "no config found; using defaults"

// exitError carries an exit status without a message of its own (the
// command already printed what it had to say).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Main runs the CLI and returns the process's exit status: 0 ok, 1 a verb
// that failed or not found, 2 a caller's mistake or a usage error (decisions D7).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	path, rest := config.FindFlag(args)
	var cli CLI
	kctx, exit := parse(&cli, rest, stdout, stderr)
	if kctx == nil {
		return exit
	}
	if !serviceBuiltIn && serviceVerb(kctx.Command()) {
		return exitCode(handOver(args), stderr) // the-loopd parses args again, as typed
	}
	resolved, err := locateConfig(kctx, &cli, path, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	if err := refuseAgentVerb(kctx.Command()); err != nil {
		return exitCode(err, stderr)
	}
	app := &App{ConfigPath: resolved, Stdin: stdin, Stdout: stdout, Stderr: stderr, reads: readVerb(kctx.Command()), verb: kctx.Command()}
	if app.reads && resolved == "" {
		fmt.Fprintln(stderr, noConfigNote)
	}
	cmd := selected(kctx)
	if p, ok := cmd.(preparer); ok {
		if err := p.prepare(app); err != nil {
			return exitCode(err, stderr)
		}
	}
	inv := &invocation{app: app, picking: pickingOf(cmd)}
	defer inv.close()
	if err := inv.bind(kctx); err != nil {
		return exitCode(err, stderr)
	}
	return exitCode(inv.finish(kctx.Run(app)), stderr)
}

// parse parses args (the flags and command after the -c flag's removal)
// into cli. It returns nil with the exit status when there is nothing to
// run: --help and friends (kong's own status), or a usage error (printed
// with the usage, exit 2; 1 when kong cannot even be built).
func parse(cli *CLI, args []string, stdout, stderr io.Writer) (*kong.Context, int) {
	exit := -1
	parser, err := kong.New(cli,
		kong.Name("the-loop"),
		kong.Description("Keeps AI coding-agent sessions alive in tmux and lets operators talk to them."),
		kong.UsageOnError(),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) {
			if exit < 0 {
				exit = code
			}
		}),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Vars{"version": "the-loop " + loop.Version()},
	)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return nil, 1
	}
	kctx, err := parser.Parse(args)
	if exit >= 0 { // --help and friends
		return nil, exit
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", termLines(err.Error()))
		var pe *kong.ParseError
		if errors.As(err, &pe) {
			_ = pe.Context.PrintUsage(true)
		}
		return nil, 2
	}
	return kctx, 0
}

// selected is the command kong selected (a pointer to its struct in the
// CLI), nil when there is none.
func selected(kctx *kong.Context) any {
	node := kctx.Selected()
	if node == nil || !node.Target.CanAddr() {
		return nil
	}
	return node.Target.Addr().Interface()
}

// preparer is a command with checks and inputs of its own (its flags, a
// message read from standard input) that come before its services are
// picked: a mistake there is reported as such, whatever the config or the
// service, and nothing is loaded or opened for it.
type preparer interface{ prepare(a *App) error }

// invocation is what one command's Run is given besides *App, bound once
// with kong's providers (hermit style), each made only when Run takes it:
// the config (*config.Config, loaded as the command's picking says), the
// services picked once under it (services: the service's over its socket,
// else this process's), and the verb's context (context.Context: cancelled
// by Ctrl-C, ended at the verb's bound). A command never decides itself
// whether to go through the service. The context is made from the services
// (the bound is theirs), so a Run taking it takes them too.
type invocation struct {
	app     *App
	picking picking
	cleanup []func() // run last first when the command has run
	picked  *services
	verbCtx context.Context
}

// bind binds the providers into kctx.
func (inv *invocation) bind(kctx *kong.Context) error {
	if err := kctx.BindSingletonProvider(func(api services) (context.Context, error) {
		ctx, stop := api.bound(api.stop)
		inv.cleanup = append(inv.cleanup, stop)
		inv.verbCtx = ctx
		return ctx, nil
	}); err != nil {
		return loop.Internal("binding the verb context: %w", err)
	}
	if err := kctx.BindSingletonProvider(func(cfg *config.Config) (services, error) {
		api, done, err := inv.app.pickServices(cfg, inv.picking)
		if err == nil {
			inv.cleanup = append(inv.cleanup, done)
			inv.picked = &api
		}
		return api, err
	}); err != nil {
		return loop.Internal("binding the services: %w", err)
	}
	if err := kctx.BindSingletonProvider(func() (*config.Config, error) {
		return inv.app.loadFor(inv.picking)
	}); err != nil {
		return loop.Internal("binding the config: %w", err)
	}
	return nil
}

// finish words the error of a Run that took the services and their
// context (services.finish); any other Run's error is its own.
func (inv *invocation) finish(err error) error {
	if inv.picked != nil && inv.verbCtx != nil {
		return inv.picked.finish(inv.verbCtx, inv.app.Stderr, err)
	}
	return err
}

// close ends the verb's context and closes the store, in the reverse of
// the order they were made.
func (inv *invocation) close() {
	for i := len(inv.cleanup) - 1; i >= 0; i-- {
		inv.cleanup[i]()
	}
}

// locateConfig finds the config the command uses (config.Locate) and says
// which on -v. An unsafe config (fileperm.Check) refuses every command that
// reads the config but stop, which goes on with a warning (it checks the
// state root itself); a command that writes refuses to run with no config
// at all (noConfig) rather than create a store in the working directory.
func locateConfig(kctx *kong.Context, cli *CLI, flag string, stderr io.Writer) (string, error) {
	resolved, err := config.Locate(flag)
	needs := needsConfig(kctx, cli)
	switch {
	case err != nil && kctx.Command() == "stop" && resolved != "":
		fmt.Fprintf(stderr, "warning: %s; stop goes on with it, from its state root when that is safe\n", termLines(loop.ErrorMessage(err)))
	case err != nil && needs:
		return "", err
	case err != nil && strings.HasPrefix(kctx.Command(), "doctor"):
		resolved = config.Resolve(flag) // doctor reports it
	case err != nil:
		resolved = "" // completion reads no names from a config it may not trust
	}
	if cli.Verbose {
		if resolved == "" {
			fmt.Fprintln(stderr, "config: none found; the defaults apply")
		} else {
			fmt.Fprintf(stderr, "config: %s\n", termSafe(resolved))
		}
	}
	if resolved == "" && needs && writeVerb(kctx.Command()) {
		return "", noConfig()
	}
	return resolved, nil
}

// writeVerb reports whether a command that reads the config changes
// something: all but stop (which must work anywhere), the read verbs and
// `config validate`.
func writeVerb(cmd string) bool {
	return cmd != "stop" && !readVerb(cmd) && !strings.HasPrefix(cmd, "config validate")
}

// noConfig is a write verb's refusal where no config was found (EINVALID,
// exit 2): it names where the-loop looked and `the-loop init`.
func noConfig() error {
	cwd, _ := os.Getwd()
	return loop.Invalid("no config found: no .the-loop/%[1]s in %[2]s or a directory above it (the search stops at a directory another user owns or others may write), "+
		"nor ~/.the-loop/%[1]s or $XDG_CONFIG_HOME/the-loop/%[1]s; run `the-loop init` to write one in this directory, or name one with -c PATH "+
		"(`the-loop stop` and the read verbs work without one)", config.FileName, termSafe(cwd))
}

// needsConfig reports whether the command reads the CLI config: all but
// `config schema`, `config validate FILE`, init, internal-exec, hook, mcp,
// completion (which reads it only when it can) and doctor (which reports a
// config it cannot find or load as a problem) do.
func needsConfig(kctx *kong.Context, cli *CLI) bool {
	switch cmd := kctx.Command(); {
	case strings.HasPrefix(cmd, "config schema"), strings.HasPrefix(cmd, "internal-exec"), strings.HasPrefix(cmd, "hook"), strings.HasPrefix(cmd, "init"),
		strings.HasPrefix(cmd, "mcp"), strings.HasPrefix(cmd, "completion"), strings.HasPrefix(cmd, "__complete"), strings.HasPrefix(cmd, "doctor"):
		return false
	case strings.HasPrefix(cmd, "config validate"):
		return cli.Cfg.Validate.File == ""
	}
	return true
}

// exitCode prints an error once and maps it to the exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "error: %s\n", termLines(loop.ErrorMessage(err)))
	return loop.ExitCode(loop.ErrorCode(err))
}

// LoadConfig loads the config strictly: a problem outside standingSessions
// refuses every verb but stop (decisions D8), and so does an unsafe state
// root (checkStateRoot).
func (a *App) LoadConfig() (*config.Config, error) {
	cfg, err := config.Load(a.ConfigPath)
	if err != nil {
		return nil, err
	}
	if err := refuseMovedStore(cfg); err != nil {
		return nil, err
	}
	if err := checkStateRoot(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadTolerant loads the config tolerantly for a verb that reads but must
// not miss a store (events): a store left at the old place is refused as by
// LoadConfig.
func (a *App) LoadTolerant() (*config.Config, error) {
	cfg := config.LoadTolerant(a.ConfigPath)
	if err := refuseMovedStore(cfg); err != nil {
		return nil, err
	}
	if err := checkStateRoot(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadForStop loads the config tolerantly for stop (decisions D8). When the
// store is still at the old place (movedStore), stop uses it — the agents
// it knows of run from there — and says so on stderr.
func (a *App) LoadForStop() *config.Config {
	cfg := config.LoadTolerant(a.ConfigPath)
	if old, moved := movedStore(cfg); moved {
		fmt.Fprintf(a.Stderr, "note: using the store at %s (state.root resolved against the working directory, as before); "+
			"once stopped, move it to %s or set an absolute state.root\n", termSafe(old), termSafe(cfg.StateDir()))
		cfg.StateRoot = old
	}
	return cfg
}

// checkStateRoot refuses (EINVALID, exit 2) a state root another user
// owns or others may write, or that lies under a directory others may
// write that is not sticky (fileperm.Check): its store and
// its files steer what runs as this user.
// A group write bit the rules allow (the owner's own group) is dropped
// (fileperm.DropGroupWrite): the token and the spool are checked with none.
func checkStateRoot(cfg *config.Config) error {
	if err := fileperm.Check(cfg.StateDir(), "state root (state.root)"); err != nil {
		return err
	}
	return fileperm.DropGroupWrite(cfg.StateDir())
}

// storeFile is the store's file under a state root.
func storeFile(stateDir string) string { return filepath.Join(stateDir, "the-loop.db") }

// movedStore reports a store left behind by decisions D27's move: relative
// paths in the config used to resolve against the working directory and
// now resolve against the project directory. It answers the old state root
// when that holds a store and the new one does not.
func movedStore(cfg *config.Config) (string, bool) {
	old := cfg.CwdStateDir()
	if old == "" {
		return "", false
	}
	if _, err := os.Stat(storeFile(old)); err != nil {
		return "", false
	}
	if _, err := os.Stat(storeFile(cfg.StateDir())); err == nil {
		return "", false
	}
	return old, true
}

// refuseMovedStore refuses every verb but stop (EINVALID, exit 2) while the
// store is at the old place: run there, it would see another, empty store
// — and report a running agent not running.
func refuseMovedStore(cfg *config.Config) error {
	old, moved := movedStore(cfg)
	if !moved {
		return nil
	}
	return loop.Invalid("the store is at %[1]s, where state.root '%[3]s' pointed when it resolved against the working directory; "+
		"it now resolves against the project directory %[4]s, so the state root is %[2]s, which holds no store. "+
		"Run `the-loop stop` (it still uses %[1]s), then move the folder (mv %[1]s %[2]s), or set an absolute state.root",
		old, cfg.StateDir(), cfg.StateRoot, cfg.ProjectDir)
}

// OpenStore opens the store under the config's state root. transient opens
// the file only around each transaction (the CLI, decisions D3).
func (a *App) OpenStore(cfg *config.Config, transient bool) (*store.DB, error) {
	return a.openStoreHeard(cfg, transient, nil)
}

// openStoreHeard is OpenStore whose committed events go to committed too
// (the service's metrics; nil: nowhere).
func (a *App) openStoreHeard(cfg *config.Config, transient bool, committed func([]loop.Event)) (*store.DB, error) {
	return store.Open(filepath.Join(cfg.StateDir(), "the-loop.db"), store.Options{
		Transient: transient,
		MaxEvents: cfg.EventLog.MaxEvents,
		MaxBytes:  cfg.EventLog.MaxBytes,
		Committed: committed,
	})
}

// lockDir holds the runner's per-target delivery locks:
// <state.root>/local/locks.
func lockDir(cfg *config.Config) string { return filepath.Join(cfg.StateDir(), "local", "locks") }

// fixed is a config source that always gives cfg (a one-shot CLI verb).
func fixed(cfg *config.Config) func() *config.Config { return func() *config.Config { return cfg } }

// Lifecycle wires the verbs for this process: the store, tmux and the
// harness adapters. The adapters' and runners' options (harnessTrust,
// submitDelayMs, the secret variables agents never inherit) are read from
// current at every use, so a service whose config changes uses the new
// values at once (decisions D3); a runner is kept per socket and options.
func (a *App) Lifecycle(current func() *config.Config, db *store.DB, source string, cached bool) *lifecycle.Service {
	self := cliProgram()
	var mu sync.Mutex
	runners := map[string]loop.Runner{}
	svc := &lifecycle.Service{
		DB:       db,
		Redactor: newRedactor(current),
		Runner: func(socket string) loop.Runner {
			opt := runner.Options{
				Socket:      socket,
				SubmitDelay: current().Routing.Tmux.SubmitDelay(),
				Launcher:    []string{self, "internal-exec"},
				DropEnv:     credential.SecretEnv(current()),
				// Under the state root, not $TMPDIR: a CLI and a service
				// with different TMPDIRs serialise, and no other local user
				// can pre-create it.
				LockDir: lockDir(current()),
				// Likewise: a launch file a pane never read stays in the
				// project, never in a shared $TMPDIR.
				LaunchDir: filepath.Join(current().StateDir(), "local", "launch"),
			}
			key := fmt.Sprintf("%s\x00%d\x00%s\x00%s\x00%s", socket, opt.SubmitDelay, opt.LockDir, opt.LaunchDir, strings.Join(opt.DropEnv, "\x00"))
			mu.Lock()
			defer mu.Unlock()
			if r, ok := runners[key]; ok {
				return r
			}
			var r loop.Runner = runner.New(opt)
			if cached { // the service answers many reads: liveness from a shared, fresh-enough query
				r = runner.NewCache(r, runner.DefaultLivenessTTL)
			}
			runners[key] = r
			return r
		},
		Harness: func(name, session string) (loop.Harness, error) {
			trust := current().Routing.HarnessTrust
			return harness.NewRegistry(harness.ClaudeOptions{
				TrustEnabled: trust.Enabled,
				AcceptBypass: trust.AcceptBypassPermissions,
			}).Lookup(name, session)
		},
		LookPath: exec.LookPath,
		Source:   source,
		// Every claude, codex and gemini spawn declares hooks that run this binary.
		HookBinary: self,
		// A claim is live while the process that made it runs: judged by
		// its pid and that pid's start time.
		ProcStart: runner.ProcessStart,

		Announcer: announcer(), // Slack: a started session's announcement
		// tmux missing from PATH is named before a start tries anything.
		TmuxAvailable: func() error { return runner.New(runner.Options{}).Available() },
	}
	svc.Hearing = hearer(svc)
	return svc
}

// hearingOf is the hearing room Lifecycle put beside svc.
func hearingOf(svc *lifecycle.Service) *hearing.Hearer { return svc.Hearing.(*hearing.Hearer) }

// hearer is the hearing room beside svc: it applies hooks to svc's store,
// its events stamped by svc, its adapters and pane queries svc's, and an
// agent's end pokes svc's supervisor.
func hearer(svc *lifecycle.Service) *hearing.Hearer {
	return &hearing.Hearer{DB: svc.DB, Events: svc, Harness: svc.Harness, Runner: svc.Runner,
		Clock: svc.Clock, NewID: svc.NewID, Ended: svc.SessionEnded, ProcStart: svc.ProcStart}
}

// signalContext is cancelled by Ctrl-C or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// okExit is nil when ok, else exit status 1 with nothing more to say.
func okExit(ok bool) error {
	if ok {
		return nil
	}
	return &exitError{code: 1}
}
