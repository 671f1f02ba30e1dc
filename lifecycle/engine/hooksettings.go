package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
)

// hookTimeoutSeconds is the timeout an agent CLI gives our hook command;
// the command itself ends within 2 s.
const hookTimeoutSeconds = 10

// HookSettingsPath is where the settings file of the agent in target
// lives: <state.root>/local/hooks/<target>.json.
func HookSettingsPath(stateRoot, target string) string {
	return filepath.Join(stateRoot, "local", "hooks", target+".json")
}

// HookCommand is the shell command an agent CLI runs for every hook of the
// session ref, each part shell-quoted: the hook program beside the-loop's
// binary bin, `<dir>/the-loop-hook --state-root <dir> --session <ref>`
// (decisions D37: an agent's every event pays for no library of the
// service's), or, where bin has none beside it, `<bin> hook --state-root
// <dir> --session <ref>`.
func HookCommand(bin, stateRoot, ref string) string {
	args := " --state-root " + shellQuote(stateRoot) + " --session " + shellQuote(ref)
	if p := HookProgram(bin); p != "" {
		return shellQuote(p) + args
	}
	return shellQuote(bin) + " hook" + args
}

// DecisionCommand is the PermissionRequest hook of the standing session
// ref (decisions D35): the hook program beside bin waiting up to wait for
// the approval's decision, `<dir>/the-loop-hook --state-root <dir>
// --session <ref> --await-decision <seconds>`; "" for a work item's
// session, or where bin has no hook program beside it (the dialog is then
// the terminal's alone).
func DecisionCommand(bin, stateRoot, ref string, wait time.Duration) string {
	p := HookProgram(bin)
	if _, standing := loop.ParseStandingRef(ref); !standing || p == "" {
		return ""
	}
	return shellQuote(p) + " --state-root " + shellQuote(stateRoot) + " --session " + shellQuote(ref) +
		" --await-decision " + strconv.Itoa(int(wait/time.Second))
}

// RulesPath is where the approval rules of the agent in target live,
// beside its settings file: <state.root>/local/hooks/<target>.rules.json.
func RulesPath(stateRoot, target string) string {
	return filepath.Join(stateRoot, "local", "hooks", target+".rules.json")
}

// writeRules writes p's approval rules beside its settings file and
// returns the PreToolUse hook command that evaluates them for the session
// ref (the hook program with --rules, which tells the service what a
// rule decided), or removes an earlier spawn's file and returns ""
// when p has none or bin has no hook program beside it. The hook reads
// the file itself, so a deny holds with the service down.
func writeRules(bin, stateRoot, target, ref string, p *Plan) (string, error) {
	path := RulesPath(stateRoot, target)
	prog := HookProgram(bin)
	if len(p.Rules) == 0 || prog == "" {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return "", loop.Errorf(loop.EINTERNAL, "cannot remove the earlier approval rules %s: %w", path, err)
		}
		return "", nil
	}
	data, err := json.MarshalIndent(p.Rules, "", "  ")
	if err != nil {
		return "", loop.Internal("encoding the approval rules %s: %v", path, err)
	}
	if err := writeHookSettings(stateRoot, path, append(data, '\n')); err != nil {
		return "", err
	}
	return shellQuote(prog) + " --rules " + shellQuote(path) + " --state-root " + shellQuote(stateRoot) + " --session " + shellQuote(ref), nil
}

// approvalWait is how long a PermissionRequest hook waits for a decision
// (standingSessions.approvals.waitSeconds).
func approvalWait(cfg *config.Config) time.Duration { return cfg.Standing.ApprovalWait() }

// HookProgramName is the hook program's name (decisions D37), installed
// in the directory of the-loop's binary.
const HookProgramName = "the-loop-hook"

// HookProgram is the hook program beside bin: its path when an executable
// file of that name is in bin's directory, else "".
func HookProgram(bin string) string {
	if bin == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(bin), HookProgramName)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	return p
}

// shellQuote quotes s for sh: single quotes, a quote inside as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// HookEnvCommand is the shell command of the one hook entry a CLI whose
// hooks are declared in its user settings runs for every session (the
// Gemini CLI), which reads the state root and session from
// HookStateRootEnv and HookSessionEnv and answers {}: the hook program
// beside bin, `<dir>/the-loop-hook --from-env --json`, or, where bin has
// none beside it, `<bin> hook --from-env --json`.
func HookEnvCommand(bin string) string {
	if p := HookProgram(bin); p != "" {
		return shellQuote(p) + " --from-env --json"
	}
	return shellQuote(bin) + " hook --from-env --json"
}

// writeHookSettings writes a spawn's own hook settings file (the agent's
// --settings) at path under stateRoot, 0600: a file, or a directory above
// it up to the state root, that another user owns or others may write is
// refused (fileperm.CheckPrivatePath).
func writeHookSettings(stateRoot, path string, data []byte) error {
	if err := fileperm.CheckPrivatePath(stateRoot, path, "hook settings file (the agent's --settings)"); err != nil {
		return err
	}
	if err := fileperm.WritePrivate(path, data); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot write the hook settings %s (the agent's --settings): %w; check that state.root is writable", path, err)
	}
	return nil
}
