package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/the-loop-dev/the-loop/config"
)

// logindConfs are where logind's KillUserProcesses is set (the drop-ins
// after the main file, later ones winning).
func logindConfs() []string {
	confs := []string{"/etc/systemd/logind.conf"}
	if more, err := filepath.Glob("/etc/systemd/logind.conf.d/*.conf"); err == nil {
		confs = append(confs, more...)
	}
	return confs
}

// systemdUser reports whether a systemd user manager runs for this user:
// its private socket under $XDG_RUNTIME_DIR, or `systemctl --user` answers.
func systemdUser() bool {
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "systemd", "private")); err == nil {
			return true
		}
	}
	if _, err := exec.LookPath("systemctl"); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "systemctl", "--user", "show-environment").Run() == nil
}

// insideUnit reports whether this process already runs in a systemd unit
// of its own ($INVOCATION_ID, or a cgroup that is a service): its children
// then outlive the login already, or belong to a unit that decides.
func insideUnit() bool {
	if os.Getenv("INVOCATION_ID") != "" {
		return true
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.HasSuffix(parts[2], ".service") {
			return true
		}
	}
	return false
}

// wantScope reports whether `the-loop start` puts the service and its tmux
// server in a systemd scope of their own, so the login's end does not end
// them: under a systemd user manager, not already inside a unit, with
// routing.tmux.socketName set (a private tmux server the service starts;
// the user's default server is not the-loop's to move).
func wantScope(cfg *config.Config) bool {
	return cfg.Routing.Tmux.SocketName != "" && !insideUnit() && systemdUser() && haveBinary("systemd-run")
}

func haveBinary(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// scoped is argv run in a transient scope of the user manager
// (systemd-run --user --scope).
func scoped(cfg *config.Config, argv []string) []string {
	return append([]string{"systemd-run", "--user", "--scope", "--quiet",
		"--description", "the-loop service (state root " + cfg.StateDir() + ")", "--"}, argv...)
}

// lingerWarning is the warning `start` gives once when logind ends a
// user's processes at logout (KillUserProcesses=yes in confs) and linger
// is off for the user (`loginctl show-user`): the service, even in its
// scope, would end with the last login. "" when there is nothing to say.
func lingerWarning(confs []string) string {
	if !killUserProcesses(confs) {
		return ""
	}
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && name == "" {
		name = u.Username
	}
	if name == "" || !haveBinary("loginctl") {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "loginctl", "show-user", name, "-p", "Linger").Output()
	if err != nil || strings.TrimSpace(string(out)) != "Linger=no" {
		return ""
	}
	return fmt.Sprintf("warning: logind ends your processes at logout (KillUserProcesses=yes) and linger is off for %[1]s: "+
		"the service and its standing sessions end with your last login; `loginctl enable-linger %[1]s` keeps them running", name)
}

// killUserProcesses reads KillUserProcesses from confs, the last setting
// winning (absent: no — what distributions ship).
func killUserProcesses(confs []string) bool {
	on := false
	for _, path := range confs {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "KillUserProcesses" {
				switch strings.ToLower(strings.TrimSpace(v)) {
				case "yes", "true", "on", "1":
					on = true
				default:
					on = false
				}
			}
		}
		f.Close()
	}
	return on
}
