package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/bootunit"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
	"github.com/the-loop-dev/the-loop/sdk"
)

// toolTimeout bounds each external command the doctor runs (tmux -V, a
// harness's --version, systemctl, loginctl).
const toolTimeout = 5 * time.Second

// doctorChecks runs every check in the order the report shows them. The
// config is loaded tolerantly, so a broken config is one problem and every
// other check still runs on what can be read.
func (a *App) doctorChecks() []check {
	cfg, checks := a.doctorConfig()
	checks = append(checks, doctorIgnored(cfg), doctorPrograms())
	tmux, harnesses := a.environmentChecks(cfg)
	checks = append(checks, tmux...)
	checks = append(checks, doctorSocket(cfg))
	checks = append(checks, harnesses...)
	checks = append(checks, doctorGeminiHooks()...)
	checks = append(checks, doctorStateRoot(cfg), doctorToken(cfg))
	checks = append(checks, a.doctorService(cfg)...)
	checks = append(checks, doctorLogin(cfg, lookupUser(), servicePID(cfg)))
	return checks
}

// doctorConfig loads the config and reports its problems: load and
// validation errors, the standingSessions block's refusal, and what start
// would hit (a cwd or promptFile that does not exist).
func (a *App) doctorConfig() (*config.Config, []check) {
	path := a.ConfigPath
	if path == "" {
		return config.Default(), []check{{Check: "config", Status: checkOK, Detail: "no CLI config found; the defaults apply"}}
	}
	if _, err := os.Stat(path); err != nil {
		return config.Default(), []check{{Check: "config", Status: checkProblem,
			Detail: fmt.Sprintf("%s: %v", path, pathErr(err)),
			Remedy: "create the file, or name an existing one with -c PATH or THE_LOOP_CLI_CONFIG"}}
	}
	cfg := config.LoadTolerant(path)
	var out []check
	if err := fileperm.Check(path, "CLI config"); err != nil {
		out = append(out, check{Check: "config", Status: checkProblem, Detail: loop.ErrorMessage(err),
			Remedy: "make it and the directories above it this user's and not writable by others (the detail names the command): every verb but stop, and the service, refuse it"})
	}
	for _, p := range cfg.Problems {
		out = append(out, check{Check: "config", Status: checkProblem, Detail: loop.ErrorMessage(p),
			Remedy: "fix the key it names (`the-loop config validate` lists every problem; `the-loop config schema` says what each key takes)"})
	}
	errs, _ := cfg.Preflight()
	for _, e := range errs {
		out = append(out, check{Check: "config", Status: checkProblem, Detail: e, Remedy: "fix the path in " + path})
	}
	if cfg.Standing != nil && len(cfg.Standing.Sessions) > 0 && !cfg.Standing.Enabled {
		out = append(out, check{Check: "config", Status: checkWarning,
			Detail: fmt.Sprintf("standingSessions.enabled is not true: `the-loop start` starts none of the %d declared sessions", len(cfg.Standing.Sessions)),
			Remedy: "set standingSessions.enabled: true"})
	}
	if len(out) == 0 {
		out = append(out, check{Check: "config", Status: checkOK, Detail: path + ": valid"})
	} else {
		out = append([]check{{Check: "config", Status: checkOK, Detail: "using " + path}}, out...)
	}
	return cfg, out
}

// pathErr is an *os.PathError's cause (the path is named already).
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// doctorIgnored lists the keys of the original's schema the config sets
// that this the-loop accepts and ignores.
func doctorIgnored(cfg *config.Config) check {
	keys := cfg.IgnoredSet()
	if len(keys) == 0 {
		return check{Check: "ignored keys", Status: checkOK, Detail: "none set"}
	}
	return check{Check: "ignored keys", Status: checkWarning,
		Detail: "accepted, ignored (this the-loop does not act on them): " + strings.Join(keys, ", "),
		Remedy: "remove them, or leave them for the original to read"}
}

