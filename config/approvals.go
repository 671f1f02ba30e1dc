package config

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// ApprovalsConfig is standingSessions.approvals: the rules every standing
// session's PreToolUse hook decides by, how long a permission request
// waits for a decision, and which agents decide for which sessions.
type ApprovalsConfig struct {
	// WaitSeconds is waitSeconds as written (1..86400); 0 when it is not
	// written. ApprovalWait is what a wait lasts.
	WaitSeconds int
	// Rules are the shared rules in config order, each one checked (a
	// refused rule is left out): every session's, after its entry's own.
	Rules []loop.ApprovalRule
	// Deciders maps an agent session's name to the path.Match globs of the
	// session names whose approvals it may decide (nil: nobody may).
	Deciders map[string][]string
}

// maxWaitSeconds is the longest waitSeconds: a day.
const maxWaitSeconds = 86400

// dontAsk is the permission mode whose ask rules are refused: how Claude
// Code treats a PreToolUse hook's ask there is not measured.
const dontAsk = "dontAsk"

// RulesFor is the approval rules of the session def defines, in the
// order they are evaluated: its entry's own, then the shared ones (a
// created session's definition has none of its own). nil when there are
// none; the slice is the caller's.
func (s *StandingConfig) RulesFor(def loop.StandingDefinition) []loop.ApprovalRule {
	var shared []loop.ApprovalRule
	if s != nil {
		shared = s.Approvals.Rules
	}
	if len(def.ApprovalRules)+len(shared) == 0 {
		return nil
	}
	return slices.Concat(def.ApprovalRules, shared)
}

// ApprovalWait is how long a permission request waits for a decision:
// waitSeconds, else loop.DefaultApprovalWait.
func (s *StandingConfig) ApprovalWait() time.Duration {
	if s == nil || s.Approvals.WaitSeconds <= 0 {
		return loop.DefaultApprovalWait
	}
	return time.Duration(s.Approvals.WaitSeconds) * time.Second
}

// MayDecide reports whether the agent session decider may decide the
// approvals of session: one of its globs in deciders matches session's
// name. A session never decides for itself, and nobody is granted
// anything by default.
func (s *StandingConfig) MayDecide(decider, session string) bool {
	if s == nil || decider == session {
		return false
	}
	for _, glob := range s.Approvals.Deciders[decider] {
		if ok, err := path.Match(glob, session); ok && err == nil {
			return true
		}
	}
	return false
}

var approvalsPath = blockPath.child("approvals")

// parseApprovals reads standingSessions.approvals out of block; mode is
// standingSessions.permissionMode. Every problem is returned, and what is
// refused is left out of the result (a waitSeconds out of range is unset,
// a bad rule, decider or glob dropped). askAt are the config indices of
// the shared ask rules kept, for the entries' own dontAsk check.
func parseApprovals(block map[string]any, mode string) (out ApprovalsConfig, askAt []int, problems []problem) {
	raw := block["approvals"]
	if raw == nil {
		return out, nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return out, nil, []problem{{path: approvalsPath, cover: approvalsPath,
			msg: fmt.Sprintf("approvals must be a mapping of waitSeconds, rules and deciders, got %s", kindOf(raw))}}
	}
	out.WaitSeconds, problems = parseWait(m)
	rules, indices, found := parseRules(approvalsPath.child("rules"), "", m)
	problems = append(problems, found...)
	for n, r := range rules {
		at := approvalsPath.child("rules").child(indices[n])
		switch {
		case r.Decision == loop.RuleAsk && mode == dontAsk:
			problems = append(problems, problem{path: at.child("decision"), cover: at,
				msg: "an ask rule is not measured in dontAsk mode (standingSessions.permissionMode, which created sessions and the entries without a mode of their own take); drop the rule or pick another permissionMode"})
			continue
		case r.Decision == loop.RuleAsk:
			askAt = append(askAt, indices[n])
		}
		out.Rules = append(out.Rules, r)
	}
	var bad []problem
	out.Deciders, bad = parseDeciders(m["deciders"])
	return out, askAt, append(problems, bad...)
}

// parseWait reads waitSeconds: a whole number of seconds from 1 to
// maxWaitSeconds (0 when absent or refused).
func parseWait(m map[string]any) (int, []problem) {
	raw, present := m["waitSeconds"]
	if !present {
		return 0, nil
	}
	var n int
	switch v := raw.(type) {
	case int:
		n = v
	case float64:
		if v == float64(int(v)) {
			n = int(v)
		}
	}
	if n < 1 || n > maxWaitSeconds {
		at := approvalsPath.child("waitSeconds")
		return 0, []problem{{path: at, cover: at,
			msg: fmt.Sprintf("%s is not a whole number of seconds from 1 to %d; waitSeconds is how long a permission request waits for a decision (default %d)", describe(raw), maxWaitSeconds, int(loop.DefaultApprovalWait/time.Second))}}
	}
	return n, nil
}

