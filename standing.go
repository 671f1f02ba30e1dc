package loop

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// StandingPrefix starts the ref string of a standing session ("standing:<name>").
const StandingPrefix = "standing:"

// StandingTargetPrefix starts the tmux session name of a standing session.
const StandingTargetPrefix = "loop-standing-"

// NameRE is the grammar of a standing session's name: it becomes a tmux
// session name and a store key.
var NameRE = NewGrammar(`^[a-z0-9][a-z0-9-]{0,39}$`)

// TargetRE guards every signal the-loop sends: only tmux sessions named like
// the ones it creates (no '.', no ':') are ever terminated.
var TargetRE = NewGrammar(`^loop-[A-Za-z0-9_-]+$`)

// Grammar is a regular expression compiled on first use, not in the package
// init every process (every CLI call, `--help` included) pays; NameRE's
// {0,39} alone costs about 500 allocations to compile.
type Grammar struct {
	src string
	re  func() *regexp.Regexp
}

// NewGrammar returns the grammar of the regular expression src (which must
// compile: it panics on first use otherwise, as regexp.MustCompile would).
func NewGrammar(src string) *Grammar {
	return &Grammar{src: src, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })}
}

// MatchString reports whether s matches the grammar.
func (g *Grammar) MatchString(s string) bool { return g.re().MatchString(s) }

// String returns the expression's source (what a message shows).
func (g *Grammar) String() string { return g.src }

// ValidName reports whether name is a valid standing-session name.
func ValidName(name string) bool { return NameRE.MatchString(name) }

// CheckName refuses an invalid standing-session name as a caller's mistake
// (EINVALID: exit 2, HTTP 400), whatever the verb.
func CheckName(name string) error {
	if ValidName(name) {
		return nil
	}
	return Invalid("invalid standing-session name '%s': expected lowercase letters, digits and hyphens, "+
		"not starting with a hyphen (max 40; %s) — the name becomes a tmux session and a file name", name, NameRE)
}

// StandingRef returns "standing:<name>".
func StandingRef(name string) string { return StandingPrefix + name }

// ParseStandingRef returns the name a "standing:<name>" ref addresses, or ""
// and false when ref is not one (a work-item ref never is). It is the only
// recogniser of the prefix.
func ParseStandingRef(ref string) (string, bool) {
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, StandingPrefix) {
		return "", false
	}
	name := ref[len(StandingPrefix):]
	if !ValidName(name) {
		return "", false
	}
	return name, true
}

// TmuxTargetFor returns the tmux session name of a standing session,
// "loop-standing-<name>". It is always derived, never read from a record.
func TmuxTargetFor(name string) string { return StandingTargetPrefix + name }

// TmuxCommand is how an operator reaches the-loop's tmux server: "tmux",
// or "tmux -L <socket>" when routing.tmux.socketName is set.
func TmuxCommand(socket string) string {
	if socket == "" {
		return "tmux"
	}
	return "tmux -L " + socket
}

// StandingRow is one standing session as every surface shows it (original §5.2),
// with outcome and detail on control results.
type StandingRow struct {
	Name             string         `json:"name"`
	Declared         bool           `json:"declared"`
	Description      string         `json:"description"`
	AutoStart        bool           `json:"autoStart"`
	Harness          string         `json:"harness"`
	Cwd              string         `json:"cwd"`
	TmuxTarget       string         `json:"tmuxTarget"`
	Ref              string         `json:"ref"`
	Status           StandingStatus `json:"status"`
	Running          bool           `json:"running"`
	HarnessSessionID string         `json:"harnessSessionId"`
	SlackChannel     string         `json:"slackChannel"`
	SlackThread      string         `json:"slackThread"`
	StartedAt        string         `json:"startedAt"`
	LastMessageAt    string         `json:"lastMessageAt"`
	Origin           string         `json:"origin,omitempty"`
	// Activity is what the agent's hooks last said it does (Activity*),
	// since ActivityAt ("" when unknown).
	Activity   Activity `json:"activity"`
	ActivityAt string   `json:"activityAt"`
	// LastAnswerAt is when the agent last answered a turn ("" when never).
	LastAnswerAt string `json:"lastAnswerAt"`
	// Tokens are the conversation's token totals.
	Tokens  TokenUsage `json:"tokens"`
	Outcome string     `json:"outcome,omitempty"`
	Detail  string     `json:"detail,omitempty"`

	// Restarts counts the supervisor's restarts; LastExit is how the agent
	// last ended (null: never seen dead); Supervised is true when the
	// answering service supervises the session and its policy is not never.
	Restarts   int       `json:"restarts"`
	LastExit   *ExitInfo `json:"lastExit"`
	Supervised bool      `json:"supervised"`
	// DownReason says why a session that is not running is down (its
	// start failed or was refused, an operator stopped it, its agent
	// exited), with when; "" while it runs or when nothing was recorded.
	DownReason string `json:"downReason,omitempty"`
}

