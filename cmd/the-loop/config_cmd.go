package main

import (
	"fmt"
	"os"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// ConfigCmd groups `the-loop config …`.
type ConfigCmd struct {
	Validate ConfigValidateCmd `cmd:"" help:"Check a CLI config against the schema and the standingSessions rules."`
	Schema   ConfigSchemaCmd   `cmd:"" help:"Print the embedded JSON Schema of the CLI config."`
}

// ConfigValidateCmd is `the-loop config validate [FILE]`.
type ConfigValidateCmd struct {
	File string `arg:"" optional:"" help:"The file (default: the config the-loop would load)." type:"path"`
}

// Run validates, printing every problem with its dotted key path, then
// checks what `start` would hit (config.Preflight): a cwd or promptFile
// that does not exist is a problem too, and so is a session's harness
// binary missing where the service will look (harnessProblems: the
// routing.harnessBinaries path, else this PATH, which start passes on); standingSessions without
// `enabled: true` and every key this the-loop ignores are warnings, which
// leave the exit status 0.
func (c *ConfigValidateCmd) Run(a *App) error {
	path := c.File
	if path == "" {
		path = a.ConfigPath
	}
	if path == "" {
		fmt.Fprintln(a.Stdout, "no CLI config found; the defaults apply")
		return nil
	}
	var problems []string
	for _, p := range config.ValidateFile(path) {
		problems = append(problems, loop.ErrorMessage(p))
	}
	cfg := config.LoadTolerant(path)
	errs, warnings := cfg.Preflight()
	problems = append(problems, errs...)
	problems = append(problems, harnessProblems(cfg, os.Getenv("PATH"), false)...)
	for _, p := range problems {
		fmt.Fprintf(a.Stderr, "%s: %s\n", termSafe(path), termLines(p))
	}
	for _, w := range warnings {
		fmt.Fprintf(a.Stderr, "%s: warning: %s\n", termSafe(path), termLines(w))
	}
	if len(problems) > 0 {
		return &exitError{code: 2}
	}
	if len(warnings) > 0 {
		fmt.Fprintf(a.Stdout, "%s: valid (%d warnings)\n", path, len(warnings))
		return nil
	}
	fmt.Fprintf(a.Stdout, "%s: valid\n", path)
	return nil
}

// ConfigSchemaCmd is `the-loop config schema`.
type ConfigSchemaCmd struct{}

// Run prints the schema.
func (c *ConfigSchemaCmd) Run(a *App) error {
	_, err := a.Stdout.Write(config.Schema())
	return err
}
