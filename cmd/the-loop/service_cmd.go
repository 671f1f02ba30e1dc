package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/bootunit"
	"github.com/the-loop-dev/the-loop/internal/credential"
)

// ServiceCmd groups `the-loop service …`: starting the service at boot.
type ServiceCmd struct {
	Install   ServiceInstallCmd   `cmd:"" help:"Write the unit that runs 'the-loop serve' at login and boot: a systemd user unit (Linux) or a launchd agent (macOS)."`
	Uninstall ServiceUninstallCmd `cmd:"" help:"Disable and remove the unit 'service install' wrote."`
}

// ServiceInstallCmd is `the-loop service install [--print]`.
type ServiceInstallCmd struct {
	Print bool `help:"Print the unit on stdout instead of writing it; nothing is written."`
}

// ServiceUninstallCmd is `the-loop service uninstall [--print]`.
type ServiceUninstallCmd struct {
	Print bool `help:"Say what would be disabled and removed; nothing is changed."`
}

// serviceEnvPath is the 0600 file the unit reads the token variables from.
func serviceEnvPath(cfg *config.Config) string {
	return filepath.Join(cfg.StateDir(), "local", "service.env")
}

// bootSpec is the unit of this binary, config and environment, and the
// config it was made from.
func (a *App) bootSpec() (bootunit.Spec, *config.Config, error) {
	if a.ConfigPath == "" {
		return bootunit.Spec{}, nil, loop.Invalid("the-loop service needs a CLI config file for the unit to name, and none was found: pass -c PATH (or create ./.the-loop/%s)", config.FileName)
	}
	cfg, err := a.LoadConfig()
	if err != nil {
		return bootunit.Spec{}, nil, err
	}
	bin, err := os.Executable()
	if err != nil {
		return bootunit.Spec{}, nil, loop.Errorf(loop.EINTERNAL, "cannot find the path of the the-loop binary for the unit: %w", err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return bootunit.Spec{}, nil, loop.Errorf(loop.EINTERNAL, "cannot find the home directory the unit goes under ($HOME): %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return bootunit.Spec{}, nil, loop.Errorf(loop.EINTERNAL, "cannot read the working directory the unit runs in: %w", err)
	}
	s := bootunit.Spec{
		GOOS:     runtime.GOOS,
		Home:     home,
		UID:      os.Getuid(),
		Binary:   absOr(bin),
		Config:   absOr(a.ConfigPath),
		StateDir: cfg.StateDir(),
		WorkDir:  wd,
		Path:     os.Getenv("PATH"),
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		s.ConfigHome = x
	}
	if len(secretEnv(cfg)) > 0 {
		s.EnvFile = serviceEnvPath(cfg)
	}
	return s, cfg, nil
}

// absOr is p made absolute (p when the working directory cannot be read).
func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// resolved is p made absolute with its symlinks resolved (as far as it can).
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return absOr(p)
}

// Run writes (or prints) the unit and its env file, and says how to
// enable it; it never enables anything itself. The env file holds the
// values the token variables have now; they are never printed.
func (c *ServiceInstallCmd) Run(a *App) error {
	spec, cfg, err := a.bootSpec()
	if err != nil {
		return err
	}
	unit, err := bootunit.Render(spec)
	if err != nil {
		return err
	}
	names := secretEnv(cfg)
	if tmp, bin := resolved(os.TempDir()), resolved(spec.Binary); strings.HasPrefix(bin, tmp+string(filepath.Separator)) {
		fmt.Fprintf(a.Stderr, "warning: the binary %s is under the temporary directory %s (go run?), which may not survive a reboot: install a built the-loop (just build, go install) and run its `service install`\n", spec.Binary, tmp)
	}
	if c.Print {
		if _, err := a.Stdout.Write(unit.Content); err != nil {
			return err
		}
		fmt.Fprintf(a.Stderr, "# `the-loop service install` writes this to %s\n", unit.Path)
		if spec.EnvFile != "" {
			fmt.Fprintf(a.Stderr, "# and %s (mode 0600) with the values of %s from its environment\n", spec.EnvFile, strings.Join(names, ", "))
		}
		return nil
	}
	var unset []string
	if spec.EnvFile != "" {
		content, missing, err := bootunit.EnvFile(names, os.LookupEnv)
		if err != nil {
			return err
		}
		if err := writeFile(spec.EnvFile, content, 0o700, 0o600); err != nil {
			return err
		}
		unset = missing
	}
	if spec.GOOS == "darwin" { // launchd opens the log files but does not make their directory
		if err := os.MkdirAll(filepath.Join(spec.StateDir, "logs"), 0o700); err != nil {
			return loop.Errorf(loop.EINTERNAL, "cannot create the service's log directory %s: %w", filepath.Join(spec.StateDir, "logs"), err)
		}
	}
	if err := writeFile(unit.Path, unit.Content, 0o755, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "wrote %s\n", unit.Path)
	if spec.EnvFile != "" {
		fmt.Fprintf(a.Stdout, "wrote %s (mode 0600) with %s\n", spec.EnvFile, strings.Join(names, ", "))
		if len(unset) > 0 {
			fmt.Fprintf(a.Stdout, "  not set now, so left out: %s — add NAME=\"value\" lines there if the service needs them\n", strings.Join(unset, ", "))
		}
	}
	fmt.Fprintln(a.Stdout, "enable it with:")
	for _, cmd := range unit.Enable {
		fmt.Fprintf(a.Stdout, "  %s\n", cmd)
	}
	if spec.GOOS == "linux" {
		fmt.Fprintln(a.Stdout, "(the second keeps your user's services running when you are not logged in)")
	}
	return nil
}

// writeFile writes content to path with mode perm (also when the file
// existed with another mode), creating its directory with dirPerm.
func writeFile(path string, content []byte, dirPerm, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot create the directory of %s: %w", path, err)
	}
	if err := os.WriteFile(path, content, perm); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot write %s: %w", path, err)
	}
	if err := os.Chmod(path, perm); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot set the mode of %s to %o: %w", path, perm, err)
	}
	return nil
}

