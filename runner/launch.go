package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
)

// launchSpec is the JSON a launch file holds.
type launchSpec struct {
	Argv []string `json:"argv"`
	Cwd  string   `json:"cwd,omitempty"`
	// Env, with ExplicitEnv, is the harness's whole environment (plus the
	// pane's terminal variables, paneEnv).
	Env         []string `json:"env,omitempty"`
	ExplicitEnv bool     `json:"explicitEnv,omitempty"`
}

// paneEnv are the variables tmux sets for a pane's process that an
// explicit environment keeps from the pane (they describe its terminal).
func paneEnv() []string {
	return []string{"TERM", "TMUX", "TMUX_PANE", "COLORTERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION"}
}

// execEnv is the environment ExecFromFile execs with: the pane's own
// (environ) unless the spec is explicit, else spec.Env with the pane's
// terminal variables taken from environ.
func execEnv(spec launchSpec, environ []string) []string {
	if !spec.ExplicitEnv {
		return environ
	}
	keep := paneEnv()
	var out []string
	for _, kv := range spec.Env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(keep, k) {
			out = append(out, kv)
		}
	}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(keep, k) {
			out = append(out, kv)
		}
	}
	return out
}

// writeLaunchFile writes argv and cwd to a new 0600 file in dir (a private
// directory it makes when missing; "" is the temp dir).
func writeLaunchFile(dir string, spec loop.SpawnSpec) (string, error) {
	data, err := json.Marshal(launchSpec{Argv: spec.Argv, Cwd: spec.Cwd, Env: spec.Env, ExplicitEnv: spec.Env != nil})
	if err != nil {
		return "", err
	}
	if dir != "" {
		if err := ensurePrivateDir(dir); err != nil {
			return "", fmt.Errorf("could not make the launch file directory %s: %w", dir, err)
		}
	}
	f, err := os.CreateTemp(dir, "the-loop-exec-*.json")
	if err != nil {
		return "", fmt.Errorf("could not write the launch file: %w", err)
	}
	if err = f.Chmod(0o600); err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("could not write the launch file: %w", err)
	}
	return f.Name(), nil
}

// ExecFromFile replaces the current process with the argv stored in the
// launch file at path (written by the runner for a harness argv too long
// for a tmux command line, decisions D14b). It reads the file, removes it, changes to
// its cwd, looks argv[0] up on PATH and execs it with the current
// environment — or, when the runner gave the spawn an explicit one, with
// exactly that (plus the pane's terminal variables), whatever the tmux
// server's global environment holds. It returns only on failure.
func ExecFromFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("could not read the launch file: %w", err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("could not remove the launch file: %w", err)
	}
	var spec launchSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("launch file %s is not valid: %w", path, err)
	}
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return errors.New("launch file " + path + " holds an empty argv")
	}
	if spec.Cwd != "" {
		if err := os.Chdir(spec.Cwd); err != nil {
			return fmt.Errorf("could not change to %s: %w", spec.Cwd, err)
		}
	}
	env := execEnv(spec, os.Environ())
	bin, err := lookPath(spec.Argv[0], env)
	if err != nil {
		return fmt.Errorf("could not find %s: %w", spec.Argv[0], err)
	}
	return syscall.Exec(bin, spec.Argv, env)
}

// lookPath finds argv0 on the PATH env holds (a name with a slash as is).
func lookPath(argv0 string, env []string) (string, error) {
	if strings.Contains(argv0, "/") {
		return exec.LookPath(argv0)
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if p, err := exec.LookPath(filepath.Join(dir, argv0)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on PATH (%s)", argv0, path)
}