// StandingControlResult is what start, stop, restart, create and delete return.
type StandingControlResult struct {
	Sessions []StandingRow `json:"sessions"`
	OK       bool          `json:"ok"`
	Stopped  []StandingRow `json:"stopped,omitempty"` // restart only
}

// StandingCreateRequest is a runtime definition of a standing session (REST's
// StandingCreateBody).
type StandingCreateRequest struct {
	Name         string    `json:"name"`
	Harness      string    `json:"harness"`
	Cwd          string    `json:"cwd"`
	Prompt       string    `json:"prompt"`
	Description  string    `json:"description"`
	HarnessArgs  *[]string `json:"harnessArgs"` // nil inherits routing.harnessArgs; [] means none
	SlackEnabled bool      `json:"slackEnabled"`
	SlackChannel string    `json:"slackChannel"`
	AutoStart    bool      `json:"autoStart"`
	Start        bool      `json:"start"`
	// Restart is the session's restart policy (on-failure, always, never;
	// "" inherits standingSessions.restart.policy).
	Restart string `json:"restart,omitempty"`
}

// Control verbs of StandingControlRequest.Verb.
const (
	VerbStart   = "start"
	VerbStop    = "stop"
	VerbRestart = "restart"
)

// StandingControlRequest is a control verb on one standing session or on
// all of them (REST's POST /api/v1/standing-sessions/control body).
type StandingControlRequest struct {
	// Name is the session; "" means every one (start and stop only).
	Name string `json:"name"`
	// Verb is VerbStart, VerbStop or VerbRestart.
	Verb string `json:"verb"`
	// AutoOnly keeps, for a start of every session, the auto-starting ones
	// (what `the-loop start` starts).
	AutoOnly bool `json:"autoOnly"`
}

// StandingSayRequest is a message for a running standing session (REST's
// POST /api/v1/standing-sessions/say body).
type StandingSayRequest struct {
	Name string `json:"name"`
	Text string `json:"text"`
	// Actor is who speaks, recorded for audit and never trusted ("" is the
	// local OS user in-process).
	Actor string `json:"actor"`
	// Wait waits for the turn's answer (Reply); the session's harness must
	// have hooks.
	Wait bool `json:"wait,omitempty"`
	// TimeoutSeconds bounds the wait (0: DefaultSayWait).
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	// Caller is the agent whose credential carries the say ("" for the
	// operator's): the service sets it from the credential, never from a
	// body, and the message is framed as that agent's.
	Caller *AgentIdentity `json:"-"`
	// AnswerToThread asks that the turn's answer be posted in the session's
	// Slack thread (the Slack pipeline, with postReplies).
	AnswerToThread bool `json:"-"`
}

// DefaultSayWait is how long a waiting say waits for its answer when no
// timeout is given.
const DefaultSayWait = 5 * time.Minute

// StandingDeleteRequest names a created standing session to stop and
// forget (REST's POST /api/v1/standing-sessions/delete body).
type StandingDeleteRequest struct {
	Name string `json:"name"`
}

