package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	loop "github.com/the-loop-dev/the-loop"
)

// CodexVersion is the OpenAI Codex CLI release (npm @openai/codex) whose
// contract this adapter was checked against (docs/harnesses.md).
const CodexVersion = "0.171.0"

// CodexOptions configures the codex adapter.
type CodexOptions struct {
	// TrustEnabled is routing.harnessTrust.enabled: Prepare marks the cwd
	// trusted in Codex's config.toml (false: Prepare writes nothing).
	TrustEnabled bool
	// Env reads the environment (CODEX_HOME); nil means os.Getenv.
	Env func(string) string
	// Home is the user's home directory; empty means os.UserHomeDir().
	Home string
	// Proc is the proc filesystem's root for SessionIDOf; empty means
	// "/proc".
	Proc string
}

// Codex is the OpenAI Codex CLI adapter (binary "codex", docs/harnesses.md).
//
// Codex cannot start a conversation under an id chosen in advance: FreshArgv
// ignores the id it is given, and the id Codex chose is read back from the
// spawned process with SessionIDOf before the session may be recorded
// running. Every spawn passes --no-daemon, so the conversation belongs to
// the pane's own process tree rather than to a background app server shared
// with other sessions (which would make the id impossible to attribute).
type Codex struct {
	opt CodexOptions
}

var _ loop.Harness = (*Codex)(nil)

// NewCodex returns the Codex adapter configured by opt.
func NewCodex(opt CodexOptions) *Codex {
	if opt.Env == nil {
		opt.Env = os.Getenv
	}
	if opt.Proc == "" {
		opt.Proc = "/proc"
	}
	return &Codex{opt: opt}
}

// Name returns "codex".
func (*Codex) Name() string { return "codex" }

// Binary returns "codex".
func (*Codex) Binary() string { return "codex" }

// JoinsRunningTurn reports true: a message submitted while a turn runs
// joins that turn (0.171.0: its UserPromptSubmit carries the running
// turn's turn_id, and the turn's one Stop answers it), where Claude Code
// queues it for a turn of its own.
func (*Codex) JoinsRunningTurn() bool { return true }

// FreshArgv returns `--no-daemon <args…> -- <prompt>` (the prompt and "--"
// left out when it is empty). sessionID is not passed: Codex has no flag for
// it. Codex writes its session file, and so reveals its id, only once the
// first turn starts, so a fresh start should carry a prompt.
func (*Codex) FreshArgv(_ string, args []string, prompt string) ([]string, error) {
	argv := codexFlags(nil, args)
	if prompt != "" {
		// "--": a multi-valued option in args (--image a.png) cannot take
		// the prompt, and a prompt starting with "-" stays the prompt.
		argv = append(argv, "--", prompt)
	}
	return argv, nil
}

// ResumeArgv returns `resume --no-daemon <args…> -- <id> [<prompt>]`: the
// TUI continues conversation id; the prompt, if any, is submitted into it.
// An unknown id makes Codex exit 1 at once ("No saved session found").
func (*Codex) ResumeArgv(sessionID string, args []string, prompt string) ([]string, error) {
	if sessionID == "" {
		return nil, loop.Invalid("the codex harness needs a conversation id to resume")
	}
	if err := checkUUID("codex", sessionID); err != nil {
		return nil, err
	}
	argv := codexFlags([]string{"resume"}, args)
	argv = append(argv, "--", sessionID)
	if prompt != "" {
		argv = append(argv, prompt)
	}
	return argv, nil
}

// codexFlags appends --no-daemon (unless args have it) and args to head.
func codexFlags(head, args []string) []string {
	argv := make([]string, 0, len(head)+len(args)+4)
	argv = append(argv, head...)
	if !slices.Contains(args, "--no-daemon") {
		argv = append(argv, "--no-daemon")
	}
	return append(argv, args...)
}

// codexDialogs are screen texts of Codex dialogs that take typed input as a
// menu choice (observed on 0.171.0): the folder trust and the hook review.
var codexDialogs = []string{"trust this folder", "folder access", "hooks need review", "do you trust"}

// Ready reports whether typed input would reach Codex's composer: the pane
// is alive and out of canonical mode, and the screen's last non-empty lines
// show the composer prompt `›` — not a `›` that highlights a numbered menu
// choice ("› 1. Trust and continue"), and no dialog is on the screen.
func (*Codex) Ready(s loop.PaneSnapshot) bool {
	return promptReady(s, "›", codexDialogs)
}

// dialogTailLines is how many of the screen's last non-empty lines
// promptReady searches for a dialog's text.
const dialogTailLines = 24

