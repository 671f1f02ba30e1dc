package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// Bypass-acceptance policies (routing.harnessTrust.acceptBypassPermissions).
const (
	BypassAuto   = "auto"   // record acceptance only when the args ask for bypass mode (default)
	BypassAlways = "always" // always record it
	BypassNever  = "never"  // never record it
)

// ClaudeOptions configures the claude adapter's Prepare.
type ClaudeOptions struct {
	// TrustEnabled is routing.harnessTrust.enabled (the config's default is
	// true; the zero value here means Prepare writes nothing).
	TrustEnabled bool
	// AcceptBypass is routing.harnessTrust.acceptBypassPermissions: "auto",
	// "always" or "never". Empty, or any other value, means "auto".
	AcceptBypass string
	// Env reads the environment (CLAUDE_CONFIG_DIR); nil means os.Getenv.
	Env func(string) string
	// Home is the user's home directory; empty means os.UserHomeDir().
	Home string
}

// Claude is the Claude Code adapter (binary "claude", original §3.1, §3.3).
type Claude struct {
	opt ClaudeOptions
}

var _ loop.Harness = (*Claude)(nil)

// NewClaude returns the Claude Code adapter configured by opt.
func NewClaude(opt ClaudeOptions) *Claude {
	if opt.Env == nil {
		opt.Env = os.Getenv
	}
	return &Claude{opt: opt}
}

// Name returns "claude".
func (*Claude) Name() string { return "claude" }

// Binary returns "claude".
func (*Claude) Binary() string { return "claude" }

// FreshArgv returns `--session-id <id> <args…> -- <prompt>`: a new
// conversation whose id the-loop chose, flags first, then `--` and the
// prompt as one element (multi-line text included); both left out when the
// prompt is empty.
func (*Claude) FreshArgv(sessionID string, args []string, prompt string) ([]string, error) {
	return claudeArgv("--session-id", sessionID, args, prompt)
}

// ResumeArgv returns `--resume <id> <args…> -- <prompt>`: the TUI continues
// conversation id (no -p) and the prompt, if any, is submitted into it.
func (*Claude) ResumeArgv(sessionID string, args []string, prompt string) ([]string, error) {
	return claudeArgv("--resume", sessionID, args, prompt)
}

// geteuid is this process's effective uid, which a spawn inherits (a
// variable for the tests).
var geteuid = os.Geteuid

// BypassRootRefusal is what Claude Code 2.1.332 prints, and exits 1 at
// once, when root runs it in bypassPermissions mode (docs/claude-code.md).
const BypassRootRefusal = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"

func claudeArgv(flag, sessionID string, args []string, prompt string) ([]string, error) {
	if sessionID == "" {
		return nil, loop.Invalid("the claude harness needs a conversation id for %s", flag)
	}
	if geteuid() == 0 && asksForBypass(args) {
		// The CLI would exit at once: the spawn is refused before it is made.
		return nil, loop.Invalid("Claude Code refuses bypassPermissions mode to root (%q) and the-loop runs as root; run the-loop as another user, or choose another permissionMode", BypassRootRefusal)
	}
	if err := checkUUID("claude", sessionID); err != nil {
		return nil, err
	}
	argv := make([]string, 0, len(args)+4)
	argv = append(argv, flag, sessionID)
	argv = append(argv, args...)
	if prompt != "" {
		// "--" ends the options: a variadic flag in args (--allowedTools
		// Read Grep) cannot swallow the prompt, and a prompt starting with
		// "-" or "---" is not read as a flag (Claude Code takes the prompt
		// after "--").
		argv = append(argv, "--", prompt)
	}
	return argv, nil
}

// readyTailLines is how many of the screen's last non-empty lines Ready
// looks at. Claude Code draws its input prompt at the bottom of the pane,
// followed by a few footer lines (a rule, the permission-mode indicator, the
// shortcuts hint, notices); a `❯` higher up is transcript, not the prompt.
const readyTailLines = 8

// menuItemRE matches a select-menu item, the other thing Claude Code marks
// with `❯` (the highlighted choice of the trust dialog: "❯ 1. Yes,
// proceed").
var menuItemRE = regexp.MustCompile(`^\d+\.`)

// dialogTails are what the tail of a dialog's screen shows and an input
// prompt's never does: the trust dialog's question, and the footer and
// choices of a menu whose items are not numbered — bypassPermissions'
// consent screen on 2.1.332 ("❯ No, exit" / "Yes, I accept", "Enter to
// confirm · Esc to cancel", measured: docs/claude-code.md), where a paste's
// carriage return would pick "No, exit" and end the agent, and auto mode's
// own No / Yes dialog ("Auto mode can't check actions in this session"),
// where it would answer No.
var dialogTails = []string{"trust this folder", "do you trust the files", "enter to confirm", "yes, i accept", "auto mode can't check actions"}