// StandingService is the standing-session verbs.
type StandingService interface {
	// List returns every declared or recorded standing session's row,
	// sorted by name. EINVALID when standingSessions does not parse.
	List(ctx context.Context) ([]StandingRow, error)
	// Get returns one session's row. ENOTFOUND when it is neither declared
	// nor recorded; EINVALID for a name that is not one.
	Get(ctx context.Context, name string) (StandingRow, error)
	// Create records (and unless req.Start is false, starts) a runtime
	// session. EINVALID for an invalid name or one already declared or
	// created (decisions D7), or standing sessions disabled.
	Create(ctx context.Context, req StandingCreateRequest) (StandingControlResult, error)
	// Delete stops and forgets a created session. ENOTFOUND for a name
	// never created; EINVALID for a declared one.
	Delete(ctx context.Context, req StandingDeleteRequest) (StandingControlResult, error)
	// Control starts, stops or restarts one session or all of them; a row
	// that failed is a result with OK false, not an error. EINVALID for an
	// unknown verb, a restart without a name or an invalid name; ENOTFOUND
	// for a name neither declared nor recorded.
	Control(ctx context.Context, req StandingControlRequest) (StandingControlResult, error)
	// Say delivers a message to a running session; a delivery that failed
	// is a result with Delivered false. EINVALID for an empty text or an
	// invalid name; ENOTFOUND for a session that is not running.
	Say(ctx context.Context, req StandingSayRequest) (SayResult, error)
	// Status returns the status rows (decisions D6) and whether every
	// session that should run does. It returns no error code of its own: a
	// session it cannot read is a failed row.
	Status(ctx context.Context) (rows []StandingRow, ok bool, err error)
	// Transcript returns the last `last` entries (0: 20; at most 1000) of
	// the session's recorded conversation, its user prompts and assistant
	// answers, oldest first; a session not started yet, or whose
	// transcript file is missing or half-written, has none (Entries []).
	// It only reads: no event, no claim. ENOTFOUND when the session is
	// neither declared nor recorded; EINVALID for an invalid name, a
	// `last` out of range or a harness whose transcript the-loop cannot
	// read.
	Transcript(ctx context.Context, name string, last int) (TranscriptResult, error)
	// Peek returns the last `lines` lines (0: 40; at most 2000) of the
	// session's own agent pane, the history included, and where it runs
	// (a dead pane too: Running false). It only reads. ENOTFOUND when the
	// session was never started or has no pane of the-loop's (absent, or
	// another program's under its name); EINVALID for an invalid name or
	// `lines` out of range.
	Peek(ctx context.Context, name string, lines int) (PeekResult, error)
}

// StandingStatus is the stored status of a standing session.
type StandingStatus string

// Stored status of a standing session: the-loop's last action, not liveness.
// A name with no record shows StatusAbsent.
const (
	StatusRunning StandingStatus = "running"
	StatusStopped StandingStatus = "stopped"
	StatusAbsent  StandingStatus = "absent"
	// StatusBroken is a record the store holds but cannot decode:
	// listed with a detail naming its key, never acted on.
	StatusBroken StandingStatus = "broken"
)

// Origins of a standing record (decisions D1): declared in the config, or
// created at runtime (then the record is the declaration).
const (
	OriginConfig  = "config"
	OriginCreated = "created"
)

