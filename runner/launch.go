package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
)

// launchSpec is the JSON a launch file holds.
type launchSpec struct {
	Argv []string `json:"argv"`
	Cwd  string   `json:"cwd,omitempty"`
}

// writeLaunchFile writes argv and cwd to a new 0600 file in the temp dir.
func writeLaunchFile(spec loop.SpawnSpec) (string, error) {
	data, err := json.Marshal(launchSpec{Argv: spec.Argv, Cwd: spec.Cwd})
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "the-loop-exec-*.json")
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
// environment. It returns only on failure.
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
	bin, err := exec.LookPath(spec.Argv[0])
	if err != nil {
		return fmt.Errorf("could not find %s: %w", spec.Argv[0], err)
	}
	return syscall.Exec(bin, spec.Argv, os.Environ())
}
