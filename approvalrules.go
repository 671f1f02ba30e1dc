package loop

import (
	"encoding/json"
	"path"
	"strings"
)

// Approval rules (decisions D35, "rules, decided fast"): the-loop's own
// PreToolUse hook decides a tool use of a standing session's agent from
// the session's rules — its entry's, then standingSessions.approvals' —
// without asking the service, so a deny holds with the service down.
// The first rule that matches decides; with none, the CLI's own rules do.

// ApprovalRule is one entry of standingSessions.approvals.rules or
// standingSessions.sessions[].approvals.rules.
type ApprovalRule struct {
	// Tool is the tool name the rule applies to, exactly as Claude Code
	// names it (Bash, Write, Edit, MultiEdit, NotebookEdit, Read, …), or
	// "*" for any tool.
	Tool string `json:"tool"`
	// Match narrows the rule to some inputs ("" matches any input). For
	// Bash it is a glob over the whole command whose `*` matches any run
	// of characters, `/` included (no other character is special); for a
	// file tool it is a path.Match pattern over the cleaned absolute path
	// (a relative pattern is taken against the session's cwd). A tool
	// that is neither has nothing to match: a rule with a Match never
	// matches it.
	Match string `json:"match,omitempty"`
	// Decision is RuleAllow, RuleDeny or RuleAsk.
	Decision string `json:"decision"`
	// Message is the reason the hook gives with the decision (the model
	// reads a deny's).
	Message string `json:"message,omitempty"`
}

// Decisions of an approval rule: what the PreToolUse hook answers.
const (
	// RuleAllow runs the tool without a dialog (Claude Code does not honour
	// it in plan mode). It never matches a Bash command that chains,
	// pipes, substitutes or redirects (see MatchApprovalRule).
	RuleAllow = "allow"
	// RuleDeny refuses the tool; the model reads the rule's message.
	RuleDeny = "deny"
	// RuleAsk sends the tool use to an approval (PermissionRequest).
	RuleAsk = "ask"
)

// RuleDecisions are the values of an approval rule's decision, in the
// order messages list them.
var RuleDecisions = []string{RuleAllow, RuleDeny, RuleAsk}

// bashTool is the tool whose command an approval rule's Match globs.
const bashTool = "Bash"

// ApprovalRuleKey is the key of tool's input that an approval rule's Match
// is matched against: "command" for Bash, "file_path" for Write, Edit,
// MultiEdit and Read, "notebook_path" for NotebookEdit, "" for any other
// tool (a rule with a Match never matches it).
func ApprovalRuleKey(tool string) string {
	switch tool {
	case bashTool:
		return "command"
	case "Write", "Edit", "MultiEdit", "Read":
		return "file_path"
	case "NotebookEdit":
		return "notebook_path"
	}
	return ""
}

// allowRefusedBytes, with "$(", are what an allow rule refuses to find in
// a Bash command: a command that holds one does more than its text's
// prefix says (it chains, pipes, substitutes or redirects).
const allowRefusedBytes = ";&|`<>\n"

// MatchApprovalRule returns the index of the first rule of rules that
// matches the tool use — tool its name, input its raw JSON tool_input as
// Claude Code's PreToolUse payload carries it, cwd the session's working
// directory — and ok false when none does.
//
// A rule matches when its Tool is tool or "*" and its Match is empty or
// matches the input (ApprovalRule.Match). An input that does not parse,
// or lacks the key Match is taken against, matches only rules with an
// empty Match. An allow rule never matches a Bash command holding `;`,
// `&`, `|`, `$(`, a backquote, `<`, `>` or a newline, nor a Bash input
// whose command cannot be read, even with an empty Match; deny and ask
// rules match such commands. The input is parsed once, and only when a
// rule needs it.
func MatchApprovalRule(rules []ApprovalRule, tool string, input json.RawMessage, cwd string) (int, bool) {
	var (
		subject  string
		have     bool // subject is the input's command or path
		parsed   bool
		refusing bool // subject is a Bash command an allow never matches
	)
	for i := range rules {
		r := &rules[i]
		if r.Tool != tool && r.Tool != "*" {
			continue
		}
		guarded := tool == bashTool && r.Decision == RuleAllow
		if r.Match == "" && !guarded {
			return i, true
		}
		if !parsed {
			subject, have = ruleSubject(tool, input, cwd)
			refusing = have && tool == bashTool && chainsOrRedirects(subject)
			parsed = true
		}
		if !have || guarded && refusing {
			continue
		}
		if r.Match == "" || ruleMatches(tool, r.Match, subject, cwd) {
			return i, true
		}
	}
	return 0, false
}

