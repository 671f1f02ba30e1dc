package main

// One verdict on a config: what refuses `start` before anything runs (no
// service spawned, no session started), each refusal EINVALID (exit 2) but
// tmux missing (exit 1, as every start reports it).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/runner"
)

// startVerdict refuses a start that could only half happen: a
// standingSessions block with problems (EINVALID, as a problem outside it
// refuses the load), a harness binary a session start would start cannot
// find where the service will look (harnessProblems), and, with the
// service enabled, tmux missing from PATH (the service would start and
// spawn nothing). A running service of this state root spawns in its own
// environment, so neither tmux nor the binaries are then looked for here.
func startVerdict(cfg *config.Config) error {
	if cfg.StandingErr != nil {
		return loop.Invalid("refusing to start: the CLI config %s has problems in standingSessions, so nothing was started (no service, no session): %s; "+
			"fix them (`the-loop config validate` lists every one); `the-loop stop` and `the-loop status` still work",
			configName(cfg), loop.ErrorMessage(cfg.StandingErr))
	}
	if holderPID(pidPath(cfg)) != 0 {
		return nil // the running service spawns, with its own PATH
	}
	if cfg.Service.Enabled {
		if err := runner.New(runner.Options{}).Available(); err != nil {
			return loop.Errorf(loop.EINTERNAL, "%s; nothing was started (no service, no session)", err.Error())
		}
	}
	if ps := harnessProblems(cfg, os.Getenv("PATH"), true); len(ps) > 0 {
		return loop.Invalid("refusing to start: %s; nothing was started (no service, no session)", strings.Join(ps, "; "))
	}
	return nil
}

// configName is the config's path for a message, or "(no file)".
func configName(cfg *config.Config) string {
	if cfg.Path == "" {
		return "(no file)"
	}
	return cfg.Path
}

// harnessProblems names each standing session whose harness binary is not
// an executable file where the service will look: routing.harnessBinaries'
// path for the harness, else the directories of pathEnv (the PATH the CLI
// passes to the service it starts, and spawns with in-process). With
// autoOnly, only the sessions `the-loop start` starts (standingSessions
// enabled, autoStart) are checked; else every declared one. Each problem
// names the session, the harness, the binary and the remedy.
func harnessProblems(cfg *config.Config, pathEnv string, autoOnly bool) []string {
	if cfg.Standing == nil || (autoOnly && !cfg.Standing.Enabled) {
		return nil
	}
	reg := harness.NewRegistry(harness.ClaudeOptions{})
	var out []string
	for i, d := range cfg.Standing.Sessions {
		if autoOnly && !d.AutoStart {
			continue
		}
		adapter, err := reg.Lookup(d.Harness, d.Name)
		if err != nil {
			continue // an unknown harness is the parser's refusal
		}
		at := fmt.Sprintf("standingSessions.sessions[%d] (%s)", i, d.Name)
		key := "routing.harnessBinaries." + d.Harness
		if p := cfg.Routing.HarnessBinaries[d.Harness]; p != "" {
			if !executable(p) {
				out = append(out, fmt.Sprintf("%s: harness %s runs %s = '%s', which is not an executable file; install the %s CLI there, or fix %s",
					at, d.Harness, key, p, d.Harness, key))
			}
			continue
		}
		if lookPathIn(adapter.Binary(), pathEnv) == "" {
			out = append(out, fmt.Sprintf("%s: harness %s runs '%s', which is not on the PATH the service will search (PATH=%s); install it (%s), put it on that PATH, or set %s to its absolute path",
				at, d.Harness, adapter.Binary(), pathEnv, harnessInstall(d.Harness), key))
		}
	}
	return out
}

// lookPathIn is the first executable file named bin in the directories of
// pathEnv ("" when none), as exec.LookPath searches $PATH.
func lookPathIn(bin, pathEnv string) string {
	if strings.Contains(bin, "/") {
		if executable(bin) {
			return bin
		}
		return ""
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		if p := filepath.Join(dir, bin); executable(p) {
			return p
		}
	}
	return ""
}

// executable reports whether p is a file someone may execute.
func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
