// Package bootunit renders the files that start the-loop's service when
// its user logs in or the machine boots: a systemd user unit on Linux and a
// launchd agent on macOS, plus the 0600 file that hands both the variables
// the config's *TokenEnv keys name. Rendering is pure (the operating system
// is a parameter), so both forms are golden-file tested on any machine;
// `the-loop service install` writes what Render returns.
package bootunit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// Spec is what a unit is rendered from. Every path is absolute.
type Spec struct {
	GOOS       string // "linux" (systemd) or "darwin" (launchd)
	Home       string // the user's home directory
	ConfigHome string // $XDG_CONFIG_HOME (linux; "" means Home/.config)
	UID        int    // the user's uid (darwin: the gui/<uid> domain uninstall boots out of)
	Binary     string // the the-loop binary
	Config     string // the CLI config `serve` is given with -c
	StateDir   string // the config's state.root, resolved: it names the unit (see ID)
	WorkDir    string // the working directory at install: relative config paths resolve as they did then
	Path       string // PATH at install, the service's PATH
	EnvFile    string // the env file with the token variables ("" when the config names none)
}

// Unit is a rendered unit: its name, where it goes, its text, and the
// commands that enable and disable it.
type Unit struct {
	// Name is the unit's name: the-loop-<id>.service (systemd) or the
	// launchd label dev.the-loop.<id>.
	Name string
	// Path is where the file goes: <config home>/systemd/user/<Name> or
	// ~/Library/LaunchAgents/<Name>.plist.
	Path string
	// Content is the file's text.
	Content []byte
	// Enable are the shell commands the operator runs to enable it (printed,
	// never run by the-loop).
	Enable []string
	// Disable are the argvs uninstall runs, when the tool exists, before it
	// removes the file.
	Disable [][]string
	// Reload is the argv uninstall runs after removing the file (nil: none).
	Reload []string
}

// ID is the 8-hex-digit name of the service whose state root is stateDir:
// the first 4 bytes of the SHA-256 of the resolved path. The state root is
// the service's identity (its store, pid file and log live there), so the
// name stays the same for every install from any config that shares it,
// and two state roots get two units.
func ID(stateDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(stateDir)))
	return hex.EncodeToString(sum[:4])
}

// Render renders s's unit for s.GOOS; an unknown system, a relative path
// or a value holding a line break is refused naming the field.
func Render(s Spec) (Unit, error) {
	if err := s.check(); err != nil {
		return Unit{}, err
	}
	switch s.GOOS {
	case "linux":
		return systemd(s), nil
	case "darwin":
		return launchd(s), nil
	}
	return Unit{}, loop.Invalid("the-loop service install supports linux (systemd) and darwin (launchd), not %q: start `the-loop serve` with this system's service manager by hand", s.GOOS)
}

func (s Spec) check() error {
	paths := []struct{ name, v string }{
		{"home directory", s.Home}, {"binary", s.Binary}, {"config", s.Config},
		{"state.root", s.StateDir}, {"working directory", s.WorkDir},
	}
	if s.ConfigHome != "" {
		paths = append(paths, struct{ name, v string }{"XDG_CONFIG_HOME", s.ConfigHome})
	}
	if s.EnvFile != "" {
		paths = append(paths, struct{ name, v string }{"env file", s.EnvFile})
	}
	for _, p := range paths {
		if !filepath.IsAbs(p.v) {
			return loop.Invalid("the service unit's %s %q is not an absolute path: give an absolute one", p.name, p.v)
		}
	}
	for _, p := range append(paths, struct{ name, v string }{"PATH", s.Path}) {
		if strings.ContainsAny(p.v, "\n\r\x00") {
			return loop.Invalid("the service unit's %s %q holds a line break or NUL, which a unit file cannot carry: use a path without one", p.name, p.v)
		}
	}
	return nil
}

// serveArgv is the command the unit runs.
func (s Spec) serveArgv() []string { return []string{s.Binary, "-c", s.Config, "serve"} }

