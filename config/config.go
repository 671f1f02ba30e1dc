package config

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CurrentVersion is the config layout this the-loop reads; a file declaring
// an older `version` is refused by the migration gate.
const CurrentVersion = "0.5.0"

// Config is the CLI config: the whole mapping as read (Raw) and the typed
// settings the Go version uses, each with the original's default.
type Config struct {
	// Path is the file the config was read from ("" when none: defaults).
	Path string
	// Raw is the whole top-level mapping as decoded (never nil).
	Raw map[string]any
	// Version is the declared `version` ("" when absent).
	Version string
	// StateRoot is state.root as written (default ".the-loop"); see StateDir.
	StateRoot string
	// ProjectDir is what relative paths in the config resolve against
	// (decisions D27): the directory holding the .the-loop folder the config
	// file lives in, else the config file's own directory; "" with no config
	// file, when they resolve against the working directory. Load and
	// LoadTolerant set it and resolve routing.spawnWorkdir and every
	// standing session's cwd and promptFile to absolute paths with it;
	// state.root stays as written and StateDir resolves it.
	ProjectDir string

	Routing  Routing
	Service  Service
	EventLog EventLog
	Slack    Slack
	// GitHubBinary is integrations.github.cli.binary (default "gh").
	GitHubBinary string
	// StandingMCP is standingSessions.mcp (default false): every claude
	// spawn also gets an MCP config pointing at the service's /mcp with the
	// agent's own credential.
	StandingMCP bool
	// Supervision is standingSessions.restart, resumePrompt and
	// startConcurrency (config/supervision.go).
	Supervision Supervision

	// Standing is the parsed standingSessions block. It is nil when the block
	// is refused (StandingErr says why) — except after LoadTolerant, which
	// keeps the entries that parse.
	Standing *StandingConfig
	// StandingErr is the refusal of the standingSessions block (a *loop.Error,
	// EINVALID): the standing verbs refuse with it, start and status render it
	// as one misconfigured row.
	StandingErr error
	// Problems lists every problem found (each a *loop.Error, EINVALID, naming
	// a dotted key path). After a successful Load only standingSessions
	// problems can be here; LoadTolerant records everything.
	Problems []error
}

// Routing is the part of `routing` the Go version uses.
type Routing struct {
	// DefaultHarness is routing.defaultHarness (default "claude").
	DefaultHarness string
	// HarnessArgs is routing.harnessArgs: extra argv per harness. A harness
	// with no key has no entry.
	HarnessArgs map[string][]string
	// HarnessEnv is routing.harnessEnv: variables set in every agent's
	// environment, over the spawning process's (a standing entry's own env
	// wins over it). Nil when not set.
	HarnessEnv map[string]string
	// HarnessBinaries is routing.harnessBinaries: the binary each harness
	// runs (harness name → absolute path) instead of the one found on the
	// spawning process's PATH. Nil when not set.
	HarnessBinaries map[string]string
	// SpawnWorkdir is routing.spawnWorkdir (default ".").
	SpawnWorkdir string
	// RegistryDir is routing.registryDir as written ("" means <state.root>/local;
	// it never moves standing records).
	RegistryDir  string
	Tmux         Tmux
	HarnessTrust HarnessTrust
	// ControlKeywords is routing.control.keywords: the declared control
	// keywords, in the schema's order of commands (ControlCommands), each
	// "the-loop <command>" by default; one set to "" is left out. Only the
	// work-item mirror uses them, to defang a reply it posts on a ticket.
	ControlKeywords []string
}

// ControlCommands are routing.control.keywords' commands, in the schema's
// order.
func ControlCommands() []string {
	return []string{"start", "stop", "pause", "resume", "execute", "contribute", "do", "cleanup"}
}