// toolOutput runs argv within toolTimeout and returns its first line of
// output (stdout, else stderr).
func toolOutput(argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = nil
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if ctx.Err() != nil {
		return line, fmt.Errorf("no answer within %s", toolTimeout)
	}
	return strings.TrimSpace(line), err
}

// doctorTmux finds tmux on PATH and asks its version.
// doctorPrograms checks the programs installed beside this one (decisions
// D37): the service's, which serve, mcp and channels hand over to, and the
// hook program every agent event runs.
func doctorPrograms() check {
	self, _ := os.Executable()
	const remedy = "install the-loop, the-loopd and the-loop-hook together, from one release archive or package (`just build` builds all three into bin/)"
	daemon, err := serviceProgram()
	if err != nil {
		return check{Check: "programs", Status: checkProblem, Remedy: remedy,
			Detail: fmt.Sprintf("no %s beside %s: the service, the agents' MCP bridge and the Slack channel cannot run", serviceProgramName, self)}
	}
	service := "the service " + daemon
	if serviceBuiltIn {
		service = "the service in this program"
	}
	hook := engine.HookProgram(cliProgram())
	if hook == "" {
		return check{Check: "programs", Status: checkWarning, Remedy: remedy,
			Detail: fmt.Sprintf("%s; no %s beside %s, so every agent event starts the whole CLI (`the-loop hook`)", service, engine.HookProgramName, self)}
	}
	return check{Check: "programs", Status: checkOK, Detail: service + ", the hook program " + hook}
}

func doctorTmux() check {
	path, err := exec.LookPath("tmux")
	if err != nil {
		return check{Check: "tmux", Status: checkProblem, Detail: "tmux not found on PATH (" + os.Getenv("PATH") + "); nothing can run without it",
			Remedy: "install it: `apt-get install -y tmux` (Debian/Ubuntu) · `brew install tmux` (macOS) · `dnf install tmux` (Fedora)"}
	}
	v, err := toolOutput(path, "-V")
	if err != nil {
		return check{Check: "tmux", Status: checkProblem, Detail: fmt.Sprintf("%s -V failed: %v %s", path, err, v),
			Remedy: "reinstall tmux, or put a working one first on PATH"}
	}
	return check{Check: "tmux", Status: checkOK, Detail: fmt.Sprintf("%s (%s)", v, path)}
}

// doctorSocket names the tmux server the sessions run on and whether it
// runs now.
func doctorSocket(cfg *config.Config) check {
	name := cfg.Routing.Tmux.SocketName
	where := "the user's default tmux server"
	args := []string{"list-sessions"}
	if name != "" {
		dir := os.Getenv("TMUX_TMPDIR")
		if dir == "" {
			dir = "/tmp"
		}
		where = fmt.Sprintf("socket %s (routing.tmux.socketName)", filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), name))
		args = append([]string{"-L", name}, args...)
	}
	if !haveBinary("tmux") {
		return check{Check: "socket", Status: checkNA, Detail: where + "; tmux is not installed"}
	}
	out, err := toolOutput(append([]string{"tmux"}, args...)...)
	switch {
	case err == nil:
		return check{Check: "socket", Status: checkOK, Detail: where + ": server running"}
	case strings.Contains(out, "no server running") || strings.Contains(out, "error connecting") || strings.Contains(out, "No such file"):
		return check{Check: "socket", Status: checkOK, Detail: where + ": no server running (the first session starts it)"}
	case strings.Contains(out, "ermission denied"):
		return check{Check: "socket", Status: checkProblem, Detail: where + ": " + out,
			Remedy: "the socket belongs to someone else: set routing.tmux.socketName to a name of your own"}
	}
	return check{Check: "socket", Status: checkWarning, Detail: fmt.Sprintf("%s: tmux answered %q (%v)", where, out, err)}
}

