package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/config"
)

// fakeSystemd puts systemctl (answering), systemd-run (recording its argv
// to systemd-run.argv, then running what follows `--`) and loginctl
// (Linger=no) in a directory and returns it.
func fakeSystemd(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	scripts := map[string]string{
		"systemctl": "#!/bin/sh\necho \"$@\" >> " + filepath.Join(dir, "systemctl.argv") + "\nexit 0\n",
		"systemd-run": "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + filepath.Join(dir, "systemd-run.argv") + "\n" +
			"while [ \"$1\" != \"--\" ]; do shift; done\nshift\nexec \"$@\"\n",
		"loginctl": "#!/bin/sh\necho \"$@\" >> " + filepath.Join(dir, "loginctl.argv") + "\necho Linger=no\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestScope_WantedOnlyUnderAUserManagerOutsideAUnitWithASocket(t *testing.T) {
	bin := fakeSystemd(t)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("INVOCATION_ID", "")
	cfg := config.Default()
	cfg.Routing.Tmux.SocketName = "the-loop"
	if insideUnit() {
		t.Skip("this test process runs inside a systemd service")
	}
	if !wantScope(cfg) {
		t.Fatal("no scope under a user manager that answers")
	}
	if got, _ := os.ReadFile(filepath.Join(bin, "systemctl.argv")); !strings.Contains(string(got), "--user show-environment") {
		t.Fatalf("systemctl asked %q", got)
	}
	t.Setenv("INVOCATION_ID", "0123456789abcdef")
	if wantScope(cfg) {
		t.Fatal("a scope from inside a unit")
	}
	t.Setenv("INVOCATION_ID", "")
	cfg.Routing.Tmux.SocketName = ""
	if wantScope(cfg) {
		t.Fatal("a scope for the user's default tmux server")
	}
	cfg.Routing.Tmux.SocketName = "the-loop"
	t.Setenv("PATH", t.TempDir()) // no systemctl, no private socket
	if wantScope(cfg) {
		t.Fatal("a scope without a user manager")
	}
	// The private socket alone says a manager runs.
	rt := t.TempDir()
	if err := os.MkdirAll(filepath.Join(rt, "systemd"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rt, "systemd", "private"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", rt)
	if !systemdUser() {
		t.Fatal("the private socket was not taken for a user manager")
	}
	argv := scoped(cfg, []string{"/bin/the-loop", "serve", "--no-autostart"})
	if strings.Join(argv[:4], " ") != "systemd-run --user --scope --quiet" || strings.Join(argv[len(argv)-4:], " ") != "-- /bin/the-loop serve --no-autostart" {
		t.Fatalf("scoped argv %q", argv)
	}
}

func TestLingerWarning_OnlyWithKillUserProcessesAndNoLinger(t *testing.T) {
	bin := fakeSystemd(t)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("USER", "alice")
	dir := t.TempDir()
	on, off := filepath.Join(dir, "on.conf"), filepath.Join(dir, "off.conf")
	if err := os.WriteFile(on, []byte("[Login]\n#KillUserProcesses=no\nKillUserProcesses=yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(off, []byte("[Login]\nKillUserProcesses=no\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := lingerWarning([]string{on})
	if !strings.Contains(w, "loginctl enable-linger alice") || !strings.Contains(w, "KillUserProcesses=yes") {
		t.Fatalf("warning %q", w)
	}
	if got, _ := os.ReadFile(filepath.Join(bin, "loginctl.argv")); strings.TrimSpace(string(got)) != "show-user alice -p Linger" {
		t.Fatalf("loginctl asked %q", got)
	}
	if w := lingerWarning([]string{on, off}); w != "" {
		t.Fatalf("a later drop-in turning it off still warns: %q", w)
	}
	if w := lingerWarning([]string{filepath.Join(dir, "missing.conf")}); w != "" {
		t.Fatalf("no conf (the default, off) warns: %q", w)
	}
	if err := os.WriteFile(filepath.Join(bin, "loginctl"), []byte("#!/bin/sh\necho Linger=yes\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if w := lingerWarning([]string{on}); w != "" {
		t.Fatalf("linger on still warns: %q", w)
	}
}

// TestStart_PutsTheServiceInAScopeUnderAUserManager: `the-loop start`
// under a (fake) systemd user manager runs the service through
// systemd-run --user --scope, and its output stays as without one.
func TestStart_PutsTheServiceInAScopeUnderAUserManager(t *testing.T) {
	e := supervisedEnv(t, "", "")
	bin := fakeSystemd(t)
	e.path = bin + string(os.PathListSeparator) + e.path
	e.extraEnv = append(e.extraEnv, "XDG_RUNTIME_DIR="+t.TempDir())
	if os.Getenv("INVOCATION_ID") != "" || insideUnit() {
		t.Skip("this test process runs inside a systemd unit")
	}
	r := e.must(0, "start")
	if !regexpMatch(`(?m)^service  started +\[enabled\]`, r.stdout) || !regexpMatch(`(?m)^supervisor +started `, r.stdout) {
		t.Fatalf("start: %s", r)
	}
	data, err := os.ReadFile(filepath.Join(bin, "systemd-run.argv"))
	if err != nil {
		t.Fatalf("systemd-run was not run: %v\n%s", err, r)
	}
	argv := strings.Split(strings.TrimSpace(string(data)), "\n")
	if strings.Join(argv[:3], " ") != "--user --scope --quiet" || !strings.Contains(strings.Join(argv, " "), "-- "+daemonBinary()+" -c "+e.cfg+" serve --no-autostart") {
		t.Fatalf("systemd-run argv %q", argv)
	}
	waitFor(t, "the row", func() bool { return e.rows()["supervisor"].Running })
}
