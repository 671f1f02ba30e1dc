package loop

import (
	"context"
	"strconv"
	"time"
)

// Harness is an agent CLI adapter: everything the service knows of one
// agent CLI — its argv, its readiness, how the-loop's hooks are declared
// to it, how its conversation id is learnt, how it takes a message, the
// trust it is pre-seeded with, and its transcript. It never execs. Every
// method is implemented by every adapter: one whose CLI lacks a
// capability answers as its doc says (a zero value, or a refusal naming
// the harness).
type Harness interface {
	Name() string
	Binary() string
	// FreshArgv is the argv (without the binary) of a new conversation with a
	// pre-assigned id; the prompt is last.
	FreshArgv(sessionID string, args []string, prompt string) ([]string, error)
	// ResumeArgv continues conversation sessionID.
	ResumeArgv(sessionID string, args []string, prompt string) ([]string, error)
	// CheckSessionID refuses (EINVALID, naming the harness and the value)
	// an id that is not a conversation id of this CLI's shape. Every id
	// read from a hook payload or a record is checked before it is stored,
	// put in an argv or joined into a path.
	CheckSessionID(id string) error
	// Prepare pre-seeds trust for exactly cwd (best-effort): SeedTrust
	// without the report of what it added.
	Prepare(cwd string, args []string) error
	// Ready reports whether typed input would reach the agent.
	Ready(s PaneSnapshot) bool

	// WireHooks declares the-loop's hooks for one spawn, the way the CLI
	// takes them, and returns the spawn's args (w.Args with what the CLI
	// needs added) and the variables to add to its environment (nil for
	// none). It writes what the CLI reads its hooks from (a settings file
	// of the spawn's own, through w.WriteFile; or the CLI's user
	// settings). The service calls it for every spawn of a harness it
	// declares hooks for; an adapter without hooks returns w.Args and no
	// error. An operator's settings in w.Args that cannot be read or
	// merged are EINVALID, naming them and the remedy; a file that cannot
	// be written is EINTERNAL.
	WireHooks(w HookWiring) (args []string, env map[string]string, err error)

	// CapturesSessionID reports whether the CLI chooses its own
	// conversation id (FreshArgv ignores the one it is given): a fresh
	// spawn's id is then read back from its pane (CaptureSessionID) before
	// the session may be recorded running, and a hook of a fresh start
	// carries an id the claim does not know yet.
	CapturesSessionID() bool
	// CaptureSessionID waits until the CLI running under the pane process
	// panePID reveals the conversation id it chose, looking every interval,
	// until ctx ends. No id before ctx ends, or a failed look, is an
	// EINTERNAL error saying so: the start is failed, never recorded
	// running under a guess. An adapter that takes the id the-loop chose
	// (CapturesSessionID false) refuses with EINTERNAL, naming the harness.
	CaptureSessionID(ctx context.Context, panePID int, interval time.Duration) (string, error)
	// JoinsRunningTurn reports whether a message submitted while a turn
	// runs joins that turn (its one Stop answers both), rather than being
	// queued for a turn of its own.
	JoinsRunningTurn() bool
	// SubmitDelay is the least pause the CLI needs between a pasted text
	// and the key that submits it; 0 means the runner's own delay serves.
	SubmitDelay() time.Duration

	// SeedTrust is Prepare, reporting the directories whose trust entry it
	// added (none that was there before), so a delete can remove exactly
	// those. An adapter whose CLI has no trust to seed adds none.
	SeedTrust(cwd string, args []string) (added []string, err error)
	// UnseedTrust removes the trust entries of dirs (ones SeedTrust
	// added); an entry already gone is no error, nor is anything for an
	// adapter whose CLI has no trust to seed.
	UnseedTrust(dirs []string) error

	// ReadsTranscripts reports whether ReadTranscript can read the CLI's
	// conversations; StandingService.Transcript refuses, naming the
	// harness, when it cannot.
	ReadsTranscripts() bool
	// ReadTranscript returns the last n user and assistant entries of
	// conversation id, run in cwd, oldest first; a conversation that has
	// no file (yet) is no entries and no error. An adapter that reads no
	// transcript (ReadsTranscripts false) refuses with EINVALID, naming
	// the harness.
	ReadTranscript(cwd, id string, n int) ([]TranscriptEntry, error)
	// TokenEntries returns the last n entries of conversation id's
	// transcript that a Stop counts tokens from (its answers' Usage), oldest
	// first. A conversation without a file (yet), an id not of the CLI's
	// shape, and an adapter whose conversations' tokens the-loop does not
	// count give none and no error; a file that cannot be read is an error.
	TokenEntries(cwd, id string, n int) ([]TranscriptEntry, error)
	// TranscriptMark marks conversation id's transcript as it is now: a
	// user entry of a text pasted after the mark is past it. The zero
	// TranscriptMark (Path "") is no transcript to look in: an empty cwd
	// or id, an id not of the CLI's shape, or an adapter whose prompts are
	// found by its hooks alone.
	TranscriptMark(cwd, id string) TranscriptMark
	// PromptAfter reads the transcript's whole entries past m for the first
	// user entry whose text has PromptSum sum: its prompt id ("" when none
	// yet), and the mark the next look starts from. The zero mark gives ""
	// and itself.
	PromptAfter(m TranscriptMark, sum string) (promptID string, next TranscriptMark)
	// PromptSum is the PromptSum of the text of the last user entry of
	// promptID in the tail of conversation id's transcript ("" when there
	// is none, or the adapter keeps no prompt ids in a transcript).
	PromptSum(cwd, id, promptID string) string
}

