package engine

import (
	"os"
	"path/filepath"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
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