// parseRules reads the rules list of m (an approvals mapping) found at
// at; label names the entry whose list it is ("" for the shared one). It
// returns the rules that have no problem with the index each had in the
// list, and every problem.
func parseRules(at keyPath, label string, m map[string]any) ([]loop.ApprovalRule, []int, []problem) {
	raw, present := m["rules"]
	if !present {
		return nil, nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, nil, []problem{{path: at, label: label, cover: at,
			msg: fmt.Sprintf("rules must be a list of {tool, match, decision, message} mappings, got %s", kindOf(raw))}}
	}
	var (
		rules    []loop.ApprovalRule
		indices  []int
		problems []problem
	)
	for i, item := range list {
		r, found := checkRule(at.child(i), label, item)
		if len(found) > 0 {
			problems = append(problems, found...)
			continue
		}
		rules = append(rules, r)
		indices = append(indices, i)
	}
	return rules, indices, problems
}

// checkRule reads the rule item found at at (label as parseRules'): a
// mapping with a tool, a decision of loop.RuleDecisions, and a match and
// message that are strings — a match only where the tool has something to
// match, and a valid path.Match pattern where it is a path. It returns
// every problem found.
func checkRule(at keyPath, label string, item any) (loop.ApprovalRule, []problem) {
	m, ok := item.(map[string]any)
	if !ok {
		return loop.ApprovalRule{}, []problem{{path: at, label: label, cover: at,
			msg: fmt.Sprintf("a rule must be a mapping of tool, match, decision and message, got %s %s", kindOf(item), describe(item))}}
	}
	var problems []problem
	strField := func(key, want string) string {
		v, present := m[key]
		s, isString := v.(string)
		if present && !isString {
			problems = append(problems, problem{path: at.child(key), label: label, cover: at.child(key),
				msg: fmt.Sprintf("expected %s, got %s %s", want, kindOf(v), describe(v))})
		}
		return s
	}
	r := loop.ApprovalRule{
		Tool:     strField("tool", "a tool name (Bash, Write, Edit, …) or '*'"),
		Match:    strField("match", "a string (a glob)"),
		Decision: strField("decision", "one of: "+strings.Join(loop.RuleDecisions, ", ")),
		Message:  strField("message", "a string"),
	}
	if len(problems) > 0 {
		return r, problems
	}
	problems = append(problems, checkRuleTool(at, label, m, r)...)
	problems = append(problems, checkRuleDecision(at, label, m, r)...)
	return r, problems
}

// checkRuleTool is checkRule's tool and match: a tool is named, and a
// match is one the tool can be matched by.
func checkRuleTool(at keyPath, label string, m map[string]any, r loop.ApprovalRule) []problem {
	if r.Tool == "" {
		msg := "the rule names no tool"
		if _, present := m["tool"]; present {
			msg = "tool is empty"
		}
		return []problem{{path: at, label: label, cover: at.child("tool"),
			msg: msg + "; set tool to the tool's name as Claude Code names it (Bash, Write, Edit, MultiEdit, NotebookEdit, Read, …) or '*' for any tool"}}
	}
	if r.Match == "" {
		return nil
	}
	key := loop.ApprovalRuleKey(r.Tool)
	if key == "" && r.Tool != "*" {
		return []problem{{path: at.child("match"), label: label, cover: at.child("match"),
			msg: fmt.Sprintf("'%s' has nothing to match for tool %s: only Bash's command and the file tools' paths (Write, Edit, MultiEdit, Read, NotebookEdit) are matched; drop match to apply the rule to every %s call", r.Match, r.Tool, r.Tool)}}
	}
	if key == "command" {
		return nil // every string is a command glob
	}
	if _, err := path.Match(r.Match, ""); err != nil {
		msg := fmt.Sprintf("'%s' is not a path pattern Go's path.Match accepts (%v); escape a literal [ or \\ with \\", r.Match, err)
		if r.Tool == "*" {
			msg += ", or set tool: Bash if the rule is for commands only (tool '*' also matches the file tools' paths)"
		}
		return []problem{{path: at.child("match"), label: label, cover: at.child("match"), msg: msg}}
	}
	return nil
}