// Run disables the unit (systemctl --user disable --now, or launchctl
// bootout, when that tool is on PATH), removes it and its env file, and
// has systemd reload. A unit that is not there is nothing to do.
func (c *ServiceUninstallCmd) Run(a *App) error {
	spec, _, err := a.bootSpec()
	if err != nil {
		return err
	}
	unit, err := bootunit.Render(spec)
	if err != nil {
		return err
	}
	if _, err := os.Stat(unit.Path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(a.Stdout, "no unit at %s: nothing to remove\n", unit.Path)
		return nil
	}
	if c.Print {
		for _, argv := range unit.Disable {
			fmt.Fprintf(a.Stdout, "would run: %s\n", strings.Join(argv, " "))
		}
		fmt.Fprintf(a.Stdout, "would remove: %s\n", unit.Path)
		if spec.EnvFile != "" {
			fmt.Fprintf(a.Stdout, "would remove: %s\n", spec.EnvFile)
		}
		if unit.Reload != nil {
			fmt.Fprintf(a.Stdout, "would run: %s\n", strings.Join(unit.Reload, " "))
		}
		return nil
	}
	for _, argv := range unit.Disable {
		runTool(a, argv)
	}
	for _, p := range []string{unit.Path, spec.EnvFile} {
		if p == "" {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return loop.Errorf(loop.EINTERNAL, "cannot remove %s: %w", p, err)
		}
		if p == unit.Path {
			fmt.Fprintf(a.Stdout, "removed %s\n", p)
		}
	}
	if unit.Reload != nil {
		runTool(a, unit.Reload)
	}
	return nil
}

// runTool runs argv when its program is on PATH, saying so; a failure is
// reported and uninstall goes on (a unit never enabled cannot be disabled).
func runTool(a *App, argv []string) {
	if _, err := exec.LookPath(argv[0]); err != nil {
		fmt.Fprintf(a.Stderr, "%s is not on PATH: skipped `%s`\n", argv[0], strings.Join(argv, " "))
		return
	}
	var out bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(a.Stderr, "`%s` failed (%v): %s\n", strings.Join(argv, " "), err, strings.TrimSpace(out.String()))
		return
	}
	fmt.Fprintf(a.Stdout, "ran %s\n", strings.Join(argv, " "))
}

// secretEnv names the variables the config's *TokenEnv keys name: the
// service needs their values at boot. The SDK's and the agents' own
// variables are never written to the unit's env file.
func secretEnv(cfg *config.Config) []string {
	var names []string
	for _, n := range credential.SecretEnv(cfg) {
		if n != credential.OperatorTokenEnv && n != credential.AgentTokenEnv {
			names = append(names, n)
		}
	}
	return names
}
