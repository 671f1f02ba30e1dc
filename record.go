package loop

import "encoding/json"

// Stored status of a standing session: the-loop's last action, not liveness.
// A name with no record shows StatusAbsent.
const (
	StatusRunning = "running"
	StatusStopped = "stopped"
	StatusAbsent  = "absent"
	// StatusBroken is a record the store holds but cannot decode:
	// listed with a detail naming its key, never acted on.
	StatusBroken = "broken"
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
	Name             string `json:"name"`
	Harness          string `json:"harness"`
	HarnessSessionID string `json:"harnessSessionId"`
	Cwd              string `json:"cwd"`
	TmuxTarget       string `json:"tmuxTarget"`
	Status           string `json:"status"`
	CreatedAt        string `json:"createdAt"`
	StartedAt        string `json:"startedAt"`
	LastMessageAt    string `json:"lastMessageAt"`
	SlackChannel     string `json:"slackChannel"`
	SlackThread      string `json:"slackThread"`

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

// Claim is an in-flight transition held by one process.
type Claim struct {
	Op  string `json:"op"` // "start" or "stop"
	PID int    `json:"pid"`
	// PIDStart is the start time of process PID (the system's own unit,
	// runner.ProcessStart): a claim is live while that very process runs,
	// never merely while some process holds the pid.
	PIDStart         uint64 `json:"pidStart,omitempty"`
	Since            string `json:"since"`
	HarnessSessionID string `json:"harnessSessionId,omitempty"`
	Resume           bool   `json:"resume,omitempty"`
	// HeardID is, for a fresh start of a CLI that chooses its own
	// conversation id (codex), the id its SessionStart hook named from the
	// spawned pane while the start still reads it back: the hooks of that
	// id are the start's. HarnessSessionID stays the pane's tag.
	HeardID string `json:"heardId,omitempty"`
	// Held is what the agent's hooks said while a start held the claim:
	// appended to the log after the start's own event, when the claim is
	// released, so a started or resumed event precedes its first turn.
	Held []Event `json:"held,omitempty"`
}

// MaxHeldEvents bounds Claim.Held; the hooks' events past it go to the log
// at once.
const MaxHeldEvents = 64

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

// WorkItemRecord is what the-loop keeps of a work item's session, in its
// own store bucket apart from standing sessions (original §4.2). JSON keys
// are the original's.
type WorkItemRecord struct {
	WorkItem         WorkItemInfo `json:"workItem"`
	Harness          string       `json:"harness"`
	HarnessSessionID string       `json:"harnessSessionId"`
	Cwd              string       `json:"cwd"`
	Status           string       `json:"status"` // active | paused | closed
	CreatedAt        string       `json:"createdAt"`
	LastEventAt      string       `json:"lastEventAt"`
	TmuxTarget       string       `json:"tmuxTarget"`
	RecentDeliveries []string     `json:"recentDeliveries"`
	URL              string       `json:"url,omitempty"`
	// PullRequests is kept as stored (the original's nested endpoints).
	PullRequests json.RawMessage `json:"pullRequests,omitempty"`
	// TmuxSocket is the `-L` socket name the session was spawned on ("" is
	// the user's default server), so close never depends on the config.
	TmuxSocket string `json:"tmuxSocket,omitempty"`
	// Claim marks a start in flight; it is stored beside Status and never
	// shown as a status.
	Claim *Claim `json:"claim,omitempty"`
	// AgentTokenHash is the hex sha256 of the credential handed to the
	// agent of the current spawn (THE_LOOP_AGENT_TOKEN), replaced at every
	// spawn; the credential itself is never stored.
	AgentTokenHash string `json:"agentTokenHash,omitempty"`
	// Broken, set only on a record a list could not decode (Status
	// SessionBroken), says why, naming its key; it is never stored.
	Broken string `json:"-"`
	// Hearing is what its hooks told of the agent.
	Hearing
}

// TrustEntry is one trust entry the-loop added to an agent CLI's config:
// the harness whose file holds it and the directory it trusts.
type TrustEntry struct {
	Harness string `json:"harness"`
	Dir     string `json:"dir"`
}