// systemd renders a user unit. KillMode=process: stopping or restarting
// the unit ends the service only; the tmux server and the agents it runs
// (forked by the service, so in the unit's cgroup) outlive it, as they
// outlive a `serve` stopped by hand.
func systemd(s Spec) Unit {
	id := ID(s.StateDir)
	name := "the-loop-" + id + ".service"
	dir := s.ConfigHome
	if dir == "" {
		dir = filepath.Join(s.Home, ".config")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# the-loop's service for the state root %s\n", s.StateDir)
	b.WriteString("# Written by `the-loop service install`; `the-loop service uninstall` removes it.\n")
	b.WriteString("[Unit]\n")
	fmt.Fprintf(&b, "Description=the-loop service %s\n", id)
	b.WriteString("\n[Service]\nType=simple\n")
	fmt.Fprintf(&b, "WorkingDirectory=%s\n", systemdPlain(s.WorkDir))
	var args []string
	for _, a := range s.serveArgv() {
		args = append(args, systemdQuote(a, true))
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", strings.Join(args, " "))
	fmt.Fprintf(&b, "Environment=%s\n", systemdQuote("PATH="+s.Path, false))
	if s.EnvFile != "" {
		fmt.Fprintf(&b, "EnvironmentFile=-%s\n", systemdPlain(s.EnvFile))
	}
	b.WriteString("Restart=on-failure\nRestartSec=2\n")
	b.WriteString("# Stopping the unit ends the service only: the tmux server and its agents keep running.\n")
	b.WriteString("KillMode=process\n")
	b.WriteString("\n[Install]\nWantedBy=default.target\n")
	return Unit{
		Name:    name,
		Path:    filepath.Join(dir, "systemd", "user", name),
		Content: b.Bytes(),
		Enable: []string{
			"systemctl --user daemon-reload && systemctl --user enable --now " + name,
			"loginctl enable-linger $USER",
		},
		Disable: [][]string{{"systemctl", "--user", "disable", "--now", name}},
		Reload:  []string{"systemctl", "--user", "daemon-reload"},
	}
}

// systemdQuote double-quotes v for a unit setting: backslash and quote
// escaped, % doubled (specifiers), and in a command line $ doubled too
// (variable expansion; Environment= does not expand $).
func systemdQuote(v string, command bool) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `%`, `%%`)
	if command {
		r = strings.NewReplacer(`\`, `\\`, `"`, `\"`, `%`, `%%`, `$`, `$$`)
	}
	return `"` + r.Replace(v) + `"`
}

// systemdPlain escapes the specifier character of a path setting.
func systemdPlain(v string) string { return strings.ReplaceAll(v, "%", "%%") }

// launchdShim runs the command after it, exporting the variables of the
// env file named by $0 when it can be read (as systemd's
// EnvironmentFile=-).
const launchdShim = `if [ -r "$0" ]; then set -a; . "$0"; set +a; fi; exec "$@"`

// launchd renders a launchd agent: started at load (login), started again
// when it exits unsuccessfully, its output in the state root's logs.
func launchd(s Spec) Unit {
	label := "dev.the-loop." + ID(s.StateDir)
	path := filepath.Join(s.Home, "Library", "LaunchAgents", label+".plist")
	argv := s.serveArgv()
	if s.EnvFile != "" {
		argv = append([]string{"/bin/sh", "-c", launchdShim, s.EnvFile}, argv...)
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<!-- the-loop's service. Written by `the-loop service install`; `the-loop service uninstall` removes it. -->\n")
	b.WriteString(`<plist version="1.0">` + "\n<dict>\n")
	key := func(k string) { fmt.Fprintf(&b, "\t<key>%s</key>\n", k) }
	str := func(indent, v string) { fmt.Fprintf(&b, "%s<string>%s</string>\n", indent, xmlText(v)) }
	key("Label")
	str("\t", label)
	key("ProgramArguments")
	b.WriteString("\t<array>\n")
	for _, a := range argv {
		str("\t\t", a)
	}
	b.WriteString("\t</array>\n")
	key("WorkingDirectory")
	str("\t", s.WorkDir)
	key("EnvironmentVariables")
	b.WriteString("\t<dict>\n\t\t<key>PATH</key>\n")
	str("\t\t", s.Path)
	b.WriteString("\t</dict>\n")
	key("RunAtLoad")
	b.WriteString("\t<true/>\n")
	key("KeepAlive")
	b.WriteString("\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n")
	b.WriteString("\t<!-- Ending the service leaves the tmux server and its agents running. -->\n")
	key("AbandonProcessGroup")
	b.WriteString("\t<true/>\n")
	key("StandardOutPath")
	str("\t", filepath.Join(s.StateDir, "logs", "launchd.out.log"))
	key("StandardErrorPath")
	str("\t", filepath.Join(s.StateDir, "logs", "launchd.err.log"))
	b.WriteString("</dict>\n</plist>\n")
	return Unit{
		Name:    label,
		Path:    path,
		Content: b.Bytes(),
		Enable:  []string{"launchctl bootstrap gui/$(id -u) " + shellQuote(path)},
		Disable: [][]string{{"launchctl", "bootout", "gui/" + strconv.Itoa(s.UID), path}},
	}
}

// xmlText escapes v for XML character data (&, < and >; quotes need none).
func xmlText(v string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(v)
}

// shellQuote quotes v for a POSIX shell when it needs it.
func shellQuote(v string) string {
	if v != "" && strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// EnvFile renders the env file of names: NAME="value" for each set
// variable (lookup, e.g. os.LookupEnv), a comment for each unset one. The
// format is read by both systemd's EnvironmentFile= and a POSIX shell's
// `.`: double quotes, with \ " $ and ` escaped. It returns the names it
// could not fill; a value holding a line break is refused naming the
// variable (the value itself is never quoted in an error).
func EnvFile(names []string, lookup func(string) (string, bool)) (content []byte, unset []string, err error) {
	var b bytes.Buffer
	b.WriteString("# the-loop's service: the variables the CLI config's *TokenEnv keys name.\n")
	b.WriteString("# Written by `the-loop service install` from its environment (mode 0600); edit a value, then restart the service.\n")
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`")
	for _, n := range names {
		v, ok := lookup(n)
		if !ok {
			unset = append(unset, n)
			fmt.Fprintf(&b, "# %s was not set at install: add %s=\"…\" here.\n", n, n)
			continue
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return nil, nil, loop.Invalid("the value of %s holds a line break or NUL, which the service's env file cannot carry: set %s to a one-line value", n, n)
		}
		fmt.Fprintf(&b, "%s=\"%s\"\n", n, esc.Replace(v))
	}
	return b.Bytes(), unset, nil
}
