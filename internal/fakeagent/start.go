//go:build linux

package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
)

// parseContractArgs reads argv as the contract's CLI does: Codex's and
// Gemini's their own way (contracts.go), Claude Code's otherwise.
func parseContractArgs(contract string, argv []string) args {
	switch contract {
	case contractCodex:
		return parseCodexArgs(argv)
	case contractGemini:
		return parseGeminiArgs(argv)
	default:
		return parseArgs(argv)
	}
}

// newAgent is the agent the command line describes, logging to lf under
// dir, and its start entry (written once the hooks are loaded). The model
// defaults to the contract's; the session id is a new uuid when none is
// given, and always Codex's own choice for a fresh Codex session; the
// start entry names the id the command line gave, except for Codex, whose
// entry names the id it chose (or resumes).
func newAgent(lf *logFile, dir, contract string, args args) (*agent, entry) {
	cwd, _ := os.Getwd()
	a := &agent{log: lf, dir: dir, sessionID: args.sessionID, cwd: cwd, configDir: claudeConfigDir(),
		model: args.model, permMode: args.permissionMode,
		think:     time.Duration(envInt("FAKE_AGENT_TURN_MS", 50)) * time.Millisecond,
		hold:      os.Getenv("FAKE_AGENT_HOLD"),
		answerFmt: os.Getenv("FAKE_AGENT_ANSWER"), contract: contract, started: time.Now().UTC(), resumed: args.resume,
		hookDone: make(chan hookRun, 8), notifyIn: time.Duration(envInt("FAKE_AGENT_NOTIFY_MS", 6000)) * time.Millisecond}
	if a.model == "" {
		a.model = map[string]string{contractCodex: "gpt-fake", contractGemini: "gemini-fake"}[contract]
	}
	if a.model == "" {
		a.model = "claude-opus-4-5"
	}
	if contract == contractCodex && !args.resume {
		a.sessionID = "" // Codex chooses its id itself
	}
	if a.sessionID == "" {
		a.sessionID = uuid.NewString()
	}
	logged := args.sessionID
	if contract == contractCodex {
		logged = a.sessionID // the id it chose (or resumes)
	}
	start := entry{Kind: "start", Pid: os.Getpid(), Argv: os.Args[1:], SessionID: logged,
		Resume: args.resume, Prompt: args.prompt, Cwd: cwd, Env: selectedEnv()}
	return a, start
}

// canResume reports whether the session may go on: always for a fresh
// one; for a resume, when the contract's stored conversation exists (the
// Codex rollout, the Gemini session file, the Claude transcript), whose
// file the agent then keeps (Codex, Gemini) or whose last uuid it chains
// on (Claude). A resume with nothing to resume fails fast as the real CLI
// does: the start entry and resume_failed are logged and the CLI's own
// message goes to stderr.
func (a *agent) canResume(args args, start entry) bool {
	if !args.resume {
		return true
	}
	var missing string
	switch a.contract {
	case contractCodex:
		if a.codexPath = findCodexSession(args.sessionID); a.codexPath == "" {
			missing = fmt.Sprintf("ERROR: No saved session found with ID %s\n", args.sessionID)
		}
	case contractGemini:
		if a.geminiPath = findGeminiSession(a.cwd, args.sessionID); a.geminiPath == "" {
			missing = fmt.Sprintf("Error resuming session: no session %s found for this project\n", args.sessionID)
		}
	case contractClaude:
		if _, err := os.Stat(a.transcriptPath()); err != nil {
			missing = fmt.Sprintf("No conversation found with session ID: %s\n", args.sessionID)
		}
	}
	if missing != "" {
		a.log.write(start)
		a.log.write(entry{Kind: "resume_failed", SessionID: args.sessionID})
		fmt.Fprint(os.Stderr, missing)
		return false
	}
	if a.contract == contractClaude {
		a.lastUUID = a.lastTranscriptUUID()
	}
	return true
}

// loadHooks loads the hooks the contract reads — Codex's config (none
// while they await review: untrusted), Gemini's settings (and opens its
// session file), Claude's --settings — and notes in start's text what the
// start entry should say of them. The error is the first the loading
// met; the hooks that could be read are kept all the same.
func (a *agent) loadHooks(args args, start *entry) error {
	var hooks hookSet
	var err error
	switch a.contract {
	case contractCodex:
		var enabled bool
		hooks, enabled, a.untrusted, err = loadCodexHooks(args)
		start.Text = fmt.Sprintf("codex hooks enabled=%v untrusted=%v no-daemon=%v", enabled, a.untrusted, args.noDaemon)
		if a.untrusted {
			hooks = hookSet{}
		}
	case contractGemini:
		hooks, err = loadGeminiHooks()
		if oerr := a.openGemini(); oerr != nil && err == nil {
			err = oerr
		}
		if len(args.dropped) > 0 {
			start.Text = "dropped positional: " + strings.Join(args.dropped, " ")
		}
	default:
		hooks, err = loadSettings(args.settings)
	}
	a.hooks = hooks
	return err
}