// configuredHarnesses are the harnesses the config names:
// routing.defaultHarness, then each declared session's, each once.
func configuredHarnesses(cfg *config.Config) []string {
	names := []string{cfg.Routing.DefaultHarness}
	for _, d := range cfg.Standing.Sessions {
		if d.Harness != "" && !slices.Contains(names, d.Harness) {
			names = append(names, d.Harness)
		}
	}
	return names
}

// doctorHarnesses finds each configured harness's binary
// (routing.harnessBinaries, else this PATH) and asks its version.
func doctorHarnesses(cfg *config.Config) []check {
	reg := harness.NewRegistry(harness.ClaudeOptions{})
	var out []check
	for _, name := range configuredHarnesses(cfg) {
		label := "harness " + name
		adapter, err := reg.Lookup(name, "doctor")
		if err != nil {
			out = append(out, check{Check: label, Status: checkProblem, Detail: loop.ErrorMessage(err),
				Remedy: "name a known harness in routing.defaultHarness or the session's harness"})
			continue
		}
		path := cfg.Routing.HarnessBinaries[name]
		key := "routing.harnessBinaries." + name
		if path != "" {
			if fi, err := os.Stat(path); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				out = append(out, check{Check: label, Status: checkProblem,
					Detail: fmt.Sprintf("%s is '%s', which is not an executable file", key, path),
					Remedy: fmt.Sprintf("install the %s CLI there, or fix %s", name, key)})
				continue
			}
		} else if path, err = exec.LookPath(adapter.Binary()); err != nil {
			out = append(out, check{Check: label, Status: checkProblem,
				Detail: fmt.Sprintf("'%s' not found on PATH (%s)", adapter.Binary(), os.Getenv("PATH")),
				Remedy: fmt.Sprintf("install it (%s), or set %s to its absolute path; the service searches the PATH it was started with", harnessInstall(name), key)})
			continue
		}
		v, err := toolOutput(path, "--version")
		if err != nil {
			out = append(out, check{Check: label, Status: checkWarning, Detail: fmt.Sprintf("%s: --version failed (%v) %s", path, err, v)})
			continue
		}
		out = append(out, check{Check: label, Status: checkOK, Detail: fmt.Sprintf("%s (%s)", v, path)})
	}
	return out
}

// harnessInstall is how a harness CLI is installed.
func harnessInstall(name string) string {
	switch name {
	case "claude":
		return "`npm install -g @anthropic-ai/claude-code`"
	case "codex":
		return "`npm install -g @openai/codex`"
	case "gemini":
		return "`npm install -g @google/gemini-cli`"
	}
	return "see its vendor's instructions"
}

// doctorStateRoot checks that the state root is this user's and that no one
// else may write it.
func doctorStateRoot(cfg *config.Config) check {
	dir := cfg.StateDir()
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return check{Check: "state root", Status: checkOK, Detail: dir + " does not exist yet (created 0700 at the first start)"}
	}
	if err != nil {
		return check{Check: "state root", Status: checkProblem, Detail: fmt.Sprintf("%s: %v", dir, pathErr(err)), Remedy: "fix its permissions, or choose another state.root"}
	}
	if !fi.IsDir() {
		return check{Check: "state root", Status: checkProblem, Detail: dir + " is not a directory", Remedy: "remove it, or choose another state.root"}
	}
	if err := fileperm.CheckPrivate(dir, "state root (state.root)"); err != nil {
		return check{Check: "state root", Status: checkProblem, Detail: loop.ErrorMessage(err), Remedy: "chmod 700 " + dir + " (and chown it to this user)"}
	}
	return check{Check: "state root", Status: checkOK, Detail: fmt.Sprintf("%s (mode %04o, yours)", dir, fi.Mode().Perm())}
}