// unnumberedChoices are the items of a menu whose items carry no number
// (auto mode's No / Yes): a `❯` before one highlights the choice, it is
// not the input prompt.
var unnumberedChoices = []string{"no", "yes"}

// Ready reports whether typed input would reach Claude Code (decisions D14):
// the pane is alive, its tty is out of canonical mode (the TUI has taken the
// terminal), and the last non-empty lines of the screen show the input
// prompt `❯`. A `❯` that highlights a numbered menu choice, or any tail that
// still shows a dialog (dialogTails: the trust dialog, the bypass consent),
// is not the input prompt. The pre-2.0 `>` prompt is not recognised.
func (*Claude) Ready(s loop.PaneSnapshot) bool {
	if s.Dead || s.Canonical {
		return false
	}
	prompt := false
	for _, line := range lastNonEmptyLines(s.Screen, readyTailLines) {
		low := strings.ToLower(line)
		if slices.ContainsFunc(dialogTails, func(d string) bool { return strings.Contains(low, d) }) {
			return false
		}
		// The prompt may sit inside a box ("│ ❯ …").
		l := strings.TrimLeft(line, " \t│|")
		rest, ok := strings.CutPrefix(l, "❯")
		if !ok {
			continue
		}
		if item := strings.TrimSpace(rest); menuItemRE.MatchString(item) || slices.Contains(unnumberedChoices, strings.ToLower(item)) {
			return false
		}
		prompt = true
	}
	return prompt
}

// lastNonEmptyLines returns up to n of screen's last lines that are not
// blank, in screen order.
func lastNonEmptyLines(screen string, n int) []string {
	lines := strings.Split(strings.ReplaceAll(screen, "\r", ""), "\n")
	var tail []string
	for i := len(lines) - 1; i >= 0 && len(tail) < n; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			tail = append(tail, lines[i])
		}
	}
	for i, j := 0, len(tail)-1; i < j; i, j = i+1, j-1 {
		tail[i], tail[j] = tail[j], tail[i]
	}
	return tail
}

// Prepare pre-seeds Claude Code's own config so a session in cwd starts
// working instead of stopping on a dialog (original §3.3, decisions D15).
// With TrustEnabled false it does nothing. Otherwise, in the user config
// file, projects[<abs cwd>] (and projects[<realpath>] when it differs) get
// hasTrustDialogAccepted and hasCompletedProjectOnboarding true — only the
// exact directory, never an ancestor. When the bypass policy asks for it
// (always, or auto with bypass in args), it also records the bypass-mode
// disclaimer: skipDangerousModePermissionPrompt in settings.json and the
// legacy bypassPermissionsModeAccepted in the user config file. No plugin
// marketplace is ever written.
//
// Files honour CLAUDE_CONFIG_DIR: the config dir is $CLAUDE_CONFIG_DIR or
// ~/.claude; the user config file is <config dir>/.config.json when it
// exists, else ${CLAUDE_CONFIG_DIR:-$HOME}/.claude.json; settings is
// <config dir>/settings.json. See updateJSONObject for the write discipline.
// Prepare is best-effort for its caller: it tries every file and returns
// the failures joined, as one EINTERNAL *loop.Error.
func (c *Claude) Prepare(cwd string, args []string) error {
	_, err := c.SeedTrust(cwd, args)
	return err
}

// SeedTrust is Prepare, reporting the projects keys whose trust it added
// (hasTrustDialogAccepted was not true before).
func (c *Claude) SeedTrust(cwd string, args []string) ([]string, error) {
	if !c.opt.TrustEnabled {
		return nil, nil
	}
	keys, err := projectKeys(cwd)
	if err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "pre-seeding Claude Code trust for '%s': %w", cwd, err)
	}
	paths, err := c.configPaths()
	if err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "pre-seeding Claude Code trust for '%s': %w", cwd, err)
	}
	bypass := c.acceptBypass(args)

	var errs []error
	var added []string
	if err := updateJSONObject(paths.userConfig, func(doc map[string]any) (bool, error) {
		var changed bool
		var err error
		added, changed, err = trustProjects(doc, keys)
		if err != nil {
			return false, err
		}
		if bypass && setTrue(doc, "bypassPermissionsModeAccepted") {
			changed = true
		}
		return changed, nil
	}); err != nil {
		errs = append(errs, err)
	}
	if bypass {
		if err := updateJSONObject(paths.settings, func(doc map[string]any) (bool, error) {
			return setTrue(doc, "skipDangerousModePermissionPrompt"), nil
		}); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return added, loop.Errorf(loop.EINTERNAL, "pre-seeding Claude Code trust for '%s': %w", cwd, errors.Join(errs...))
	}
	return added, nil
}