// StandingRecord is what the-loop keeps of a standing session. JSON keys are
// the original's, plus origin, the tmux socket stopping needs, and the
// in-flight claim (decisions D1, D2, D8).
type StandingRecord struct {
	Name             string         `json:"name"`
	Harness          string         `json:"harness"`
	HarnessSessionID string         `json:"harnessSessionId"`
	Cwd              string         `json:"cwd"`
	TmuxTarget       string         `json:"tmuxTarget"`
	Status           StandingStatus `json:"status"`
	CreatedAt        string         `json:"createdAt"`
	StartedAt        string         `json:"startedAt"`
	LastMessageAt    string         `json:"lastMessageAt"`
	SlackChannel     string         `json:"slackChannel"`
	SlackThread      string         `json:"slackThread"`

	// The definition: for a created session the record is the declaration.
	Description  string   `json:"description"`
	Prompt       string   `json:"prompt"`
	HarnessArgs  []string `json:"harnessArgs"`
	AutoStart    bool     `json:"autoStart"`
	SlackEnabled bool     `json:"slackEnabled"`

	Origin string `json:"origin"`
	// TmuxSocket is the `-L` socket name the session was spawned on ("" is
	// the user's default server), so stop never depends on the config.
	TmuxSocket string `json:"tmuxSocket"`
	// Rev counts the record's transitions: a verb that read revision N and
	// finds another when it writes lost a race and re-evaluates.
	Rev uint64 `json:"rev"`
	// Claim marks a transition in flight (a start spawning, a stop
	// signalling). It is stored beside Status and never shown as a status.
	Claim *Claim `json:"claim,omitempty"`
	// AgentTokenHash is the hex sha256 of the credential handed to the
	// agent of the current spawn (THE_LOOP_AGENT_TOKEN), replaced at every
	// spawn; the credential itself is never stored.
	AgentTokenHash string `json:"agentTokenHash,omitempty"`
	// TrustAdded are the trust entries the-loop added to the agent CLIs'
	// own config for this session (none the operator had before); delete
	// removes exactly these.
	TrustAdded []TrustEntry `json:"trustAdded,omitempty"`
	// Broken, set only on a record a list could not decode (Status
	// StatusBroken), says why, naming its key; it is never stored.
	Broken string `json:"-"`
	// Hearing is what its hooks told of the agent.
	Hearing

	// Restart is a created session's restart policy ("" inherits
	// standingSessions.restart.policy); a declared one's is its entry's.
	Restart string `json:"restart,omitempty"`
	// Restarts counts the supervisor's restarts of this session.
	Restarts int `json:"restarts,omitempty"`
	// LastExit is how the agent last ended (nil: never seen dead).
	LastExit *ExitInfo `json:"lastExit,omitempty"`
	// LastDown is why the session last went down — a failed or refused
	// start, an operator's stop, an exit — and is cleared by a start (nil:
	// it has not gone down since).
	LastDown *Down `json:"lastDown,omitempty"`
}

// StandingDefinition is what a standing session is: a config entry, or a
// record synthesised into the same shape (original §5.3: the verbs cannot tell).
type StandingDefinition struct {
	Name        string
	Description string
	Harness     string
	HarnessArgs []string
	Cwd         string
	Prompt      string
	PromptFile  string
	// Env is standingSessions.sessions[].env: variables set in the agent's
	// environment, over routing.harnessEnv and the spawning process's.
	Env          map[string]string
	AutoStart    bool
	SlackEnabled bool
	SlackChannel string
	// SlackPostReplies is slack.postReplies (nil: channels.slack.postReplies).
	SlackPostReplies *bool
	Declared         bool // true when it comes from standingSessions.sessions
	// Restart is the entry's restart policy ("" inherits
	// standingSessions.restart.policy).
	Restart string
	// PermissionMode is the claude CLI's --permission-mode for the spawn:
	// the entry's permissionMode, else standingSessions.permissionMode
	// ("": the CLI's own default). bypassPermissions is only ever an
	// entry's own, with AllowBypassPermissions (config.PermissionModes).
	PermissionMode         string
	AllowBypassPermissions bool
	// ApprovalRules are the entry's own approval rules
	// (standingSessions.sessions[].approvals.rules), evaluated before the
	// shared ones; a created session has none (config's RulesFor).
	ApprovalRules []ApprovalRule
}

