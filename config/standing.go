package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// StandingConfig is the parsed standingSessions block.
type StandingConfig struct {
	// Enabled is standingSessions.enabled: it gates only the-loop start's
	// auto-start.
	Enabled bool
	// Sessions are the declared entries in config order, defaults applied,
	// each with Declared set.
	Sessions []loop.StandingDefinition
	// PermissionMode is standingSessions.permissionMode: the claude
	// sessions' --permission-mode where an entry sets none ("": the CLI's
	// own default). It applies to created sessions too.
	PermissionMode string
	// Approvals is standingSessions.approvals: the shared approval rules,
	// the wait of a permission request and the deciders
	// (config/approvals.go).
	Approvals ApprovalsConfig
}

// PermissionModes are the values of permissionMode: the claude CLI's
// --permission-mode (2.1.332; default is manual's other name).
// bypassPermissions is refused but for an entry that also sets
// allowBypassPermissions: true.
var PermissionModes = []string{"manual", "default", "auto", "acceptEdits", "dontAsk", "plan", "bypassPermissions"}

// ModeFor is the --permission-mode a session of harness with its own
// mode gets: its own, else the block's, for claude only ("" for none).
func (s *StandingConfig) ModeFor(harness, own string) string {
	if harness != "claude" {
		return ""
	}
	if own != "" || s == nil {
		return own
	}
	return s.PermissionMode
}

// Get returns the declared entry called name.
func (s *StandingConfig) Get(name string) (loop.StandingDefinition, bool) {
	if s == nil {
		return loop.StandingDefinition{}, false
	}
	for _, d := range s.Sessions {
		if d.Name == name {
			return cloneDefinition(d), true
		}
	}
	return loop.StandingDefinition{}, false
}

// Names lists the declared names in config order.
func (s *StandingConfig) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.Sessions))
	for i, d := range s.Sessions {
		out[i] = d.Name
	}
	return out
}

// cloneDefinition copies d so a caller cannot alter the config's slices.
func cloneDefinition(d loop.StandingDefinition) loop.StandingDefinition {
	if d.HarnessArgs != nil {
		d.HarnessArgs = slices.Clone(d.HarnessArgs)
	}
	d.Env = maps.Clone(d.Env)
	if d.ApprovalRules != nil {
		d.ApprovalRules = slices.Clone(d.ApprovalRules)
	}
	return d
}

var (
	blockPath    = keyPath{"standingSessions"}
	sessionsPath = keyPath{"standingSessions", "sessions"}
)

// parseStanding is the original's StandingConfig.from_mapping, steps 1–10 of
// original §1.2 in that order per entry, with the routing defaults
// taken from r, and standingSessions.approvals (config/approvals.go) read
// before the entries, whose ask rules it checks against each entry's
// permission mode. It does not stop at the first problem: it returns
// every problem it finds, and the entries that had none (an entry whose name
// an earlier entry already declared is not one of them).
func parseStanding(doc map[string]any, r Routing) (*StandingConfig, []problem) {
	out := &StandingConfig{}
	raw, present := doc["standingSessions"]
	// 1. Absent, null or empty: disabled, no sessions.
	if !present || raw == nil {
		return out, nil
	}
	block, ok := raw.(map[string]any)
	// 2. Not a mapping.
	if !ok {
		return out, []problem{{
			path:  blockPath,
			msg:   fmt.Sprintf("the section is not a mapping (got %s); expected `enabled` and `sessions`", kindOf(raw)),
			cover: blockPath,
		}}
	}
	out.Enabled = truthy(block["enabled"])
	var problems []problem
	if out.PermissionMode, _ = block["permissionMode"].(string); out.PermissionMode == "bypassPermissions" {
		out.PermissionMode = ""
		problems = append(problems, problem{path: blockPath.child("permissionMode"), cover: blockPath.child("permissionMode"),
			msg: "permissionMode bypassPermissions runs every tool unasked and is never a default; set it on the one entry that needs it, with allowBypassPermissions: true"})
	}
	approvals, askAt, found := parseApprovals(block, out.PermissionMode)
	out.Approvals = approvals
	problems = append(problems, found...)
	// 3. Defaults come from routing (already read leniently into r).
	rawSessions, present := block["sessions"]
	if !present {
		return out, problems
	}
	list, ok := rawSessions.([]any)
	// 4. Not a list (a string is not a list).
	if !ok {
		return out, append(problems, problem{
			path:  sessionsPath,
			msg:   fmt.Sprintf("expected a list of entries, got %s", kindOf(rawSessions)),
			cover: sessionsPath,
		})
	}
	seen := map[string]int{}
	for i, item := range list {
		def, found := parseEntry(i, item, seen, r)
		if len(found) == 0 {
			found = checkPermission(sessionsPath.child(i), def, out)
			def.PermissionMode = out.ModeFor(def.Harness, def.PermissionMode)
			found = append(found, checkAskInDontAsk(sessionsPath.child(i), def, askAt)...)
		}
		if len(found) > 0 {
			problems = append(problems, found...)
			continue
		}
		out.Sessions = append(out.Sessions, def)
	}
	return out, problems
}