// checkRuleDecision is checkRule's decision: present and one of
// loop.RuleDecisions.
func checkRuleDecision(at keyPath, label string, m map[string]any, r loop.ApprovalRule) []problem {
	allowed := strings.Join(loop.RuleDecisions, ", ")
	if _, present := m["decision"]; !present {
		return []problem{{path: at, label: label, cover: at.child("decision"),
			msg: "the rule has no decision; set decision to one of: " + allowed}}
	}
	if !slices.Contains(loop.RuleDecisions, r.Decision) {
		return []problem{{path: at.child("decision"), label: label, cover: at.child("decision"),
			msg: fmt.Sprintf("'%s' is not one of: %s (allow runs the tool without a dialog, deny refuses it, ask sends it to an approval)", r.Decision, allowed)}}
	}
	return nil
}

// parseDeciders reads approvals.deciders: a mapping of standing-session
// names to lists of path.Match globs of session names. A decider whose
// name or list is refused is left out, and so is a glob that is refused.
func parseDeciders(raw any) (map[string][]string, []problem) {
	at := approvalsPath.child("deciders")
	if raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, []problem{{path: at, cover: at,
			msg: fmt.Sprintf("deciders must be a mapping of an agent session's name to the globs of the session names it decides for (e.g. {supervisor: [\"worker-*\"]}), got %s", kindOf(raw))}}
	}
	var (
		out      map[string][]string
		problems []problem
	)
	for _, name := range slices.Sorted(maps.Keys(m)) {
		globs, found := checkDecider(at.child(name), name, m[name])
		problems = append(problems, found...)
		if len(found) == 0 || len(globs) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[name] = globs
		}
	}
	return out, problems
}

// checkDecider reads the globs of the decider name found at at, returning
// those that are valid and a problem for each one that is not (a name
// that is not a session's, or a value that is not a list, refuses all).
func checkDecider(at keyPath, name string, raw any) ([]string, []problem) {
	if !loop.ValidName(name) {
		return nil, []problem{{path: at, cover: at,
			msg: fmt.Sprintf("'%s' is not a standing session's name (lowercase letters/digits/hyphens starting with a letter or digit, max 40), e.g. '%s'; a decider is the agent session that decides", name, ValidNameLike(name))}}
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, []problem{{path: at, cover: at,
			msg: fmt.Sprintf("expected a list of globs of session names (e.g. [\"worker-*\"]), got %s %s", kindOf(raw), describe(raw))}}
	}
	globs := make([]string, 0, len(list))
	var problems []problem
	for j, e := range list {
		glob, isString := e.(string)
		_, err := path.Match(glob, "")
		switch {
		case !isString:
			problems = append(problems, problem{path: at.child(j), cover: at.child(j),
				msg: fmt.Sprintf("expected a glob of session names (a string), got %s %s", kindOf(e), describe(e))})
		case err != nil:
			problems = append(problems, problem{path: at.child(j), cover: at.child(j),
				msg: fmt.Sprintf("'%s' is not a glob Go's path.Match accepts (%v); use * and ? over session names, e.g. 'worker-*'", glob, err)})
		default:
			globs = append(globs, glob)
		}
	}
	return globs, problems
}

// parseEntryApprovals reads an entry's own approvals (its rules) out of
// entry, found at at; label is the entry's name. An entry with a problem
// gives no definition, so on a problem the rules returned are unused.
func parseEntryApprovals(at keyPath, label string, entry map[string]any) ([]loop.ApprovalRule, []problem) {
	raw := entry["approvals"]
	if raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, []problem{{path: at, label: label, cover: at.child("approvals"),
			msg: fmt.Sprintf("approvals must be a mapping with the entry's rules, got %s", kindOf(raw))}}
	}
	rules, _, problems := parseRules(at.child("approvals").child("rules"), label, m)
	return rules, problems
}

// checkAskInDontAsk refuses the ask rules of the entry def at at when its
// permission mode (def.PermissionMode, the block's applied) is dontAsk:
// its own (each at its decision) and the shared ones kept (askAt, their
// indices in standingSessions.approvals.rules).
func checkAskInDontAsk(at keyPath, def loop.StandingDefinition, askAt []int) []problem {
	if def.PermissionMode != dontAsk {
		return nil
	}
	const why = "an ask rule is not measured in dontAsk mode; drop the rule or pick another permissionMode"
	var problems []problem
	for j, r := range def.ApprovalRules {
		if r.Decision == loop.RuleAsk {
			d := at.child("approvals").child("rules").child(j).child("decision")
			problems = append(problems, problem{path: d, label: def.Name, cover: d, msg: why})
		}
	}
	for _, k := range askAt {
		problems = append(problems, problem{path: at, label: def.Name, cover: at.child("permissionMode"),
			msg: fmt.Sprintf("permissionMode dontAsk meets the ask rule standingSessions.approvals.rules[%d]: %s", k, why)})
	}
	return problems
}
