package loop

// Outcomes of a control verb, per row.
const (
	OutcomeStarted        = "started"
	OutcomeResumed        = "resumed"
	OutcomeAlreadyRunning = "already-running"
	OutcomeFailed         = "failed"
	OutcomeStopped        = "stopped"
	OutcomeNotRunning     = "not-running"
	OutcomeDeleted        = "deleted"
	OutcomeMisconfigured  = "misconfigured"
)

// StandingRow is one standing session as every surface shows it (original §5.2),
// with outcome and detail on control results.
type StandingRow struct {
	Name             string `json:"name"`
	Declared         bool   `json:"declared"`
	Description      string `json:"description"`
	AutoStart        bool   `json:"autoStart"`
	Harness          string `json:"harness"`
	Cwd              string `json:"cwd"`
	TmuxTarget       string `json:"tmuxTarget"`
	Ref              string `json:"ref"`
	Status           string `json:"status"`
	Running          bool   `json:"running"`
	HarnessSessionID string `json:"harnessSessionId"`
	SlackChannel     string `json:"slackChannel"`
	SlackThread      string `json:"slackThread"`
	StartedAt        string `json:"startedAt"`
	LastMessageAt    string `json:"lastMessageAt"`
	Origin           string `json:"origin,omitempty"`
	// Activity is what the agent's hooks last said it does (Activity*),
	// since ActivityAt ("" when unknown).
	Activity   string `json:"activity"`
	ActivityAt string `json:"activityAt"`
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

// Message is one line a verb has for the operator, on stdout ("out") or
// stderr ("err").
type Message struct {
	Stream string `json:"stream"`
	Text   string `json:"text"`
}

// SayResult is what say returns (original §5.10).
type SayResult struct {
	Name      string `json:"name"`
	Delivered bool   `json:"delivered"`
	// Outcome is one of the Say* outcomes ("" for a say that failed
	// before it was decided).
	Outcome string `json:"outcome"`
	// Reply is the turn's answer to the message once a waiting say got it;
	// "" until answered.
	Reply    string    `json:"reply"`
	ExitCode int       `json:"exitCode"`
	Messages []Message `json:"messages"`
}

// Outcomes of a say or a reply, decided in this order.
const (
	// SayQueued: the agent was working when the text was pasted and when
	// it was submitted; the agent queued it for a turn of its own.
	SayQueued = "queued"
	// SaySubmitted: a UserPromptSubmit holding the text arrived in time.
	SaySubmitted = "submitted"
	// SayDelivered: pasted and submitted into an agent without hooks.
	SayDelivered = "delivered"
	// SayNotReady: the agent waits on a dialog, or its prompt is not up;
	// nothing was pasted.
	SayNotReady = "not-ready"
	// SayNotSubmitted: no evidence after one more submit key; the text is
	// left in the input box.
	SayNotSubmitted = "not-submitted"
)

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