// controlKeywords reads routing.control.keywords (nil: the defaults).
func controlKeywords(kw map[string]any) []string {
	var out []string
	for _, cmd := range ControlCommands() {
		if k := strings.TrimSpace(str(kw, cmd, "the-loop "+cmd)); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// Tmux is routing.tmux.
type Tmux struct {
	RemainOnExit            bool    // default true
	ResumeOnRespawn         bool    // default true
	ResumeProbeSeconds      float64 // default 2
	HarnessKillGraceSeconds float64 // default 5
	// SocketName runs tmux with `-L SocketName`; "" is the user's default server.
	SocketName    string
	SubmitDelayMs int     // default 50
	ReadySeconds  float64 // default 30
	// SubmitSeconds bounds a say's wait for its UserPromptSubmit (default 10).
	SubmitSeconds float64
	// KeepSessionOnClose keeps a closed work item's tmux session, so its
	// transcript stays attachable (default true).
	KeepSessionOnClose bool
	// KillHarnessOnClose ends the harness in a kept session on close
	// (default true).
	KillHarnessOnClose bool
}

// ResumeProbe is how long a resumed pane must survive to count as resumed.
func (t Tmux) ResumeProbe() time.Duration { return seconds(t.ResumeProbeSeconds) }

// HarnessKillGrace is the SIGTERM→SIGKILL grace on stop.
func (t Tmux) HarnessKillGrace() time.Duration { return seconds(t.HarnessKillGraceSeconds) }

// SubmitWait is how long a say waits for its UserPromptSubmit.
func (t Tmux) SubmitWait() time.Duration { return seconds(t.SubmitSeconds) }

// SubmitDelay is the pause between the paste and the submitting carriage return.
func (t Tmux) SubmitDelay() time.Duration { return time.Duration(t.SubmitDelayMs) * time.Millisecond }

// ReadyTimeout is how long say waits for the harness to be ready for input.
func (t Tmux) ReadyTimeout() time.Duration { return seconds(t.ReadySeconds) }

// HarnessTrust is routing.harnessTrust.
type HarnessTrust struct {
	Enabled                 bool   // default true
	Scope                   string // workspace-root (default) | directory
	AcceptBypassPermissions string // auto (default) | always | never
}

// Service is `service`: the control-plane REST/MCP service.
type Service struct {
	Enabled    bool   // default true
	Host       string // default 127.0.0.1
	Port       int    // default 4114
	Exposed    bool   // default false
	AutoStart  bool   // default true
	MCPEnabled bool   // service.mcp.enabled, default true
	// TokenEnv names the env var holding the operator's bearer token (""
	// = the token file <state.root>/service.token).
	TokenEnv string
	// Socket is service.socket resolved ("" = <state.root>/service.sock):
	// the unix socket of the owner's channel (Config.SocketPath).
	Socket string
	// Auth is service.auth: "token" (default) requires a credential on
	// every route but health; "none" turns that off (refused together with
	// service.exposed: true).
	Auth string
	// AllowedHosts is the Host-header allow-list; nil means the defaults
	// derived from Host and Port.
	AllowedHosts []string
	MaxBodyBytes int64 // default 1 MiB
	// WebEnabled is service.web.enabled (default true): the dashboard at /.
	WebEnabled bool
	// StreamEnabled is service.stream.enabled (default true): GET /api/v1/stream.
	StreamEnabled bool
	// StreamMaxSubscribers is service.stream.maxSubscribers (default 8, at
	// least 1): open streams beyond it are answered 503.
	StreamMaxSubscribers int
	// StreamKeepAliveSeconds is service.stream.keepAliveSeconds (default
	// 15, at least 1): the interval of a stream's keep-alive comments.
	StreamKeepAliveSeconds int
	// Log is service.log: the service log's format, level and rotation.
	Log Log
}

// Log is service.log: how the service writes its own log.
type Log struct {
	Format    string // service.log.format: text (default) | json
	Level     string // service.log.level: debug | info (default) | warn | error
	MaxSizeMB int    // service.log.maxSizeMB (default 10, at least 1): rotation size of service.log
	MaxFiles  int    // service.log.maxFiles (default 5, at least 0; 0 keeps all): rotated files kept
}

// The values of service.auth.
const (
	AuthToken = "token" // a credential on every route but health (default)
	AuthNone  = "none"  // no credential asked (never with service.exposed)
)

// AuthOff reports whether service.auth is "none".
func (s Service) AuthOff() bool { return s.Auth == AuthNone }

// Addr is host:port for listening and dialling.
func (s Service) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// EventLog is `eventLog`.
type EventLog struct {
	Enabled bool // default true
	// Path is eventLog.path as written (the Go version keeps events in the store).
	Path      string
	MaxEvents int   // default 100000
	MaxBytes  int64 // default 256 MiB: the event log's envelopes, in bytes
}

// Slack is channels.slack.
type Slack struct {
	Enabled         bool
	BotTokenEnv     string   // default THE_LOOP_SLACK_BOT_TOKEN
	AppTokenEnv     string   // default THE_LOOP_SLACK_APP_TOKEN
	Channel         string   // central channel id
	APIURL          string   // channels.slack.apiUrl ("" = Slack's own)
	Events          []string // default ["session.awaiting_input"]
	Verbosity       string   // quiet | normal (default) | verbose
	AuthorizedUsers []string // empty admits nobody
	ReadMode        string   // read.mode: poll (default) | socket | off
	IntervalSeconds int      // read.intervalSeconds, default 30
	// RetrySeconds is retrySeconds (default 600, at least 1): how long a
	// reply to a session that cannot take it (stopped, restarting, not
	// ready) is kept for delivery before it is dropped.
	RetrySeconds int
	// PostReplies is postReplies (default false): a standing session's
	// answer to a reply from its thread is posted there.
	PostReplies bool
}

// PostReplies reports whether standing session name's answers to replies
// from its thread are posted there: its slack.postReplies, else
// channels.slack.postReplies.
func (c *Config) PostReplies(name string) bool {
	if d, ok := c.Standing.Get(name); ok && d.SlackPostReplies != nil {
		return *d.SlackPostReplies
	}
	return c.Slack.PostReplies
}

// PollInterval is the poll-mode cadence.
func (s Slack) PollInterval() time.Duration { return time.Duration(s.IntervalSeconds) * time.Second }

// RetryWindow is how long a reply waits for its session (retrySeconds).
func (s Slack) RetryWindow() time.Duration {
	return time.Duration(max(1, s.RetrySeconds)) * time.Second
}

// Default returns the config used when there is no file: every default of
// the original, no standing sessions.
func Default() *Config {
	return &Config{
		Raw:       map[string]any{},
		StateRoot: ".the-loop",
		Routing: Routing{
			DefaultHarness: "claude",
			HarnessArgs:    map[string][]string{},
			SpawnWorkdir:   ".",
			Tmux: Tmux{
				RemainOnExit:            true,
				ResumeOnRespawn:         true,
				ResumeProbeSeconds:      2,
				HarnessKillGraceSeconds: 5,
				SubmitDelayMs:           50,
				ReadySeconds:            30,
				SubmitSeconds:           10,
				KeepSessionOnClose:      true,
				KillHarnessOnClose:      true,
			},
			HarnessTrust:    HarnessTrust{Enabled: true, Scope: "workspace-root", AcceptBypassPermissions: "auto"},
			ControlKeywords: controlKeywords(nil),
		},
		Service: Service{
			Enabled:      true,
			Host:         "127.0.0.1",
			Port:         4114,
			AutoStart:    true,
			MCPEnabled:   true,
			Auth:         AuthToken,
			MaxBodyBytes: 1 << 20,

			WebEnabled:             true,
			StreamEnabled:          true,
			StreamMaxSubscribers:   8,
			StreamKeepAliveSeconds: 15,

			Log: Log{Format: "text", Level: "info", MaxSizeMB: 10, MaxFiles: 5},
		},
		EventLog: EventLog{Enabled: true, MaxEvents: 100000, MaxBytes: 256 << 20},
		Slack: Slack{
			BotTokenEnv: "THE_LOOP_SLACK_BOT_TOKEN",
			AppTokenEnv: "THE_LOOP_SLACK_APP_TOKEN",
			Events:      []string{"session.awaiting_input"},
			Verbosity:   "normal",
			ReadMode:    "poll",
			// AuthorizedUsers stays empty: nobody is admitted.
			IntervalSeconds: 30,
			RetrySeconds:    600,
		},
		GitHubBinary: "gh",
		Standing:     &StandingConfig{},
		Supervision:  DefaultSupervision(),
	}
}

// StateDir is the absolute state root: state.root with a leading ~ expanded,
// resolved against the project directory (ProjectDir; the working directory
// when there is no config file).
func (c *Config) StateDir() string { return c.ResolvePath(c.StateRoot) }

// SocketFile is the service socket's name in the state root.
const SocketFile = "service.sock"

// MaxSocketPath is the longest socket path the service binds: a socket
// address (sun_path) holds 104 bytes on macOS, 108 on Linux, with its NUL.
const MaxSocketPath = 100

// SocketPath is the unix socket the service listens on: service.socket
// resolved (against the config file's directory, ~ against home), else
// <state.root>/service.sock.
func (c *Config) SocketPath() string {
	if c.Service.Socket != "" {
		return c.ResolvePath(c.Service.Socket)
	}
	return filepath.Join(c.StateDir(), SocketFile)
}

// CwdStateDir is where state.root pointed before decisions D27: resolved
// against the working directory. It is "" when that is StateDir (state.root
// absolute or under ~, no config file, or run from the project directory),
// so a non-empty answer is a store that may have been left behind.
func (c *Config) CwdStateDir() string {
	old := absPath(c.StateRoot)
	if old == c.StateDir() {
		return ""
	}
	return old
}

// ResolvePath makes a path from the config absolute: a leading ~ expanded,
// a relative path joined to ProjectDir (to the working directory when it
// is ""). "" stays "".
func (c *Config) ResolvePath(p string) string {
	if p == "" {
		return ""
	}
	p = ExpandHome(p)
	if c.ProjectDir == "" || filepath.IsAbs(p) {
		return absPath(p)
	}
	return filepath.Join(c.ProjectDir, p)
}

// ProjectDir returns the project directory of the config file at path: the
// directory that holds the .the-loop folder the file lives in
// (<proj>/.the-loop/cli-config.yaml gives <proj>), else the file's own
// directory; "" when path is "".
func ProjectDir(path string) string {
	if path == "" {
		return ""
	}
	dir := filepath.Dir(absPath(path))
	if filepath.Base(dir) == ".the-loop" {
		return filepath.Dir(dir)
	}
	return dir
}

// resolvePaths sets ProjectDir from Path and makes the config's relative
// paths absolute with it (decisions D27): routing.spawnWorkdir and each
// standing session's cwd and promptFile. harnessArgs pass verbatim. With no
// config file nothing changes: paths resolve against the working directory
// where they are used, as before.
func (c *Config) resolvePaths() {
	c.ProjectDir = ProjectDir(c.Path)
	if c.ProjectDir == "" {
		return
	}
	c.Routing.SpawnWorkdir = c.ResolvePath(c.Routing.SpawnWorkdir)
	if c.Standing == nil {
		return
	}
	for i := range c.Standing.Sessions {
		d := &c.Standing.Sessions[i]
		d.Cwd = c.ResolvePath(d.Cwd)
		d.PromptFile = c.ResolvePath(d.PromptFile)
	}
}

// absPath expands a leading ~ and makes p absolute (p as given when the
// working directory cannot be read).
func absPath(p string) string {
	p = ExpandHome(p)
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// ExpandHome replaces a leading "~" or "~/" with the home directory, as
// the original's expanduser does; any other path, or one read when the home
// directory is unknown, is returned as given. It is the one expansion every
// config path and CLI flag goes through (state.root, promptFile, cwd,
// --prompt-file, --cwd).
func ExpandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return home + p[1:]
		}
	}
	return p
}

