package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// doctorWorld is a work dir with a config, a home, and a bin dir that is
// the whole PATH: a fake claude that prints its version, fakes of
// systemctl and loginctl (a user manager runs; linger is on), and tmux
// unless a test leaves it out. systemd-run is not there: start would make no scope.
type doctorWorld struct {
	t                testing.TB
	dir, home, bin   string
	cfg, socket      string
	port             int
	runtimeDir, path string
	prog             string // the-loop as the doctor runs it ("": the one the tests built)
}

func newDoctorWorld(t *testing.T, withTmux bool) *doctorWorld {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the doctor's fakes are Linux shell scripts")
	}
	root := t.TempDir()
	w := &doctorWorld{t: t, dir: filepath.Join(root, "work"), home: filepath.Join(root, "home"), bin: filepath.Join(root, "bin"),
		runtimeDir: filepath.Join(root, "run"), socket: testkit.Tmux(t)}
	for _, d := range []string{w.dir, w.home, w.bin, w.runtimeDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.script("claude", `[ "$1" = --version ] && echo '2.1.332 (Claude Code)'`)
	w.script("systemctl", `case "$*" in *show-environment*) exit 0;; *is-enabled*) echo enabled;; esac`)
	w.script("loginctl", `echo Linger=yes`)
	if withTmux {
		real, err := exec.LookPath("tmux")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, filepath.Join(w.bin, "tmux")); err != nil {
			t.Fatal(err)
		}
	}
	w.path = w.bin
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.port = ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	w.cfg = filepath.Join(w.dir, "cli-config.yaml")
	w.config("")
	return w
}

// script writes an executable /bin/sh script into the bin dir.
func (w *doctorWorld) script(name, body string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		w.t.Fatal(err)
	}
}