// ruleInput holds the keys of a tool input approval rules read; a nil
// field is a key the input lacks.
type ruleInput struct {
	Command      *string `json:"command"`
	FilePath     *string `json:"file_path"`
	NotebookPath *string `json:"notebook_path"`
}

// ruleSubject is what tool's rules match in input: a Bash command, or a
// file tool's path made absolute against cwd and cleaned. ok is false for
// an input that does not parse, lacks the key, or belongs to a tool that
// has no subject.
func ruleSubject(tool string, input json.RawMessage, cwd string) (string, bool) {
	key := ApprovalRuleKey(tool)
	if key == "" {
		return "", false
	}
	var in ruleInput
	if json.Unmarshal(input, &in) != nil {
		return "", false
	}
	v := in.FilePath
	switch key {
	case "command":
		v = in.Command
	case "notebook_path":
		v = in.NotebookPath
	}
	if v == nil {
		return "", false
	}
	if tool == bashTool {
		return *v, true
	}
	return absClean(*v, cwd), true
}

// ruleMatches reports whether pattern (not empty) matches subject, a
// command of Bash or a clean absolute path of a file tool.
func ruleMatches(tool, pattern, subject, cwd string) bool {
	if tool == bashTool {
		return commandGlob(pattern, subject)
	}
	ok, err := path.Match(absClean(pattern, cwd), subject)
	return ok && err == nil
}

// chainsOrRedirects reports whether command holds one of
// allowRefusedBytes or "$(".
func chainsOrRedirects(command string) bool {
	return strings.ContainsAny(command, allowRefusedBytes) || strings.Contains(command, "$(")
}

// absClean is p cleaned, joined to cwd first when it is relative (and
// rooted at / when cwd is relative too).
func absClean(p, cwd string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join("/", cwd, p)
}

// commandGlob reports whether the glob pattern matches the whole of s:
// `*` matches any run of bytes, `/` and newlines included; every other
// byte matches itself.
func commandGlob(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0 // the last star seen, and where its run ends in s
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			mark++
			p, i = star+1, mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// preToolUseOutput is the shape of a PreToolUse hook's answer.
type preToolUseOutput struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	} `json:"hookSpecificOutput"`
}

// PreToolUseAnswer is the JSON line a PreToolUse hook prints for a rule's
// decision (one of RuleDecisions) and its reason:
// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}
// — the reason left out when empty, no trailing newline.
func PreToolUseAnswer(decision, reason string) []byte {
	var out preToolUseOutput
	out.HookSpecificOutput.HookEventName = "PreToolUse"
	out.HookSpecificOutput.PermissionDecision = decision
	out.HookSpecificOutput.PermissionDecisionReason = reason
	b, _ := json.Marshal(out) // strings only: cannot fail
	return b
}

// Keys a rule's report adds to the PreToolUse payload it decided: the
// rule's number (1-based, the session's own rules first) and its
// decision.
const (
	RuleReportNumberKey   = "the_loop_rule"
	RuleReportDecisionKey = "the_loop_decision"
)

// RuleReport is what a rule decided for a PreToolUse payload, told to
// the service as a hook payload of its own: the payload's event, session,
// prompt, tool and call ids, with RuleReportNumberKey n and
// RuleReportDecisionKey decision — never the tool's input, so it stays
// small whatever the call carried; nil when payload is not a JSON object.
func RuleReport(payload []byte, n int, decision string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(payload, &m) != nil || m == nil {
		return nil
	}
	out := map[string]json.RawMessage{}
	for _, k := range []string{"hook_event_name", "session_id", "prompt_id", "tool_name", "tool_use_id", "cwd"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	out[RuleReportNumberKey], _ = json.Marshal(n)
	out[RuleReportDecisionKey], _ = json.Marshal(decision)
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}