// doctorToken checks the operator's token: the variable service.tokenEnv
// names, else the token file, which group and others may not read.
func doctorToken(cfg *config.Config) check {
	switch {
	case cfg.Service.AuthOff():
		return check{Check: "token", Status: checkNA, Detail: "service.auth is none: no token is asked"}
	case cfg.Service.TokenEnv != "":
		if os.Getenv(cfg.Service.TokenEnv) == "" {
			return check{Check: "token", Status: checkProblem, Detail: fmt.Sprintf("service.tokenEnv names %s, which is empty or unset here", cfg.Service.TokenEnv),
				Remedy: fmt.Sprintf("export %s (in the shell you start the-loop from), or remove service.tokenEnv", cfg.Service.TokenEnv)}
		}
		return check{Check: "token", Status: checkOK, Detail: "$" + cfg.Service.TokenEnv + " is set (service.tokenEnv)"}
	}
	path := sdk.TokenPath(cfg.StateDir())
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return check{Check: "token", Status: checkOK, Detail: path + " does not exist yet (created 0600 at the first start)"}
	}
	if err != nil {
		return check{Check: "token", Status: checkProblem, Detail: fmt.Sprintf("%s: %v", path, pathErr(err)), Remedy: "fix its permissions"}
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return check{Check: "token", Status: checkProblem,
			Detail: fmt.Sprintf("%s has mode %04o: group or others may read the operator's token", path, perm),
			Remedy: fmt.Sprintf("chmod 600 %s, then `the-loop token --rotate` (the old token may have been read)", path)}
	}
	if err := sdk.CheckSecretFile(path); err != nil {
		return check{Check: "token", Status: checkProblem, Detail: loop.ErrorMessage(err), Remedy: "chown it to this user, or `the-loop token --rotate`"}
	}
	return check{Check: "token", Status: checkOK, Detail: fmt.Sprintf("%s (mode %04o)", path, fi.Mode().Perm())}
}

// doctorService reports, asking over the socket, whether this state
// root's service runs and who holds service.host:service.port (this
// service, another process — the service then runs degraded — or nobody),
// and the service's health.
func (a *App) doctorService(cfg *config.Config) []check {
	addr := cfg.Service.Addr()
	if !cfg.Service.Enabled {
		return []check{{Check: "port", Status: checkNA, Detail: "service.enabled is false: no service runs"}}
	}
	st := a.probe(cfg, 2*time.Second)
	switch {
	case st.ours:
		port := check{Check: "port", Status: checkOK, Detail: fmt.Sprintf("%s: this state root's service (pid %d)", addr, st.health.PID)}
		if st.health.Degraded != "" { // it answers on its socket alone
			port = check{Check: "port", Status: checkProblem, Detail: st.health.Degraded,
				Remedy: fmt.Sprintf("stop the process holding %s (`ss -ltnp 'sport = :%d'` names it), or set service.port to a free port, then `the-loop restart`", addr, cfg.Service.Port)}
		}
		health := check{Check: "service", Status: checkOK, Detail: fmt.Sprintf("answers health: %s, %s", st.health.Status, st.health.Version)}
		if st.health.Status != "ok" {
			health.Status, health.Remedy = checkProblem, "read its log ("+logPath(cfg)+") and `the-loop restart`"
		}
		return []check{port, health}
	case st.answered:
		return []check{
			{Check: "port", Status: checkProblem, Detail: st.foreign(cfg), Remedy: "give each project its own service.port"},
			{Check: "service", Status: checkNA, Detail: "this state root's service cannot listen there"},
		}
	}
	port := check{Check: "port", Status: checkOK, Detail: addr + ": free"}
	if ln, err := net.Listen("tcp", addr); err != nil {
		port = check{Check: "port", Status: checkProblem, Detail: fmt.Sprintf("%s: held by a process that is not a the-loop service (%v)", addr, portCause(err)),
			Remedy: fmt.Sprintf("stop that process (`ss -ltnp 'sport = :%d'` names it), or set service.port to a free port", cfg.Service.Port)}
	} else {
		_ = ln.Close()
	}
	health := check{Check: "service", Status: checkOK, Detail: "not running (`the-loop start` starts it)"}
	if st.holder != 0 {
		health = check{Check: "service", Status: checkProblem, Detail: fmt.Sprintf("pid %d holds this state root's pid file but does not answer at %s", st.holder, addr),
			Remedy: fmt.Sprintf("read %s, then `the-loop stop` and `the-loop start`", logPath(cfg))}
	}
	return []check{port, health}
}