// config writes the config: the world's port and socket, then extra.
func (w *doctorWorld) config(extra string) {
	w.t.Helper()
	body := fmt.Sprintf("service: {port: %d}\nrouting:\n  tmux: {socketName: %s}\n%s", w.port, w.socket, extra)
	if err := os.WriteFile(w.cfg, []byte(body), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// doctor runs `the-loop -c cfg doctor args…` with the world's PATH, HOME
// and runtime dir.
func (w *doctorWorld) doctor(args ...string) result {
	w.t.Helper()
	return w.cli(append([]string{"doctor"}, args...)...)
}

// cli runs `the-loop -c cfg args…` with the world's PATH, HOME and runtime
// dir.
func (w *doctorWorld) cli(args ...string) result {
	w.t.Helper()
	prog := binary
	if w.prog != "" {
		prog = w.prog
	}
	cmd := exec.Command(prog, append([]string{"-c", w.cfg}, args...)...)
	cmd.Dir = w.dir
	cmd.Env = append(filterEnv(os.Environ(), "TMUX", "TMUX_PANE", "HOME", "PATH", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "USER", "THE_LOOP_CLI_CONFIG", "INVOCATION_ID"),
		"HOME="+w.home, "PATH="+w.path, "XDG_RUNTIME_DIR="+w.runtimeDir, "USER=tester", "GORACE=atexit_sleep_ms=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// report is `doctor --format json`, decoded.
func (w *doctorWorld) report() (doctorReport, int) {
	w.t.Helper()
	r := w.doctor("--format", "json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		w.t.Fatalf("doctor --format json is not JSON: %v\n%s", err, r)
	}
	return rep, r.code
}

// find returns the checks called name.
func (rep doctorReport) find(name string) []check {
	var out []check
	for _, c := range rep.Checks {
		if c.Check == name {
			out = append(out, c)
		}
	}
	return out
}

// wantProblem fails unless check name reports a problem whose detail
// holds detail and whose remedy holds remedy, and the doctor exited 1.
func wantProblem(t *testing.T, rep doctorReport, code int, name, detail, remedy string) {
	t.Helper()
	if code != 1 || rep.Healthy {
		t.Errorf("exit %d, healthy %v; want 1, false", code, rep.Healthy)
	}
	for _, c := range rep.find(name) {
		if c.Status == checkProblem && strings.Contains(c.Detail, detail) && strings.Contains(c.Remedy, remedy) {
			return
		}
	}
	t.Errorf("no %s problem with %q and remedy %q in %+v", name, detail, remedy, rep.Checks)
}

func TestDoctor_HealthyExitsZero(t *testing.T) {
	w := newDoctorWorld(t, true)
	r := w.doctor()
	if r.code != 0 || !strings.Contains(r.stdout, "healthy") {
		t.Fatalf("a healthy setup: %s", r)
	}
	rep, code := w.report()
	if code != 0 || !rep.Healthy || rep.Problems != 0 {
		t.Fatalf("exit %d, report %+v", code, rep)
	}
	for name, want := range map[string]string{
		"tmux":            "tmux ",
		"socket":          w.socket,
		"harness claude":  "2.1.332 (Claude Code)",
		"state root":      "does not exist yet",
		"token":           "does not exist yet",
		"port":            fmt.Sprintf("127.0.0.1:%d: free", w.port),
		"service":         "not running",
		"survives logout": "linger is on for tester; no unit installed",
		"programs":        "the service " + daemonBinary() + ", the hook program " + filepath.Join(filepath.Dir(binary), "the-loop-hook"),
	} {
		got := rep.find(name)
		if len(got) != 1 || got[0].Status != checkOK || !strings.Contains(got[0].Detail, want) {
			t.Errorf("%s: %+v, want one ok holding %q", name, got, want)
		}
	}
}

func TestDoctor_MissingTmux(t *testing.T) {
	w := newDoctorWorld(t, false)
	rep, code := w.report()
	wantProblem(t, rep, code, "tmux", "tmux not found on PATH", "apt-get install -y tmux")
	r := w.doctor()
	if r.code != 1 || !strings.Contains(r.stdout, "→ install it: `apt-get install -y tmux`") {
		t.Errorf("the text report lacks the remedy: %s", r)
	}
}

// A the-loop installed without the-loopd beside it is a problem naming the
// path and how to install the three programs together; without the hook
// program beside it, a warning.
func TestDoctor_ProgramsBesideTheCLI(t *testing.T) {
	w := newDoctorWorld(t, true)
	alone := filepath.Join(t.TempDir(), "the-loop")
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	w.prog = alone
	rep, code := w.report()
	wantProblem(t, rep, code, "programs", "no the-loopd beside "+alone, "install the-loop, the-loopd and the-loop-hook together")

	if err := os.Symlink(daemonBinary(), filepath.Join(filepath.Dir(alone), "the-loopd")); err != nil {
		t.Fatal(err)
	}
	rep, _ = w.report()
	if got := rep.find("programs"); len(got) != 1 || got[0].Status != checkWarning || !strings.Contains(got[0].Detail, "no the-loop-hook beside "+alone) {
		t.Fatalf("programs without the hook program: %+v, want a warning naming it", got)
	}
}

func TestDoctor_MissingHarnessBinary(t *testing.T) {
	w := newDoctorWorld(t, true)
	if err := os.Remove(filepath.Join(w.bin, "claude")); err != nil {
		t.Fatal(err)
	}
	rep, code := w.report()
	wantProblem(t, rep, code, "harness claude", "'claude' not found on PATH", "routing.harnessBinaries.claude")

	w.config("  harnessBinaries: {claude: /nonexistent/claude}\n")
	rep, code = w.report()
	wantProblem(t, rep, code, "harness claude", "routing.harnessBinaries.claude is '/nonexistent/claude'", "install the claude CLI there")
}

func TestDoctor_WorldReadableTokenFile(t *testing.T) {
	w := newDoctorWorld(t, true)
	state := filepath.Join(w.dir, ".the-loop")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(state, "service.token")
	if err := os.WriteFile(token, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(token, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, code := w.report()
	wantProblem(t, rep, code, "token", "mode 0644: group or others may read", "chmod 600 "+token)
}

func TestDoctor_BrokenConfig(t *testing.T) {
	w := newDoctorWorld(t, true)
	if err := os.WriteFile(w.cfg, []byte("service: {port: nope}\nstandingSessions:\n  enabled: true\n  sessions:\n    - {name: a, cwd: ./absent}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, code := w.report()
	wantProblem(t, rep, code, "config", "service.port", "the-loop config validate")
	wantProblem(t, rep, code, "config", "standingSessions.sessions[0].cwd", "fix the path")

	w.config("")
	if err := os.Chmod(w.cfg, 0o666); err != nil {
		t.Fatal(err)
	}
	rep, code = w.report()
	wantProblem(t, rep, code, "config", "lets others write it; run chmod o-w "+w.cfg, "every verb but stop")

	w.cfg = filepath.Join(w.dir, "absent.yaml")
	rep, code = w.report()
	wantProblem(t, rep, code, "config", "absent.yaml", "create the file")
}

func TestDoctor_PortHeldAndIgnoredKeys(t *testing.T) {
	w := newDoctorWorld(t, true)
	w.config("selfDiagnosis: {enabled: true}\n")
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", w.port))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rep, code := w.report()
	wantProblem(t, rep, code, "port", "held by a process that is not a the-loop service", "set service.port to a free port")
	if got := rep.find("ignored keys"); len(got) != 1 || got[0].Status != checkWarning || !strings.Contains(got[0].Detail, "selfDiagnosis") {
		t.Errorf("ignored keys: %+v", got)
	}
}

// TestDoctor_NoSystemdIsNotApplicable: without a user manager (no
// systemctl, no private socket) the login check does not apply and does
// not fail the doctor.
func TestDoctor_NoSystemdIsNotApplicable(t *testing.T) {
	w := newDoctorWorld(t, true)
	if err := os.Remove(filepath.Join(w.bin, "systemctl")); err != nil {
		t.Fatal(err)
	}
	rep, code := w.report()
	got := rep.find("survives logout")
	if code != 0 || len(got) != 1 || got[0].Status != checkNA {
		t.Errorf("exit %d, survives logout %+v; want 0 and n/a", code, got)
	}
}

// TestDoctor_LingerOffUnderTheUserManager: with linger off, a service that
// `start` puts in a scope of the user manager (routing.tmux.socketName set,
// systemd-run there) ends at the last logout: a problem, with the remedy.
func TestDoctor_LingerOffUnderTheUserManager(t *testing.T) {
	w := newDoctorWorld(t, true)
	w.script("loginctl", `echo Linger=no`)
	w.script("systemd-run", `exit 0`)
	rep, code := w.report()
	wantProblem(t, rep, code, "survives logout", "stops at your last logout while linger is off for tester", "loginctl enable-linger tester")
}

// TestDoctor_AsksTheRunningService: with this state root's service running,
// the tmux and harness checks are the service's own (it spawns the agents,
// in the environment it was started with) and say so; a harness the
// service finds but this shell's PATH lacks is a warning, not a problem.
func TestDoctor_AsksTheRunningService(t *testing.T) {
	w := newDoctorWorld(t, true)
	agents := filepath.Join(filepath.Dir(w.bin), "agents")
	if err := os.MkdirAll(agents, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(w.bin, "claude"), filepath.Join(agents, "claude")); err != nil {
		t.Fatal(err)
	}
	w.path = agents + string(os.PathListSeparator) + w.bin // the shell `just run` starts the service from
	t.Cleanup(func() { w.cli("stop") })
	if r := w.cli("start"); r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	w.path = w.bin // the operator's own shell: no claude on PATH
	rep, code := w.report()
	got := rep.find("harness claude")
	if len(got) != 2 || got[0].Status != checkOK || !strings.Contains(got[0].Detail, "2.1.332 (Claude Code)") ||
		!strings.HasSuffix(got[0].Detail, "(as the service sees it)") {
		t.Fatalf("harness claude: %+v, want the service's ok first", got)
	}
	if got[1].Status != checkWarning || !strings.Contains(got[1].Detail, "not found in this shell: 'claude' not found on PATH") {
		t.Fatalf("harness claude, this shell: %+v, want a warning", got[1])
	}
	if tm := rep.find("tmux"); len(tm) != 1 || tm[0].Status != checkOK || !strings.HasSuffix(tm[0].Detail, "(as the service sees it)") {
		t.Fatalf("tmux: %+v", tm)
	}
	if code != 0 || rep.Problems != 0 {
		t.Fatalf("exit %d with %d problems: %+v", code, rep.Problems, rep.Checks)
	}
}
