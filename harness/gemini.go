package harness

import (
	"os"
	"path/filepath"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// GeminiVersion is the Gemini CLI release (npm @google/gemini-cli) whose
// contract this adapter was checked against (docs/harnesses.md).
const GeminiVersion = "0.61.0"

// GeminiSubmitDelay is the least pause between a bracketed paste and the
// carriage return that submits it for the Gemini CLI: for 40 ms after a
// paste from a terminal it does not trust (tmux's), it drops a submit key —
// a React state reset by a timer, so under load the window is longer; with
// the runner's default 50 ms the submit was lost (measured on 0.61.0, the
// text left in the input box), with 200 ms it was taken.
const GeminiSubmitDelay = 250 * time.Millisecond

// GeminiOptions configures the gemini adapter.
type GeminiOptions struct {
	// TrustEnabled is routing.harnessTrust.enabled: Prepare marks the cwd
	// a trusted folder (false: Prepare writes nothing).
	TrustEnabled bool
	// Env reads the environment (GEMINI_CLI_HOME); nil means os.Getenv.
	Env func(string) string
	// Home is the user's home directory; empty means os.UserHomeDir().
	Home string
}

// Gemini is the Gemini CLI adapter (binary "gemini", docs/harnesses.md).
type Gemini struct {
	opt GeminiOptions
}

var _ loop.Harness = (*Gemini)(nil)

// NewGemini returns the Gemini CLI adapter configured by opt.
func NewGemini(opt GeminiOptions) *Gemini {
	if opt.Env == nil {
		opt.Env = os.Getenv
	}
	return &Gemini{opt: opt}
}

// Name returns "gemini".
func (*Gemini) Name() string { return "gemini" }

// Binary returns "gemini".
func (*Gemini) Binary() string { return "gemini" }

// SubmitDelay returns GeminiSubmitDelay: a say into a Gemini pane must wait
// at least this long between the paste and the submit key.
func (*Gemini) SubmitDelay() time.Duration { return GeminiSubmitDelay }

// FreshArgv returns `--session-id <id> <args…> --prompt-interactive=<prompt>`
// (the prompt left out when empty). The Gemini CLI drops a positional prompt
// that follows "--" (0.61.0: it starts with an empty input), so the prompt
// goes in the flag's `=` form, which keeps it one value even when it starts
// with "-" and ends any array option in args (--include-directories a b).
func (*Gemini) FreshArgv(sessionID string, args []string, prompt string) ([]string, error) {
	return geminiArgv("--session-id", sessionID, args, prompt)
}

// ResumeArgv returns `--resume <id> <args…> --prompt-interactive=<prompt>`:
// the TUI continues conversation id (--resume takes a UUID as well as
// "latest" or an index) and submits the prompt, if any, into it.
func (*Gemini) ResumeArgv(sessionID string, args []string, prompt string) ([]string, error) {
	return geminiArgv("--resume", sessionID, args, prompt)
}

func geminiArgv(flag, sessionID string, args []string, prompt string) ([]string, error) {
	if sessionID == "" {
		return nil, loop.Invalid("the gemini harness needs a conversation id for %s", flag)
	}
	if err := checkUUID("gemini", sessionID); err != nil {
		return nil, err
	}
	argv := make([]string, 0, len(args)+3)
	argv = append(argv, flag, sessionID)
	argv = append(argv, args...)
	if prompt != "" {
		argv = append(argv, "--prompt-interactive="+prompt)
	}
	return argv, nil
}

// geminiDialogs are screen texts of Gemini CLI dialogs (observed on 0.61.0):
// the folder trust, the authentication choice and the API key entry; and
// the tool confirmation ("Allow once"), which replaces the input.
var geminiDialogs = []string{"do you trust the files in this folder", "how would you like to authenticate",
	"enter gemini api key", "waiting for auth", "trust folder (", "allow once", "waiting for user confirmation"}

// Ready reports whether typed input would reach the Gemini CLI: the pane is
// alive and out of canonical mode, no dialog is on the screen, and the last
// non-empty lines show the input prompt `>` (drawn above the footer:
// " >   Type your message or @path/to/file").
func (*Gemini) Ready(s loop.PaneSnapshot) bool {
	return promptReady(s, ">", geminiDialogs)
}

// GeminiDir is the Gemini CLI's global directory: <GEMINI_CLI_HOME or
// home>/.gemini (getenv nil means os.Getenv, home "" the user's home).
func GeminiDir(getenv func(string) string, home string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if h := getenv("GEMINI_CLI_HOME"); h != "" {
		home = h
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", loop.Invalid("no home directory to find the Gemini CLI's files in (%w); set GEMINI_CLI_HOME or HOME", err)
		}
		home = h
	}
	return filepath.Join(home, ".gemini"), nil
}

// Prepare marks exactly cwd (and its realpath when it differs) a trusted
// folder: "<dir>": "TRUST_FOLDER" in <gemini dir>/trustedFolders.json,
// which is what the CLI writes when its folder dialog is answered "Trust
// folder". With TrustEnabled false it does nothing. The file is edited
// under the discipline of updateJSONObject (lock, temp file + rename, a file
// that does not parse left untouched). An entry the operator set to
// anything else (DO_NOT_TRUST, TRUST_PARENT) is replaced only for the
// exact directory, as Claude's trust is. Errors are one EINTERNAL
// *loop.Error.
func (g *Gemini) Prepare(cwd string, args []string) error {
	_, err := g.SeedTrust(cwd, args)
	return err
}

// SeedTrust is Prepare, reporting the directories it marked TRUST_FOLDER
// (that were not before).
func (g *Gemini) SeedTrust(cwd string, _ []string) ([]string, error) {
	if !g.opt.TrustEnabled {
		return nil, nil
	}
	keys, err := projectKeys(cwd)
	if err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "pre-seeding Gemini CLI trust for '%s': %w", cwd, err)
	}
	dir, err := GeminiDir(g.opt.Env, g.opt.Home)
	if err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "pre-seeding Gemini CLI trust for '%s': %w", cwd, err)
	}
	var added []string
	if err := updateJSONObject(filepath.Join(dir, "trustedFolders.json"), func(doc map[string]any) (bool, error) {
		added = nil
		for _, k := range keys {
			if doc[k] != "TRUST_FOLDER" {
				doc[k] = "TRUST_FOLDER"
				added = append(added, k)
			}
		}
		return len(added) > 0, nil
	}); err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "pre-seeding Gemini CLI trust for '%s': %w", cwd, err)
	}
	return added, nil
}

// UnseedTrust removes each dir's TRUST_FOLDER entry from the CLI's
// trustedFolders.json (an entry with another value stays). Errors are one
// EINTERNAL *loop.Error.
func (g *Gemini) UnseedTrust(dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	dir, err := GeminiDir(g.opt.Env, g.opt.Home)
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "removing Gemini CLI trust the-loop added: %w", err)
	}
	path := filepath.Join(dir, "trustedFolders.json")
	if !exists(path) {
		return nil
	}
	if err := updateJSONObject(path, func(doc map[string]any) (bool, error) {
		changed := false
		for _, d := range dirs {
			if doc[d] == "TRUST_FOLDER" {
				delete(doc, d)
				changed = true
			}
		}
		return changed, nil
	}); err != nil {
		return loop.Errorf(loop.EINTERNAL, "removing Gemini CLI trust the-loop added: %w", err)
	}
	return nil
}