// Definition turns a record into the definition it carries (promptFile is
// never recorded: only the text of the brief).
func (r *StandingRecord) Definition() StandingDefinition {
	return StandingDefinition{
		Name:         r.Name,
		Description:  r.Description,
		Harness:      r.Harness,
		HarnessArgs:  append([]string(nil), r.HarnessArgs...),
		Cwd:          r.Cwd,
		Prompt:       r.Prompt,
		AutoStart:    r.AutoStart,
		SlackEnabled: r.SlackEnabled,
		SlackChannel: r.SlackChannel,
		Restart:      r.Restart,
	}
}

// TranscriptResult is what `standing transcript`, REST's
// GET /standing-sessions/transcript and the MCP tool
// read_standing_session_transcript return: a standing session's
// conversation, its user prompts and assistant answers, oldest first.
type TranscriptResult struct {
	Name    string            `json:"name"`
	Entries []TranscriptEntry `json:"entries"` // [] when there is nothing (yet) to show
}

// PeekResult is what `standing peek` and REST's GET
// /standing-sessions/peek return: the last lines of a standing session's
// agent pane, as tmux renders them (no colours), for what a transcript
// does not show — a permission dialog, a harness without a transcript.
type PeekResult struct {
	Name       string `json:"name"`
	TmuxTarget string `json:"tmuxTarget"` // the tmux session, loop-standing-<name>
	// TmuxSocket is the `-L` socket the agent runs on ("" is the default
	// server): `tmux -L <socket> attach -r -t =<tmuxTarget>` watches it.
	TmuxSocket string `json:"tmuxSocket"`
	// Running reports whether the pane's process runs (false: the pane is
	// dead and shows what the agent left on exit).
	Running bool `json:"running"`
	// Lines are the pane's last lines, oldest first, trailing blank lines
	// left out; [] when the pane shows nothing.
	Lines []string `json:"lines"`
}

// Restart policies of a standing session (an entry's or a create's
// `restart`, defaulting to standingSessions.restart.policy): what the
// service's supervisor does when the agent's pane dies.
const (
	// RestartOnFailure restarts after a non-zero exit or a signal, not
	// after exit 0.
	RestartOnFailure = "on-failure"
	// RestartAlways restarts whatever the exit.
	RestartAlways = "always"
	// RestartNever leaves a dead agent dead.
	RestartNever = "never"
)

// StatusFailed is the stored status of a standing session the supervisor
// gave up on: more than standingSessions.restart.burst restarts within
// intervalSeconds. `the-loop status` exits 1 for it; `standing start NAME`
// clears it.
const StatusFailed StandingStatus = "failed"

// ValidRestartPolicy reports whether p is a restart policy ("" is not: it
// means "inherit" where a definition carries it).
func ValidRestartPolicy(p string) bool {
	return p == RestartOnFailure || p == RestartAlways || p == RestartNever
}

// ExitInfo is how a standing session's agent last ended, as tmux reported
// it: Code is the exit status (nil when a signal ended it or tmux did not
// say), Signal the signal's name ("" when none), At when the supervisor
// saw the pane dead (RecordTimeFormat).
type ExitInfo struct {
	Code   *int   `json:"code"`
	Signal string `json:"signal"`
	At     string `json:"at"`
}

// Failure reports whether the exit counts as a failure for on-failure: a
// signal, a non-zero status, or a status tmux never reported.
func (e *ExitInfo) Failure() bool {
	return e == nil || e.Signal != "" || e.Code == nil || *e.Code != 0
}

// String words the exit for a person: "exited with status 1", "ended by
// signal SIGKILL", "exited (tmux did not report a status)".
func (e *ExitInfo) String() string {
	switch {
	case e == nil:
		return "never seen exiting"
	case e.Signal != "":
		return "ended by signal " + e.Signal
	case e.Code != nil:
		return fmt.Sprintf("exited with status %d", *e.Code)
	}
	return "exited (tmux did not report a status)"
}

// Down is why a standing session last went down: Why is a sentence (its
// start failed: …, stopped by an operator's stop, exited with status 1), At
// when (RecordTimeFormat).
type Down struct {
	Why string `json:"why"`
	At  string `json:"at"`
}
