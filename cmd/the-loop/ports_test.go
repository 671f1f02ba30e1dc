package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/the-loop-dev/the-loop/config"
)

// topService matches a config's top-level service key.
var topService = regexp.MustCompile(`(?m)^service:`)

// ownPort gives a config that declares no service block one on a free
// port, appended (the lines above keep their numbers): the defaults would
// put a test's service on 4114, where `just run`'s demo listens.
func ownPort(t testing.TB, yaml string) string {
	t.Helper()
	if topService.MatchString(yaml) {
		return yaml
	}
	if yaml != "" && yaml[len(yaml)-1] != '\n' {
		yaml += "\n"
	}
	return yaml + fmt.Sprintf("service: {port: %d}\n", freePort(t))
}

// refuseDefaultPort fails the test when the config at path, as the-loop
// loads it, runs the service on the default port: such a test would reach
// (or collide with) a service it did not start. A config the-loop refuses
// to load starts no service and passes.
func refuseDefaultPort(t testing.TB, path string) {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		return
	}
	if def := config.Default().Service.Port; cfg.Service.Enabled && cfg.Service.Port == def {
		t.Fatalf("the test config %s leaves service.port at the default %d, where `just run`'s demo listens: "+
			"write `service: {port: %%PORT%%}` with a free port (freePort), or `service: {enabled: false}`", path, def)
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the message.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }

// TestOwnPort_NoTestConfigLeavesTheDefaultPort: the config the test env
// writes runs its service on a port of its own, and the guard refuses a
// config that leaves service.port at the default.
func TestOwnPort_NoTestConfigLeavesTheDefaultPort(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	cfg, err := config.Load(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Service.Enabled || cfg.Service.Port == config.Default().Service.Port || cfg.Standing == nil || len(cfg.Standing.Sessions) != 1 {
		t.Fatalf("oneSession as written: service %+v, standing %+v", cfg.Service, cfg.Standing)
	}
	kept := "service: {port: 1234}\n"
	if got := ownPort(t, kept); got != kept {
		t.Errorf("ownPort changed a config with a service block: %q", got)
	}

	for _, tt := range []struct {
		name, yaml string
		refused    bool
	}{
		{"no service block", "state: {root: .the-loop}\n", true},
		{"service block without a port", "service: {exposed: false}\n", true},
		{"the default port named", "service: {port: 4114}\n", true},
		{"a port of its own", "service: {port: 4999}\n", false},
		{"the service off", "service: {enabled: false}\n", false},
		{"a config the-loop refuses", "service: {port: not-a-port}\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cli-config.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			rec := &fatalRecorder{TB: t}
			refuseDefaultPort(rec, path)
			if (rec.fatal != "") != tt.refused || (tt.refused && !strings.Contains(rec.fatal, "service.port")) {
				t.Errorf("refused %q, want refused %v", rec.fatal, tt.refused)
			}
		})
	}
}

// TestTwoCommands_TestsPassBesideTheDemo: with a the-loop service on the
// default port (`just run`'s demo, started here when the port is free),
// the standing verbs of a test's env answer from its own state, not the
// demo's.
func TestTwoCommands_TestsPassBesideTheDemo(t *testing.T) {
	def := config.Default().Service.Port
	if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", def)); err == nil {
		ln.Close()
		demo := newEnv(t)
		yaml := fmt.Sprintf("state: {root: .the-loop}\nservice: {port: %d}\nrouting: {tmux: {socketName: %s}}\n", def, demo.socket)
		if err := os.WriteFile(demo.cfg, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			demo.run("stop")
			if pid := demo.servicePID(); pid != 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		demo.must(0, "start")
	}
	e := newEnv(t)
	e.config(oneSession)
	const want = "error: no standing session 'nobody' — it is neither declared in standingSessions.sessions nor recorded; `the-loop standing list` shows the ones there are\n"
	if r := e.run("standing", "start", "nobody"); r.code != 1 || r.stderr != want {
		t.Errorf("standing start nobody beside the demo: %s", r)
	}
	if r := e.must(0, "standing", "start"); !strings.HasPrefix(r.stdout, "supervisor  started") {
		t.Errorf("standing start beside the demo: %s", r)
	}
	if r := e.must(0, "start"); strings.Contains(r.stdout, "another the-loop service") {
		t.Errorf("start beside the demo: %s", r)
	}
	e.must(0, "stop")
}