// seconds converts a non-negative number of seconds to a duration.
func seconds(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

// mapping returns v as a mapping, or nil.
func mapping(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// str returns m[key] when it is a string, else def.
func str(m map[string]any, key, def string) string {
	if s, ok := m[key].(string); ok {
		return s
	}
	return def
}

// nonEmpty is str where an empty string also means the default.
func nonEmpty(m map[string]any, key, def string) string {
	if s := str(m, key, ""); s != "" {
		return s
	}
	return def
}

// boolean returns m[key] when it is a boolean, else def.
func boolean(m map[string]any, key string, def bool) bool {
	if b, ok := m[key].(bool); ok {
		return b
	}
	return def
}

// number returns m[key] as a float when it is a number, else def.
func number(m map[string]any, key string, def float64) float64 {
	switch v := m[key].(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case float64:
		return v
	}
	return def
}

// StringMap is a mapping's string entries (scalars rendered as strings;
// nil when v is not a mapping or is empty): routing.harnessEnv,
// standingSessions.sessions[].env.
func StringMap(v any) map[string]string {
	m := mapping(v)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		if e != nil {
			out[k] = scalarString(e)
		}
	}
	return out
}

// stringList returns v as strings when it is a list (elements stringified,
// as the original does); ok is false for anything else. An empty list gives
// an empty, non-nil slice.
func stringList(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, scalarString(e))
	}
	return out, true
}

// scalarString renders a scalar as the original's str() would.
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return describe(x)
	}
}

// truthy is Python truthiness, which the original applies to enabled,
// autoStart and slack.enabled.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case int64:
		return x != 0
	case uint64:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}