// parseEntry is steps 5–10 for the entry at sessions[i]: its shape, its
// name (seen holds the names earlier entries declared, and gains this
// one's when it is new), then the fields that exclude each other or must
// be of one kind, then its own approvals.rules. An entry with any problem
// gives no definition: every one of its problems is returned, in step
// order.
func parseEntry(i int, item any, seen map[string]int, r Routing) (loop.StandingDefinition, []problem) {
	at := sessionsPath.child(i)
	// 5. Entry not a mapping.
	entry, ok := item.(map[string]any)
	if !ok {
		return loop.StandingDefinition{}, []problem{{path: at, msg: fmt.Sprintf("expected a mapping, got %s", kindOf(item)), cover: at}}
	}
	name, isString, problems := checkName(at, i, entry, seen)
	label := ""
	if isString {
		label = name
	}
	problems = append(problems, checkFields(at, label, entry)...)
	rules, found := parseEntryApprovals(at, label, entry)
	problems = append(problems, found...)
	if len(problems) > 0 {
		return loop.StandingDefinition{}, problems
	}
	def := definition(name, entry, r)
	def.ApprovalRules = rules
	return def, nil
}

// checkPermission refuses what an entry's permission mode cannot be (def
// carries the entry's own mode): a mode on a harness other than claude,
// bypassPermissions without allowBypassPermissions, and a mode — its own
// or the block's — beside a --permission-mode or
// --dangerously-skip-permissions of its harnessArgs, which would say two
// things.
func checkPermission(at keyPath, def loop.StandingDefinition, block *StandingConfig) []problem {
	label, own := def.Name, def.PermissionMode
	switch {
	case own != "" && def.Harness != "claude":
		return []problem{{path: at, label: label, cover: at.child("permissionMode"),
			msg: fmt.Sprintf("permissionMode is a Claude Code setting; harness %s has none — remove permissionMode, or use harness claude", def.Harness)}}
	case own == "bypassPermissions" && !def.AllowBypassPermissions:
		return []problem{{path: at, label: label, cover: at.child("permissionMode"),
			msg: "permissionMode bypassPermissions runs every tool unasked; set allowBypassPermissions: true beside it to mean it, or choose another mode"}}
	}
	mode := block.ModeFor(def.Harness, own)
	if mode == "" {
		return nil
	}
	for _, a := range def.HarnessArgs {
		if flag, _, _ := strings.Cut(a, "="); flag == "--permission-mode" || flag == "--dangerously-skip-permissions" {
			return []problem{{path: at, label: label, cover: at.child("permissionMode"),
				msg: fmt.Sprintf("permissionMode %s and harnessArgs' %s both set the permission mode; keep one", mode, flag)}}
		}
	}
	return nil
}

// checkName is steps 6 and 7 for the entry at at, sessions[i]: a name is
// present, is a valid standing-session name, and no earlier entry declared
// it (seen maps each name declared to its index; a new name is added). It returns the name as written, whether it
// was a string (a string names the entry in the other steps' problems),
// and the problem found, if any.
func checkName(at keyPath, i int, entry map[string]any, seen map[string]int) (name string, isString bool, _ []problem) {
	// 6. The name.
	name, isString = entry["name"].(string)
	switch {
	case entry["name"] == nil:
		return name, isString, []problem{{path: at, cover: at.child("name"),
			msg: "name is missing; every entry needs one of lowercase letters/digits/hyphens starting with a letter or digit (max 40), as it becomes a tmux session and a file name"}}
	case !isString || !loop.ValidName(name):
		return name, isString, []problem{{path: at.child("name"), cover: at.child("name"),
			msg: fmt.Sprintf("%s is not lowercase letters/digits/hyphens starting with a letter or digit (max 40), e.g. '%s'; the name becomes a tmux session and a file name", describe(entry["name"]), ValidNameLike(scalarString(entry["name"])))}}
	}
	// 7. Duplicates.
	if first, dup := seen[name]; dup {
		return name, isString, []problem{{path: at, cover: at.child("name"),
			msg: fmt.Sprintf("name '%s' is already declared at sessions[%d]; two entries with one name have no defined winner", name, first)}}
	}
	seen[name] = i
	return name, isString, nil
}

