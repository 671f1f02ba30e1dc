package loop

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// needTmux runs .ci/need-tmux with PATH set to bin only (bash run by its
// absolute path) and returns its output and exit status.
func needTmux(t *testing.T, bin string) (string, int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command(bash, ".ci/need-tmux")
	cmd.Env = []string{"PATH=" + bin}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// fake writes an executable /bin/sh script into dir.
func fake(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestNeedTmux_InstallsAsRootElseNamesTheCommand: the recipes' tmux step
// passes when tmux is there, installs it with apt-get as root, and
// otherwise exits 1 naming the exact command to run.
func TestNeedTmux_InstallsAsRootElseNamesTheCommand(t *testing.T) {
	t.Run("present", func(t *testing.T) {
		bin := t.TempDir()
		fake(t, bin, "tmux", "exit 0")
		if out, code := needTmux(t, bin); code != 0 {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("root with apt-get installs it", func(t *testing.T) {
		bin := t.TempDir()
		log := filepath.Join(t.TempDir(), "apt.log")
		fake(t, bin, "id", "echo 0")
		fake(t, bin, "apt-get", `echo "$*" >> '`+log+`'; case "$*" in *install*) printf '#!/bin/sh\n' > '`+bin+`/tmux'; /bin/chmod +x '`+bin+`/tmux';; esac`)
		out, code := needTmux(t, bin)
		argv, _ := os.ReadFile(log)
		if code != 0 || !strings.Contains(string(argv), "install -y -qq tmux") {
			t.Errorf("exit %d, apt-get ran %q: %s", code, argv, out)
		}
	})
	for _, tt := range []struct{ name, tool, want string }{
		{"not root with apt-get", "apt-get", "run `sudo apt-get install -y tmux`"},
		{"brew", "brew", "run `brew install tmux`"},
		{"dnf", "dnf", "run `sudo dnf install -y tmux`"},
		{"nothing known", "", "install it with this system's package manager"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			fake(t, bin, "id", "echo 1000")
			if tt.tool != "" {
				fake(t, bin, tt.tool, "echo should not run >&2; exit 3")
			}
			out, code := needTmux(t, bin)
			if code != 1 || !strings.Contains(out, tt.want) || strings.Contains(out, "should not run") {
				t.Errorf("exit %d, want 1 naming %q: %s", code, tt.want, out)
			}
		})
	}
}

// TestBarePath_HidesJustOnly: .ci/bare-path gives a PATH on which just is
// not found and everything else beside it still is.
func TestBarePath_HidesJustOnly(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	fake(t, a, "just", "exit 0")
	fake(t, a, "tool", "exit 0")
	fake(t, b, "other", "exit 0")
	cmd := exec.Command("bash", ".ci/bare-path", "just")
	cmd.Env = []string{"PATH=" + a + ":" + b + ":/usr/bin:/bin", "TMPDIR=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimSpace(string(out))
	dirs := strings.Split(path, ":")
	if len(dirs) != 4 || dirs[0] == a || dirs[1] != b {
		t.Fatalf("bare PATH %q: want a replaced, b kept", path)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "just")); err == nil {
		t.Error("just is still on the bare PATH")
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "tool")); err != nil {
		t.Errorf("tool beside just is gone: %v", err)
	}
}

// TestJustfile_NeverCallsJustByName: a recipe that runs just again uses
// {{just_executable()}}, so the recipes work through `npx -y rust-just`
// on a machine without just.
func TestJustfile_NeverCallsJustByName(t *testing.T) {
	data, err := os.ReadFile("justfile")
	if err != nil {
		t.Fatal(err)
	}
	byName := regexp.MustCompile(`(^|[\s;&|(@]|\x60)just\s`)
	for i, line := range strings.Split(string(data), "\n") {
		body := strings.TrimSpace(line)
		if !strings.HasPrefix(line, " ") || strings.HasPrefix(body, "#") {
			continue // not a recipe line, or a comment
		}
		if byName.MatchString(body) {
			t.Errorf("justfile:%d calls just by name: %s", i+1, body)
		}
	}
}
