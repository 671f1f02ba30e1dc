package loop

// Harness is an agent CLI adapter: it builds argv and checks readiness; it
// never execs.
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
	// Prepare pre-seeds trust for exactly cwd (best-effort).
	Prepare(cwd string, args []string) error
	// Ready reports whether typed input would reach the agent.
	Ready(s PaneSnapshot) bool
}

// TranscriptReader is the optional read side of a Harness: an adapter that
// can read its agent's conversation implements it too (harness.Claude
// does). An adapter without it has no transcript the-loop can read, and
// StandingService.Transcript refuses, naming the harness.
type TranscriptReader interface {
	// ReadTranscript returns the last n user and assistant entries of
	// conversation id, run in cwd, oldest first; a conversation that has
	// no file (yet) is no entries and no error.
	ReadTranscript(cwd, id string, n int) ([]TranscriptEntry, error)
}