// checkFields is steps 8–10 for the entry at at (label is its name, when
// it has a string one): prompt and promptFile are not both set, and
// harnessArgs, env and slack, when present, are of their kind. It returns
// every problem found, in step order.
func checkFields(at keyPath, label string, entry map[string]any) []problem {
	var problems []problem
	// 8. prompt and promptFile together.
	if truthy(entry["prompt"]) && truthy(entry["promptFile"]) {
		problems = append(problems, problem{path: at, label: label,
			msg: "declares both `prompt` and `promptFile`; there is no precedence between them — keep one"})
	}
	// 9. harnessArgs present but not a list.
	argsRaw, hasArgs := entry["harnessArgs"]
	if _, argsOK := stringList(argsRaw); hasArgs && !argsOK {
		problems = append(problems, problem{path: at, label: label, cover: at.child("harnessArgs"),
			msg: fmt.Sprintf("harnessArgs must be a list of strings, got %s", kindOf(argsRaw))})
	}
	// 9b. env present but not a mapping.
	envRaw, hasEnv := entry["env"]
	if _, envOK := envRaw.(map[string]any); hasEnv && envRaw != nil && !envOK {
		problems = append(problems, problem{path: at, label: label, cover: at.child("env"),
			msg: fmt.Sprintf("env must be a mapping of variable names to strings, got %s", kindOf(envRaw))})
	}
	// 10. slack present but not a mapping.
	slackRaw, hasSlack := entry["slack"]
	if _, slackOK := slackRaw.(map[string]any); hasSlack && !slackOK {
		problems = append(problems, problem{path: at, label: label, cover: at.child("slack"),
			msg: fmt.Sprintf("slack must be a mapping, got %s", kindOf(slackRaw))})
	}
	return problems
}

// definition builds the definition of a valid entry called name: the
// routing defaults of r fill harness and cwd, autoStart is on unless the
// entry says otherwise, and harnessArgs, when the entry gives none, are
// its harness's from routing (an explicit list, [] included, is kept).
func definition(name string, entry map[string]any, r Routing) loop.StandingDefinition {
	slack, _ := entry["slack"].(map[string]any)
	def := loop.StandingDefinition{
		Name:         name,
		Description:  str(entry, "description", ""),
		Harness:      nonEmpty(entry, "harness", r.DefaultHarness),
		Cwd:          nonEmpty(entry, "cwd", r.SpawnWorkdir),
		Prompt:       str(entry, "prompt", ""),
		PromptFile:   str(entry, "promptFile", ""),
		Env:          StringMap(entry["env"]),
		AutoStart:    true,
		SlackEnabled: truthy(slack["enabled"]),
		SlackChannel: str(slack, "channel", ""),
		Declared:     true,
		Restart:      str(entry, "restart", ""),
		// the block's mode, when it sets none, is applied by parseStanding
		PermissionMode:         str(entry, "permissionMode", ""),
		AllowBypassPermissions: truthy(entry["allowBypassPermissions"]),
	}
	if v, ok := entry["autoStart"]; ok {
		def.AutoStart = truthy(v)
	}
	if v, ok := slack["postReplies"]; ok {
		b := truthy(v)
		def.SlackPostReplies = &b
	}
	if args, hasArgs := entry["harnessArgs"]; hasArgs {
		def.HarnessArgs, _ = stringList(args) // explicit, [] included: none
	} else if inherited, ok := r.HarnessArgs[def.Harness]; ok {
		def.HarnessArgs = slices.Clone(inherited)
	}
	return def
}

// ValidNameLike is a valid standing-session name close to s, to show next
// to an invalid one: lowercased, every run of other characters made one
// hyphen, trimmed to 40 ("supervisor" when nothing is left).
func ValidNameLike(s string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			hyphen = false
		} else if !hyphen && b.Len() > 0 {
			b.WriteByte('-')
			hyphen = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 40 {
		out = strings.Trim(out[:40], "-")
	}
	if !loop.ValidName(out) {
		return "supervisor"
	}
	return out
}