// UnseedTrust removes hasTrustDialogAccepted from projects[dir] of each
// dir in Claude Code's user config (the entry itself stays: Claude Code
// keeps its own data for the project there). Errors are one EINTERNAL
// *loop.Error.
func (c *Claude) UnseedTrust(dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	paths, err := c.configPaths()
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "removing Claude Code trust the-loop added: %w", err)
	}
	if err := updateJSONObject(paths.userConfig, func(doc map[string]any) (bool, error) {
		projects, _ := doc["projects"].(map[string]any)
		changed := false
		for _, d := range dirs {
			if entry, ok := projects[d].(map[string]any); ok {
				if _, set := entry["hasTrustDialogAccepted"]; set {
					delete(entry, "hasTrustDialogAccepted")
					changed = true
				}
			}
		}
		return changed, nil
	}); err != nil {
		return loop.Errorf(loop.EINTERNAL, "removing Claude Code trust the-loop added: %w", err)
	}
	return nil
}

// claudePaths are the Claude Code files Prepare may write.
type claudePaths struct {
	configDir  string
	userConfig string
	settings   string
}

// configPaths locates Claude Code's files the way Claude Code does.
func (c *Claude) configPaths() (claudePaths, error) {
	envDir := c.opt.Env("CLAUDE_CONFIG_DIR")
	home := c.opt.Home
	if envDir == "" && home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return claudePaths{}, fmt.Errorf("no home directory to find Claude Code's config in: %w", err)
		}
		home = h
	}
	p := claudePaths{configDir: envDir}
	base := envDir
	if envDir == "" {
		p.configDir = filepath.Join(home, ".claude")
		base = home
	}
	p.settings = filepath.Join(p.configDir, "settings.json")
	p.userConfig = filepath.Join(base, ".claude.json")
	if legacy := filepath.Join(p.configDir, ".config.json"); exists(legacy) {
		p.userConfig = legacy
	}
	return p, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// acceptBypass applies the acceptBypassPermissions policy to args.
func (c *Claude) acceptBypass(args []string) bool {
	switch c.opt.AcceptBypass {
	case BypassAlways:
		return true
	case BypassNever:
		return false
	default:
		return asksForBypass(args)
	}
}

// asksForBypass reports whether harness args put Claude Code in bypass
// mode: --dangerously-skip-permissions, --permission-mode=bypassPermissions
// or --permission-mode bypassPermissions.
func asksForBypass(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--dangerously-skip-permissions",
			a == "--permission-mode=bypassPermissions",
			a == "--permission-mode" && i+1 < len(args) && args[i+1] == "bypassPermissions":
			return true
		}
	}
	return false
}

// projectKeys returns the projects keys for cwd: its absolute, cleaned
// path, then its realpath when that differs (and resolves).
func projectKeys(cwd string) ([]string, error) {
	if cwd == "" {
		return nil, errors.New("no working directory given")
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("make '%s' absolute: %w", cwd, err)
	}
	keys := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		keys = append(keys, real)
	}
	return keys, nil
}

// trustProjects marks each key trusted and onboarded in doc["projects"].
// A projects value (or project entry) that is not an object is an error:
// the file is left untouched rather than have the-loop replace the
// operator's data.
func trustProjects(doc map[string]any, keys []string) (added []string, changed bool, err error) {
	projects := map[string]any{}
	if v, ok := doc["projects"]; ok {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, errors.New(`"projects" is not a JSON object`)
		}
		projects = m
	}
	for _, key := range keys {
		entry := map[string]any{}
		if v, ok := projects[key]; ok {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false, fmt.Errorf(`"projects[%s]" is not a JSON object`, key)
			}
			entry = m
		}
		a := setTrue(entry, "hasTrustDialogAccepted")
		b := setTrue(entry, "hasCompletedProjectOnboarding")
		if a {
			added = append(added, key)
		}
		if a || b {
			projects[key] = entry
			changed = true
		}
	}
	if changed {
		doc["projects"] = projects
	}
	return added, changed, nil
}

// setTrue sets m[key] to true and reports whether it was not true already.
func setTrue(m map[string]any, key string) bool {
	if v, ok := m[key].(bool); ok && v {
		return false
	}
	m[key] = true
	return true
}
