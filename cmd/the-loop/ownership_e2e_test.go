package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// nobodyUID is the uid tests give a file to stand for another local user.
const nobodyUID = 65534

// needRoot skips unless the test may chown to another uid (CI runs as
// root).
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root; run the tests as root to check ownership refusals")
	}
}

// runAt runs the-loop in dir with no -c: the config is discovered. HOME
// and XDG_CONFIG_HOME are the env's (no config unless a test writes one).
func (e *env) runAt(dir string, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(filterEnv(os.Environ(), "TMUX", "TMUX_PANE", "HOME", "PATH", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "THE_LOOP_CLI_CONFIG"),
		"HOME="+e.home, "XDG_CONFIG_HOME="+filepath.Join(e.home, ".config"), "PATH="+e.path, "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("the-loop %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

func mkdirMode(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

func chownNobody(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Lchown(p, nobodyUID, nobodyUID); err != nil {
			t.Fatal(err)
		}
	}
}

// refusedWith fails unless r exited 2 and its stderr holds every want.
func refusedWith(t *testing.T, what string, r result, want ...string) {
	t.Helper()
	if r.code != 2 {
		t.Errorf("%s: want exit 2, got %s", what, r)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("%s: stderr does not name %q: %s", what, w, r)
		}
	}
}

// TestOwnership_ConfigOthersMayWriteRefusedByEveryVerb: a config file
// writable by others is refused by standing start, standing list and start
// (exit 2, naming the path, its mode and the remedy) and nothing is
// spawned; stop still works.
func TestOwnership_ConfigOthersMayWriteRefusedByEveryVerb(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession + "service: {enabled: false}\n")
	if err := os.Chmod(e.cfg, 0o646); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"standing", "start", "supervisor"}, {"standing", "list"}, {"start"}, {"standing", "say", "supervisor", "--text", "hi"}} {
		refusedWith(t, strings.Join(args, " "), e.run(args...), e.cfg, "0646", "chmod o-w "+e.cfg)
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("an unsafe config spawned %d agents", n)
	}
	if r := e.run("stop"); r.code != 0 || !strings.Contains(r.stderr, "warning: refusing the CLI config "+e.cfg) {
		t.Fatalf("stop with an unsafe config: %s", r)
	}
}

// TestOwnership_ConfigAnotherUserOwnsRefused: chowned to nobody, the
// config is refused naming its owner.
func TestOwnership_ConfigAnotherUserOwnsRefused(t *testing.T) {
	needRoot(t)
	e := newEnv(t)
	e.config(oneSession + "service: {enabled: false}\n")
	chownNobody(t, e.cfg)
	for _, args := range [][]string{{"standing", "start", "supervisor"}, {"standing", "list"}, {"start"}} {
		refusedWith(t, strings.Join(args, " "), e.run(args...), e.cfg, "uid 65534")
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("a config another user owns spawned %d agents", n)
	}
}

// TestOwnership_StateRootUnsafeRefused: a state root writable by others,
// or (as root) owned by another uid, is refused by standing start,
// standing list and start, naming it; stop refuses it too (its records
// could name anything to stop).
func TestOwnership_StateRootUnsafeRefused(t *testing.T) {
	e := newEnv(t)
	state := mkdirMode(t, filepath.Join(e.dir, "state"), 0o777)
	e.config(strings.Replace(oneSession, "state: {root: .the-loop}", "state: {root: "+state+"}", 1) + "service: {enabled: false}\n")
	for _, args := range [][]string{{"standing", "start", "supervisor"}, {"standing", "list"}, {"start"}, {"stop"}} {
		refusedWith(t, strings.Join(args, " "), e.run(args...), state, "state root", "chmod o-w "+state)
	}
	if os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root")
	}
	mkdirMode(t, state, 0o700)
	chownNobody(t, state)
	for _, args := range [][]string{{"standing", "start", "supervisor"}, {"standing", "list"}, {"start"}} {
		refusedWith(t, strings.Join(args, " "), e.run(args...), state, "uid 65534")
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("an unsafe state root spawned %d agents", n)
	}
}

