package main

import (
	"fmt"

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

// Run validates, printing every problem with its dotted key path.
func (c *ConfigValidateCmd) Run(a *App) error {
	path := c.File
	if path == "" {
		path = a.ConfigPath
	}
	if path == "" {
		fmt.Fprintln(a.Stdout, "no CLI config found; the defaults apply")
		return nil
	}
	problems := config.ValidateFile(path)
	if len(problems) == 0 {
		fmt.Fprintf(a.Stdout, "%s: valid\n", path)
		return nil
	}
	for _, p := range problems {
		fmt.Fprintf(a.Stderr, "%s: %s\n", termSafe(path), termLines(loop.ErrorMessage(p)))
	}
	return &exitError{code: 2}
}

// ConfigSchemaCmd is `the-loop config schema`.
type ConfigSchemaCmd struct{}

// Run prints the schema.
func (c *ConfigSchemaCmd) Run(a *App) error {
	_, err := a.Stdout.Write(config.Schema())
	return err
}