// portCause is a listen error's cause (address in use, permission denied).
func portCause(err error) error {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}

// lookupUser is the login name ($USER, else the account's).
func lookupUser() string {
	if name := os.Getenv("USER"); name != "" {
		return name
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// doctorLogin says whether the service and its sessions outlive the login:
// not applicable without a systemd user manager (macOS, a container). With
// one, linger on keeps the user manager, and everything under it, running.
// With linger off the user manager stops at the last logout, ending a
// service that runs under it (the scope `start` makes when
// routing.tmux.socketName is set, or the unit of `the-loop service
// install`); a service outside it survives unless logind's
// KillUserProcesses ends it. A running service is judged by its cgroup.
func doctorLogin(cfg *config.Config, name string, servicePID int) check {
	if runtime.GOOS != "linux" {
		return check{Check: "survives logout", Status: checkNA, Detail: "no systemd on " + runtime.GOOS + " (launchd: `the-loop service install`)"}
	}
	if !systemdUser() {
		return check{Check: "survives logout", Status: checkNA, Detail: "no systemd user manager runs for this user"}
	}
	unit, enabled := unitNote(cfg)
	linger := ""
	if name != "" && haveBinary("loginctl") {
		linger, _ = toolOutput("loginctl", "show-user", name, "-p", "Linger")
	}
	if linger == "Linger=yes" {
		return check{Check: "survives logout", Status: checkOK, Detail: "linger is on for " + name + unit}
	}
	under := enabled || wantScope(cfg)
	if servicePID > 0 {
		under = underUserManager(servicePID)
	}
	if under {
		return check{Check: "survives logout", Status: checkProblem,
			Detail: fmt.Sprintf("the service runs under your systemd user manager (its scope or unit), which stops at your last logout while linger is off for %s%s", name, unit),
			Remedy: fmt.Sprintf("loginctl enable-linger %s", name)}
	}
	if !killUserProcesses(logindConfs()) {
		return check{Check: "survives logout", Status: checkOK, Detail: "outside the user manager, and logind keeps processes at logout (KillUserProcesses=no)" + unit}
	}
	return check{Check: "survives logout", Status: checkProblem,
		Detail: fmt.Sprintf("logind ends your processes at logout (KillUserProcesses=yes) and linger is off for %s: the service and its sessions end with your last login%s", name, unit),
		Remedy: fmt.Sprintf("loginctl enable-linger %s", name)}
}

// underUserManager reports whether process pid runs in a unit of a systemd
// user manager (its cgroup lies under user@<uid>.service).
func underUserManager(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return err == nil && strings.Contains(string(data), "/user@")
}

// unitNote is "; unit <name> <state>" for the unit `the-loop service
// install` writes for this state root, or "; no unit installed", and
// whether the unit is enabled.
func unitNote(cfg *config.Config) (string, bool) {
	base := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		base = filepath.Join(home, ".config")
	}
	name := "the-loop-" + bootunit.ID(cfg.StateDir()) + ".service"
	if _, err := os.Stat(filepath.Join(base, "systemd", "user", name)); err != nil {
		return "; no unit installed (`the-loop service install` writes one)", false
	}
	state, _ := toolOutput("systemctl", "--user", "is-enabled", name)
	if state == "" {
		state = "state unknown"
	}
	return fmt.Sprintf("; unit %s %s", name, state), state == "enabled"
}