// TestOwnership_PlantedConfigSpawnsNothing: a .the-loop/cli-config.yaml
// another uid planted in the working directory or a directory above it is
// never used: discovery does not walk through a directory another user
// owns, and a planted file found in the operator's own directory is
// refused (exit 2, naming it), never skipped for the home config.
func TestOwnership_PlantedConfigSpawnsNothing(t *testing.T) {
	needRoot(t)
	e := newEnv(t)
	planted := strings.NewReplacer("%SOCKET%", e.socket, "%DIR%", e.dir).Replace(oneSession) + "service: {enabled: false}\n"
	theirs := mkdirMode(t, filepath.Join(e.dir, "theirs"), 0o755)
	mine := mkdirMode(t, filepath.Join(theirs, "mine"), 0o755)
	plant := func(dir string) string {
		mkdirMode(t, filepath.Join(dir, ".the-loop"), 0o755)
		p := filepath.Join(dir, ".the-loop", "cli-config.yaml")
		if err := os.WriteFile(p, []byte(planted), 0o644); err != nil {
			t.Fatal(err)
		}
		chownNobody(t, filepath.Dir(p), p)
		return p
	}
	plant(theirs)
	chownNobody(t, theirs)
	for _, dir := range []string{theirs, mine} {
		refusedWith(t, "standing start in "+dir, e.runAt(dir, "standing", "start", "supervisor"), "no config found", "the-loop init")
	}
	own := mkdirMode(t, filepath.Join(e.dir, "own"), 0o755)
	p := plant(own)
	home := filepath.Join(e.home, ".the-loop", "cli-config.yaml")
	mkdirMode(t, filepath.Dir(home), 0o700)
	if err := os.WriteFile(home, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{own, mkdirMode(t, filepath.Join(own, "sub"), 0o755)} {
		refusedWith(t, "standing start in "+dir, e.runAt(dir, "standing", "start", "supervisor"), p, "uid 65534")
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("a planted config spawned %d agents", n)
	}
}

// TestDiscovery_FromASubdirectoryFindsTheProjectsConfig: from a project's
// subdirectory, `standing say` finds the project's
// .the-loop/cli-config.yaml (as git finds .git) and -v names it.
func TestDiscovery_FromASubdirectoryFindsTheProjectsConfig(t *testing.T) {
	e := newEnv(t)
	mkdirMode(t, filepath.Join(e.dir, ".the-loop"), 0o700)
	e.cfg = filepath.Join(e.dir, ".the-loop", "cli-config.yaml")
	e.config(oneSession)
	startReady(t, e)
	sub := mkdirMode(t, filepath.Join(e.dir, "src", "pkg"), 0o755)
	r := e.runAt(sub, "-v", "standing", "say", "supervisor", "--text", "from below")
	if r.code != 0 || !strings.Contains(r.stdout, "submitted to loop-standing-supervisor") {
		t.Fatalf("say from a subdirectory: %s", r)
	}
	if !strings.Contains(r.stderr, "config: "+e.cfg) {
		t.Errorf("-v does not name the config: %s", r)
	}
	waitFor(t, "the message", func() bool { return len(e.agent.Messages()) == 1 })
}

// TestWriteVerbs_NoConfigRefuseNamingInit: with no config anywhere, a verb
// that acts refuses (exit 2) saying "no config found" and naming `the-loop
// init`, and creates nothing in the working directory; stop still runs.
func TestWriteVerbs_NoConfigRefuseNamingInit(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"standing", "say", "worker", "--text", "hi"}, {"standing", "start", "worker"}, {"start"},
		{"standing", "create", "x", "--no-start"}, {"token"},
	} {
		refusedWith(t, strings.Join(args, " "), bare(t, dir, args...), "no config found", "`the-loop init`")
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Fatalf("%v left %v in the directory", args, entries)
		}
	}
	if r := bare(t, dir, "stop"); r.code != 0 {
		t.Fatalf("stop without a config: %s", r)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Fatalf("stop left %v in the directory", entries)
	}
}