// promptReady is Ready for a TUI whose input line starts with glyph at the
// bottom of the screen and whose dialogs mark their choices with numbers.
func promptReady(s loop.PaneSnapshot, glyph string, dialogs []string) bool {
	if s.Dead || s.Canonical {
		return false
	}
	// Dialogs are looked for in the screen's lower part only, where the
	// CLIs draw them: the same words higher up are conversation.
	low := strings.ToLower(strings.Join(lastNonEmptyLines(s.Screen, dialogTailLines), "\n"))
	for _, d := range dialogs {
		if strings.Contains(low, d) {
			return false
		}
	}
	prompt := false
	for _, line := range lastNonEmptyLines(s.Screen, readyTailLines) {
		l := strings.TrimLeft(line, " \t│|")
		rest, ok := strings.CutPrefix(l, glyph)
		if !ok {
			continue
		}
		if menuItemRE.MatchString(strings.TrimSpace(rest)) {
			return false
		}
		prompt = true
	}
	return prompt
}

// CodexHome is Codex's home directory: getenv's CODEX_HOME, else
// home/.codex (getenv nil means os.Getenv, home "" the user's home).
func CodexHome(getenv func(string) string, home string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("CODEX_HOME"); d != "" {
		return d, nil
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", loop.Invalid("no home directory to find Codex's files in (%w); set CODEX_HOME or HOME", err)
		}
		home = h
	}
	return filepath.Join(home, ".codex"), nil
}

// Prepare marks exactly cwd (and its realpath when it differs) trusted in
// Codex's user config, <CODEX_HOME>/config.toml: a table
// `[projects."<dir>"]` with `trust_level = "trusted"`, which is what Codex
// itself writes when the folder dialog is answered. With TrustEnabled false
// it does nothing. The file is edited as text, appended to, so the
// operator's comments and layout stay; the result is parsed before it
// replaces the file (temp file + rename, under a lock, re-read just before
// the rename), and a file that does not parse, or that already has a table
// for the directory with another trust level, is left untouched and
// reported. Errors are one EINTERNAL *loop.Error.
func (c *Codex) Prepare(cwd string, args []string) error {
	_, err := c.SeedTrust(cwd, args)
	return err
}

// SeedTrust is Prepare, reporting the directories whose projects table it
// appended.
func (c *Codex) SeedTrust(cwd string, _ []string) ([]string, error) {
	if !c.opt.TrustEnabled {
		return nil, nil
	}
	keys, err := projectKeys(cwd)
	if err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "pre-seeding Codex trust for '%s': %w", cwd, err)
	}
	home, err := CodexHome(c.opt.Env, c.opt.Home)
	if err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "pre-seeding Codex trust for '%s': %w", cwd, err)
	}
	added, err := trustCodexProjects(filepath.Join(home, "config.toml"), keys)
	if err != nil {
		return nil, loop.Errorf(loop.EINTERNAL, "pre-seeding Codex trust for '%s': %w", cwd, err)
	}
	return added, nil
}

// UnseedTrust removes, for each dir, the projects table SeedTrust appended
// (`[projects."<dir>"]` with only `trust_level = "trusted"`, as written); a
// table that is not there as written (Codex or the operator changed it)
// is left alone. Errors are one EINTERNAL *loop.Error.
func (c *Codex) UnseedTrust(dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	home, err := CodexHome(c.opt.Env, c.opt.Home)
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "removing Codex trust the-loop added: %w", err)
	}
	err = editLocked(filepath.Join(home, "config.toml"), "Codex", func(real string) (rawFile, []byte, os.FileMode, error) {
		before, _, mode, err := readTOML(real)
		if err != nil || !before.exists {
			return before, nil, 0, err
		}
		data := before.data
		for _, d := range dirs {
			data = bytes.Replace(data, []byte(codexTrustTable(d)), nil, 1)
		}
		if bytes.Equal(data, before.data) {
			return before, nil, 0, nil
		}
		var after map[string]any
		if _, err := toml.Decode(string(data), &after); err != nil {
			return rawFile{}, nil, 0, fmt.Errorf("%s: removing the trusted projects would not give valid TOML (%v); left untouched", real, err)
		}
		return before, data, mode, nil
	})
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "removing Codex trust the-loop added: %w", err)
	}
	return nil
}

// codexTrustTable is the table SeedTrust appends for dir.
func codexTrustTable(dir string) string {
	return fmt.Sprintf("\n[projects.%s]\ntrust_level = \"trusted\"\n", TOMLQuote(dir))
}

