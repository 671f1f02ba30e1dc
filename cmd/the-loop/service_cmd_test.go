package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/internal/bootunit"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// serviceWorld is a home, a work dir with a config naming three token
// variables, and a bin dir holding a fake systemctl that records its argv.
type serviceWorld struct {
	t                  *testing.T
	home, dir, bin     string
	argvLog, pathValue string
}

func newServiceWorld(t *testing.T) *serviceWorld {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the systemd unit is installed on Linux only")
	}
	root := t.TempDir()
	w := &serviceWorld{t: t, home: filepath.Join(root, "home"), dir: filepath.Join(root, "work"), bin: filepath.Join(root, "bin")}
	for _, d := range []string{w.home, filepath.Join(w.dir, ".the-loop"), w.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("state: {root: .the-loop}\nservice: {port: %d, tokenEnv: TEST_SERVICE_TOKEN}\n", freePort(t)) +
		"channels: {slack: {botTokenEnv: TEST_BOT_TOKEN, appTokenEnv: TEST_APP_TOKEN}}\n"
	if err := os.WriteFile(filepath.Join(w.dir, ".the-loop", "cli-config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	refuseDefaultPort(t, filepath.Join(w.dir, ".the-loop", "cli-config.yaml"))
	w.argvLog = filepath.Join(root, "systemctl.argv")
	fake := "#!/bin/sh\necho \"$*\" >> '" + w.argvLog + "'\n"
	if err := os.WriteFile(filepath.Join(w.bin, "systemctl"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	w.pathValue = w.bin + ":/usr/bin:/bin"
	return w
}

// run runs the built the-loop in the work dir (./.the-loop/cli-config.yaml
// is found there) with the world's HOME and PATH and a secret in one of
// the token variables.
func (w *serviceWorld) run(args ...string) (stdout, stderr string, code int) {
	w.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = w.dir
	cmd.Env = []string{"HOME=" + w.home, "PATH=" + w.pathValue, "TEST_BOT_TOKEN=xoxb-secret-value", "TEST_APP_TOKEN=xapp-$ecret"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (w *serviceWorld) unitPath() string {
	name := "the-loop-" + bootunit.ID(filepath.Join(w.dir, ".the-loop")) + ".service"
	return filepath.Join(w.home, ".config", "systemd", "user", name)
}

// TestServiceInstall_PrintMatchesGolden: --print writes the unit to stdout
// (the golden file, with this run's paths put in) and writes nothing.
func TestServiceInstall_PrintMatchesGolden(t *testing.T) {
	w := newServiceWorld(t)
	out, errOut, code := w.run("service", "install", "--print")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	generic := strings.NewReplacer(binary, "@BINARY@", w.dir, "@WORKDIR@", w.bin, "@BIN@",
		bootunit.ID(filepath.Join(w.dir, ".the-loop")), "@ID@").Replace(out)
	path := filepath.Join("testdata", "service-install-print.golden")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(generic), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if generic != string(want) {
		t.Fatalf("service install --print differs from %s (-update rewrites it):\n--- got\n%s\n--- want\n%s", path, generic, want)
	}
	if !strings.Contains(errOut, "warning: the binary "+binary+" is under the temporary directory") {
		t.Fatalf("no warning about a binary under the temp dir (the test's is):\n%s", errOut)
	}
	if !strings.Contains(errOut, w.unitPath()) {
		t.Fatalf("stderr does not say where the unit goes (%s):\n%s", w.unitPath(), errOut)
	}
	if strings.Contains(out+errOut, "secret") {
		t.Fatalf("a token value was printed:\n%s\n%s", out, errOut)
	}
	for _, p := range []string{w.unitPath(), filepath.Join(w.dir, ".the-loop", "local", "service.env")} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("--print wrote %s", p)
		}
	}
}

// TestServiceInstallUninstall: install writes the unit and a 0600 env file
// with the set token values (never printed) and prints the enabling
// commands, running no systemctl; uninstall disables the unit through
// systemctl, removes both files and reloads.
func TestServiceInstallUninstall(t *testing.T) {
	w := newServiceWorld(t)
	printed, _, _ := w.run("service", "install", "--print")
	out, errOut, code := w.run("service", "install")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	unit, err := os.ReadFile(w.unitPath())
	if err != nil {
		t.Fatal(err)
	}
	if string(unit) != printed {
		t.Fatalf("the written unit differs from --print:\n%s\n---\n%s", unit, printed)
	}
	name := filepath.Base(w.unitPath())
	for _, want := range []string{
		"wrote " + w.unitPath(),
		"systemctl --user daemon-reload && systemctl --user enable --now " + name,
		"loginctl enable-linger $USER",
		"not set now, so left out: TEST_SERVICE_TOKEN",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, "secret") {
		t.Fatalf("a token value was printed:\n%s\n%s", out, errOut)
	}
	envPath := filepath.Join(w.dir, ".the-loop", "local", "service.env")
	st, err := os.Stat(envPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %o, want 0600", envPath, st.Mode().Perm())
	}
	envData, _ := os.ReadFile(envPath)
	for _, want := range []string{`TEST_BOT_TOKEN="xoxb-secret-value"`, `TEST_APP_TOKEN="xapp-\$ecret"`, "# TEST_SERVICE_TOKEN was not set"} {
		if !strings.Contains(string(envData), want) {
			t.Errorf("env file lacks %q:\n%s", want, envData)
		}
	}
	if _, err := os.Stat(w.argvLog); err == nil {
		t.Fatal("install ran systemctl; it should only print the commands")
	}

	out, errOut, code = w.run("service", "uninstall")
	if code != 0 {
		t.Fatalf("uninstall exit %d: %s", code, errOut)
	}
	argv, err := os.ReadFile(w.argvLog)
	if err != nil {
		t.Fatal(err)
	}
	if want := "--user disable --now " + name + "\n--user daemon-reload\n"; string(argv) != want {
		t.Fatalf("systemctl ran with %q, want %q", argv, want)
	}
	for _, p := range []string{w.unitPath(), envPath} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("uninstall left %s", p)
		}
	}
	if !strings.Contains(out, "removed "+w.unitPath()) {
		t.Fatalf("uninstall output: %s", out)
	}

	out, _, code = w.run("service", "uninstall")
	if code != 0 || !strings.Contains(out, "nothing to remove") {
		t.Fatalf("a second uninstall: exit %d, %s", code, out)
	}
}

// TestServiceUninstall_WithoutSystemctl: with no systemctl on PATH the
// files are still removed, and the skipped command is named.
func TestServiceUninstall_WithoutSystemctl(t *testing.T) {
	w := newServiceWorld(t)
	if _, errOut, code := w.run("service", "install"); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	if err := os.Remove(filepath.Join(w.bin, "systemctl")); err != nil {
		t.Fatal(err)
	}
	w.pathValue = w.bin // no /usr/bin: a real systemctl there is not found either
	_, errOut, code := w.run("service", "uninstall")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "systemctl is not on PATH") {
		t.Fatalf("stderr: %s", errOut)
	}
	if _, err := os.Stat(w.unitPath()); err == nil {
		t.Fatal("the unit is still there")
	}
}