// TestInit_WritesAStarterConfigThatValidates: init writes
// .the-loop/cli-config.yaml (0644, in a 0700 directory, whatever the
// umask) that validates and declares one session, and a .gitignore that
// keeps the state out and the config in; a second init leaves it all as
// it was.
func TestInit_WritesAStarterConfigThatValidates(t *testing.T) {
	for _, umask := range []string{"000", "077"} {
		t.Run("umask "+umask, func(t *testing.T) {
			e := newEnv(t)
			proj := filepath.Join(e.dir, "proj")
			cmd := exec.Command("sh", "-c", "umask "+umask+" && mkdir -m 755 proj && exec \"$0\" init proj", binary)
			cmd.Dir = e.dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			cfg := filepath.Join(proj, ".the-loop", "cli-config.yaml")
			for p, want := range map[string]os.FileMode{cfg: 0o644, filepath.Dir(cfg): 0o700, filepath.Join(proj, ".gitignore"): 0o644} {
				fi, err := os.Stat(p)
				if err != nil || fi.Mode().Perm() != want {
					t.Errorf("%s: %v, mode %v; want %04o", p, err, fi.Mode().Perm(), want)
				}
			}
			ignore, _ := os.ReadFile(filepath.Join(proj, ".gitignore"))
			if !strings.Contains(string(ignore), ".the-loop/*\n") || !strings.Contains(string(ignore), "!.the-loop/cli-config.yaml\n") {
				t.Errorf(".gitignore: %q", ignore)
			}
			if r := e.runAt(proj, "config", "validate"); r.code != 0 || strings.TrimSpace(r.stdout) != cfg+": valid" {
				t.Fatalf("config validate: %s", r)
			}
			if row, ok := func() (string, bool) {
				r := e.runAt(proj, "standing", "list")
				return r.stdout, r.code == 0 && strings.Contains(r.stdout, "worker")
			}(); !ok {
				t.Fatalf("standing list of the starter config: %s", row)
			}
			before, _ := os.ReadFile(cfg)
			r := e.runAt(e.dir, "init", "proj")
			after, _ := os.ReadFile(cfg)
			again, _ := os.ReadFile(filepath.Join(proj, ".gitignore"))
			if r.code != 0 || !strings.Contains(r.stdout, "already there") || !bytes.Equal(before, after) || !bytes.Equal(ignore, again) {
				t.Fatalf("second init: %s", r)
			}
		})
	}
}

