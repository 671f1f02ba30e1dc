package main

import (
	"os"
	"path/filepath"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
)

// The service is a program of its own (decisions D37): the-loopd, built
// from this package with the service (the default build), installed
// beside the-loop, which is built without it (-tags loop_omit_service) so
// that `list`, `status` and every other verb link none of the service's
// libraries (echo, the MCP SDK, slack-go, Prometheus). The CLI runs the
// service's commands by handing them over: the-loopd runs in this
// process's place with the same arguments, so `the-loop serve` in a unit
// an older the-loop wrote, and an agent's `the-loop mcp`, keep working.

// serviceProgramName is the service's program, looked for in the
// directory of the-loop's own executable.
const serviceProgramName = "the-loopd"

// serviceVerbs are the commands the service's program runs: a CLI built
// without the service hands them over.
var serviceVerbs = []string{"serve", "mcp", "channels", "internal-announce"}

// serviceVerb reports whether kong's command is one of serviceVerbs.
func serviceVerb(cmd string) bool { return oneOf(cmd, serviceVerbs) }

// serviceProgram is the program that runs the service: this executable
// when it is built with the service, else the-loopd beside it.
func serviceProgram() (string, error) {
	self, err := os.Executable()
	if err != nil || serviceBuiltIn {
		return self, err
	}
	p := filepath.Join(filepath.Dir(self), serviceProgramName)
	if !executable(p) {
		return "", loop.Errorf(loop.EINTERNAL, "the service's program %s is not beside %s (or is not executable): the-loop runs the service, the MCP bridge and the Slack channel through it; install the-loop and the-loopd from the same release (`just build` builds both)", p, self)
	}
	return p, nil
}

// cliProgram is the program a spawn's pane, hooks and MCP bridge run
// (internal-exec, hook, mcp): the-loop beside this executable when this is
// the-loopd, so an agent's every event starts the small CLI; else this
// executable.
func cliProgram() string {
	self, _ := os.Executable()
	if filepath.Base(self) != serviceProgramName {
		return self
	}
	if cli := filepath.Join(filepath.Dir(self), "the-loop"); executable(cli) {
		return cli
	}
	return self
}

// handOver runs the service's program in this process's place with args
// (this process's own): it returns only when it could not.
func handOver(args []string) error {
	p, err := serviceProgram()
	if err != nil {
		return err
	}
	if err := syscall.Exec(p, append([]string{p}, args...), os.Environ()); err != nil {
		return loop.Errorf(loop.EINTERNAL, "could not run the service's program %s: %v", p, err)
	}
	return nil
}

// InternalAnnounceCmd is `the-loopd internal-announce`: one Slack
// announcement (a loop.Announcement as JSON on stdin), its thread's ts
// printed — what a CLI without the service posts through when it starts
// a Slack-enabled session itself.
type InternalAnnounceCmd struct{}