// HookWiring is what the service supplies an adapter to declare the-loop's
// hooks for one spawn (Harness.WireHooks). The command lines and paths are
// the-loop's; which events are declared, and how, is the adapter's.
type HookWiring struct {
	// Command is the shell command line the CLI runs for every hook of
	// the spawn's session (`'<the-loop>' hook --state-root '<dir>'
	// --session '<ref>'`).
	Command string
	// EnvCommand is the shell command line of a hook that reads its state
	// root and session from the spawn's environment (Env), for a CLI whose
	// hooks are declared once in its user settings and serve every session
	// (`'<the-loop>' hook --from-env --json`).
	EnvCommand string
	// Env is the environment that names the spawn's state root and
	// session to EnvCommand.
	Env map[string]string
	// SettingsPath is where a settings file of the spawn's own goes, under
	// the state root.
	SettingsPath string
	// WriteFile writes a file of the spawn's own (at SettingsPath) with
	// the-loop's private-file discipline, refusing a path another user
	// owns or others may write.
	WriteFile func(path string, data []byte) error
	// Cwd resolves a relative path in Args.
	Cwd string
	// Args are the spawn's args (routing.harnessArgs, the session's own).
	Args []string
	// DecisionCommand is the shell command line of the PermissionRequest
	// hook that waits for an approval's decision (`'<the-loop-hook>'
	// --state-root '<dir>' --session '<ref>' --await-decision <seconds>`;
	// decisions D35), "" where the session gets none (a work item's, or
	// no hook program beside the-loop). An adapter whose CLI has no such
	// hook ignores it.
	DecisionCommand string
	// RulesCommand is the shell command line of the PreToolUse hook that
	// answers a tool use from the session's approval rules (`'<the-loop-hook>'
	// --rules '<file>'`), "" where the session has none. It runs within
	// TimeoutSeconds like every hook but the decision's.
	RulesCommand string
	// DecisionTimeoutSeconds is how long the CLI gives DecisionCommand:
	// the approval's wait plus loop.ApprovalHookSlack, so the hook answers
	// before the CLI ends it.
	DecisionTimeoutSeconds int
	// TimeoutSeconds is how long the CLI gives one hook to run.
	TimeoutSeconds int
}

// TranscriptMark is a place in a conversation's transcript, taken by
// Harness.TranscriptMark and read on by Harness.PromptAfter.
type TranscriptMark struct {
	// Path is the transcript file; "" when there is none to look in.
	Path string
	// Offset is how much of the file lies before the mark (0 while the
	// file is not there yet).
	Offset int64
}

// maxQuotedID is how much of a refused id a message quotes.
const maxQuotedID = 80

// QuoteID is id quoted for a message or an event: Go-quoted (control
// characters escaped), cut to its first 80 bytes.
func QuoteID(id string) string {
	if len(id) > maxQuotedID {
		return strconv.Quote(id[:maxQuotedID]) + "…"
	}
	return strconv.Quote(id)
}