// TestStart_MisspelledKeyInStandingSessionsStartsNothing: a misspelled
// key inside standingSessions refuses start as one at the top level does
// (exit 2): no service, no session; status still reports and stop works.
func TestStart_MisspelledKeyInStandingSessionsStartsNothing(t *testing.T) {
	e := newEnv(t)
	e.port = freePort(t)
	e.config(fmt.Sprintf(`
state: {root: .the-loop}
service: {port: %d}
routing: {tmux: {socketName: %%SOCKET%%}}
standingSessions:
  enabled: true
  sessions:
    - {name: supervisor, cwd: %%DIR%%, autoStrat: true}
`, e.port))
	t.Cleanup(func() {
		if pid := e.servicePID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	refusedWith(t, "start", e.run("start"), "standingSessions.sessions[0]", "autoStrat", "nothing was started")
	if pid := e.servicePID(); pid != 0 {
		t.Fatalf("a service started (pid %d)", pid)
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("%d agents started", n)
	}
	if r := e.run("status"); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "autoStrat") {
		t.Fatalf("status: %s", r)
	}
	e.must(0, "stop")
}

// TestStart_HarnessBinaryMissingRefusedBeforeAnything: a session whose
// harness binary is not where the service will look is named by config
// validate and refuses start (exit 2) before the service starts.
func TestStart_HarnessBinaryMissingRefusedBeforeAnything(t *testing.T) {
	e := newEnv(t)
	e.port = freePort(t)
	bin := t.TempDir() // tmux alone: no agent CLI
	if err := os.Symlink(tmuxPath(t), filepath.Join(bin, "tmux")); err != nil {
		t.Fatal(err)
	}
	e.path = bin
	e.config(fmt.Sprintf(`
state: {root: .the-loop}
service: {port: %d}
routing: {tmux: {socketName: %%SOCKET%%}}
standingSessions:
  enabled: true
  sessions:
    - {name: coder, cwd: %%DIR%%, harness: codex, autoStart: true}
`, e.port))
	t.Cleanup(func() {
		if pid := e.servicePID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	want := []string{"standingSessions.sessions[0] (coder)", "harness codex", "'codex'", "routing.harnessBinaries.codex", "PATH=" + bin}
	refusedWith(t, "config validate", e.run("config", "validate"), want...)
	refusedWith(t, "start", e.run("start"), append(want, "nothing was started")...)
	if pid := e.servicePID(); pid != 0 {
		t.Fatalf("a service started (pid %d)", pid)
	}
	missing := filepath.Join(e.dir, "no-codex")
	e.config(fmt.Sprintf("state: {root: .the-loop}\nservice: {port: %d}\nrouting: {harnessBinaries: {codex: %s}}\nstandingSessions: {enabled: true, sessions: [{name: coder, cwd: %%DIR%%, harness: codex, autoStart: true}]}\n", e.port, missing))
	refusedWith(t, "start with harnessBinaries", e.run("start"), "routing.harnessBinaries.codex = '"+missing+"'", "coder")
}

// TestStart_TmuxMissingStartsNoService: with tmux missing from PATH,
// start names it and starts no service; status is not healthy and names
// tmux (exit 1).
func TestStart_TmuxMissingStartsNoService(t *testing.T) {
	e := newEnv(t)
	e.port = freePort(t)
	e.config(fmt.Sprintf("state: {root: .the-loop}\nservice: {port: %d}\nrouting: {tmux: {socketName: %%SOCKET%%}}\n", e.port))
	t.Cleanup(func() {
		if pid := e.servicePID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	e.path = e.agent.BinDir()
	r := e.must(1, "start")
	if !strings.Contains(r.stderr, "tmux not found on PATH") || !strings.Contains(r.stderr, "nothing was started") {
		t.Fatalf("start without tmux: %s", r)
	}
	if pid := e.servicePID(); pid != 0 {
		t.Fatalf("a service started without tmux (pid %d)", pid)
	}
	if r := e.must(1, "status"); !strings.Contains(r.stdout+r.stderr, "tmux not found on PATH") {
		t.Fatalf("status without tmux: %s", r)
	}
}

// TestServe_ReloadRefusesAConfigOthersMayWrite: a live config made
// writable by others is not reloaded: the service keeps the last good
// config and records service.reload_refused naming the path.
func TestServe_ReloadRefusesAConfigOthersMayWrite(t *testing.T) {
	e := supervisedEnv(t, "", "")
	cmd := e.command("serve", "--no-autostart")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	gone := make(chan struct{}) // closed once serve has exited, however exited was read
	go func() { exited <- cmd.Wait(); close(gone) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if _, ok := testkit.AwaitOK(t, gone); !ok {
			_ = cmd.Process.Kill()
		}
	})
	waitFor(t, "the service", func() bool {
		return strings.Contains(e.run("status", "--format", "json").stdout, `"healthy": true`)
	})
	// A copy at the same place reads the events while the live file is refused.
	safe := filepath.Join(e.dir, "safe.yaml")
	live, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(safe, live, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.cfg, 0o646); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "service.reload_refused", func() bool {
		r := e.run("-c", safe, "events", "--type", "service.reload_refused", "--format", "jsonl", "--limit", "0")
		return r.code == 0 && strings.Contains(r.stdout, e.cfg) && strings.Contains(r.stdout, "chmod o-w")
	})
}

// tmuxPath is the tmux binary the tests run.
func tmuxPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOwnership_Umask002CheckoutStarts: a checkout made under a umask of
// 002 (.the-loop 0775 and its config 0664, in the owner's own group) is
// not refused: the session starts, found from a subdirectory, and the
// state root loses its group write bit (what it holds is kept private).
func TestOwnership_Umask002CheckoutStarts(t *testing.T) {
	needRoot(t) // root's own group is root: its user-private group
	e := newEnv(t)
	state := mkdirMode(t, filepath.Join(e.dir, ".the-loop"), 0o775)
	e.cfg = filepath.Join(state, "cli-config.yaml")
	e.config(oneSession + "service: {enabled: false}\n")
	if err := os.Chmod(e.cfg, 0o664); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(e.cfg, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(state, 0, 0); err != nil {
		t.Fatal(err)
	}
	sub := mkdirMode(t, filepath.Join(e.dir, "src"), 0o775)
	if r := e.runAt(sub, "standing", "start", "supervisor"); r.code != 0 {
		t.Fatalf("standing start in a umask-002 checkout: %s", r)
	}
	waitFor(t, "the agent", func() bool { return len(e.starts()) == 1 })
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("state root after the start: %v %v", err, fi.Mode().Perm())
	}
	e.must(0, "stop")
}

// TestInit_WarnsOfADirectoryOthersMayWrite: init in a directory others
// may write still writes the starter, and warns that every verb would
// refuse it, naming the directory and the remedy.
func TestInit_WarnsOfADirectoryOthersMayWrite(t *testing.T) {
	e := newEnv(t)
	proj := mkdirMode(t, filepath.Join(e.dir, "open"), 0o777)
	r := e.runAt(e.dir, "init", "open")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: every verb will refuse it") || !strings.Contains(r.stderr, "chmod o-w "+proj) {
		t.Fatalf("init in a directory others may write: %s", r)
	}
	if _, err := os.Stat(filepath.Join(proj, ".the-loop", "cli-config.yaml")); err != nil {
		t.Fatal(err)
	}
}