// trustCodexProjects appends a trusted projects table for each key that
// does not have one to the TOML file at path, and returns the keys it
// appended.
func trustCodexProjects(path string, keys []string) ([]string, error) {
	var added []string
	err := editLocked(path, "Codex", func(real string) (rawFile, []byte, os.FileMode, error) {
		added = nil
		before, doc, mode, err := readTOML(real)
		if err != nil {
			return rawFile{}, nil, 0, err
		}
		if codexProjectsKeyRE.Match(before.data) {
			// An inline table or dotted keys cannot be extended by a
			// [projects."…"] header (Codex's TOML parser refuses it, even
			// where a laxer one accepts it).
			return rawFile{}, nil, 0, fmt.Errorf("%s: \"projects\" is written as a key (projects = {…} or projects.….), which a table cannot extend; left untouched — "+
				"add [projects.%s] trust_level = \"trusted\" yourself", real, TOMLQuote(keys[0]))
		}
		var add []string
		for _, key := range keys {
			trusted, err := codexTrusted(doc, key)
			if err != nil {
				return rawFile{}, nil, 0, fmt.Errorf("%s: %w; left untouched", real, err)
			}
			if !trusted {
				add = append(add, key)
			}
		}
		if len(add) == 0 {
			return before, nil, 0, nil
		}
		var buf bytes.Buffer
		buf.Write(before.data)
		if len(before.data) > 0 && !bytes.HasSuffix(before.data, []byte("\n")) {
			buf.WriteByte('\n')
		}
		for _, key := range add {
			buf.WriteString(codexTrustTable(key))
		}
		var after map[string]any
		if _, err := toml.Decode(buf.String(), &after); err != nil {
			return rawFile{}, nil, 0, fmt.Errorf("%s: adding the trusted projects would not give valid TOML (%v); left untouched — "+
				"add [projects.%s] trust_level = \"trusted\" yourself", real, err, TOMLQuote(add[0]))
		}
		for _, key := range add {
			if ok, _ := codexTrusted(after, key); !ok {
				return rawFile{}, nil, 0, fmt.Errorf("%s: the appended table for '%s' does not read back as trusted; left untouched", real, key)
			}
		}
		added = add
		return before, buf.Bytes(), mode, nil
	})
	return added, err
}

// codexProjectsKeyRE matches a line that sets projects as a key rather
// than with [projects."…"] table headers.
var codexProjectsKeyRE = regexp.MustCompile(`(?m)^[ \t]*(projects|"projects"|'projects')[ \t]*[.=]`)

// readTOML reads and parses path ({} when missing); a file that does not
// parse is re-read a few times (a writer may be mid-write), then reported.
func readTOML(path string) (rawFile, map[string]any, os.FileMode, error) {
	for try := 1; ; try++ {
		raw, err := readRaw(path)
		if err != nil {
			return rawFile{}, nil, 0, err
		}
		if !raw.exists {
			return raw, map[string]any{}, 0o600, nil
		}
		doc := map[string]any{}
		if _, err := toml.Decode(string(raw.data), &doc); err != nil {
			if try < parseRetries {
				time.Sleep(parseRetryWait)
				continue
			}
			return rawFile{}, nil, 0, fmt.Errorf("%s: not valid TOML (%v); left untouched — fix or remove it", path, err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return rawFile{}, nil, 0, fmt.Errorf("stat %s: %w", path, err)
		}
		return raw, doc, fi.Mode().Perm(), nil
	}
}

// codexTrusted reports whether doc's projects[key].trust_level is
// "trusted"; a projects table for key with anything else is an error (a
// table cannot be appended twice, and the operator's choice stays).
func codexTrusted(doc map[string]any, key string) (bool, error) {
	v, ok := doc["projects"]
	if !ok {
		return false, nil
	}
	projects, ok := v.(map[string]any)
	if !ok {
		return false, errors.New(`"projects" is not a table`)
	}
	e, ok := projects[key]
	if !ok {
		return false, nil
	}
	entry, ok := e.(map[string]any)
	if !ok {
		return false, fmt.Errorf(`projects.%s is not a table`, TOMLQuote(key))
	}
	if entry["trust_level"] == "trusted" {
		return true, nil
	}
	return false, fmt.Errorf(`projects.%s exists with trust_level %v, not "trusted" — set it yourself, the-loop does not rewrite it`,
		TOMLQuote(key), entry["trust_level"])
}

// TOMLQuote is s as a TOML basic string (for a key or a value, e.g. in a
// codex -c override).
func TOMLQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
