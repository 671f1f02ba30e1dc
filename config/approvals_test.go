package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// approvalsBody declares shared approvals and two entries, one with
// rules of its own.
const approvalsBody = `standingSessions:
  approvals:
    waitSeconds: 120
    rules:
      - {tool: Bash, match: "rm -rf *", decision: deny, message: never}
      - {tool: "*", decision: ask}
    deciders:
      supervisor: ["worker-*", "*"]
      auditor: []
  sessions:
    - name: supervisor
    - name: worker-1
      approvals:
        rules:
          - {tool: Write, match: "src/*.go", decision: allow}
`

func TestLoad_ApprovalsAreTheEntrysRulesThenTheShared(t *testing.T) {
	cfg := loadStanding(t, approvalsBody)
	if cfg.StandingErr != nil {
		t.Fatal(cfg.StandingErr)
	}
	own := loop.ApprovalRule{Tool: "Write", Match: "src/*.go", Decision: loop.RuleAllow}
	shared := []loop.ApprovalRule{
		{Tool: "Bash", Match: "rm -rf *", Decision: loop.RuleDeny, Message: "never"},
		{Tool: "*", Decision: loop.RuleAsk},
	}
	worker, _ := cfg.Standing.Get("worker-1")
	if got, want := cfg.Standing.RulesFor(worker), append([]loop.ApprovalRule{own}, shared...); !reflect.DeepEqual(got, want) {
		t.Errorf("worker-1's rules = %+v, want %+v", got, want)
	}
	supervisor, _ := cfg.Standing.Get("supervisor")
	if supervisor.ApprovalRules != nil {
		t.Errorf("supervisor declares no rules of its own, got %+v", supervisor.ApprovalRules)
	}
	if got := cfg.Standing.RulesFor(loop.StandingDefinition{Name: "created"}); !reflect.DeepEqual(got, shared) {
		t.Errorf("a created session's rules = %+v, want the shared ones %+v", got, shared)
	}
	if got := cfg.Standing.ApprovalWait(); got != 120*time.Second {
		t.Errorf("ApprovalWait = %v, want 2m", got)
	}
}

func TestStandingConfig_MayDecideOnlyWhatDecidersGrant(t *testing.T) {
	cfg := loadStanding(t, approvalsBody)
	if cfg.StandingErr != nil {
		t.Fatal(cfg.StandingErr)
	}
	tests := []struct {
		decider, session string
		want             bool
	}{
		{"supervisor", "worker-1", true},
		{"supervisor", "anyone", true}, // its "*"
		{"supervisor", "supervisor", false},
		{"worker-1", "supervisor", false},
		{"auditor", "worker-1", false},
		{"nobody", "worker-1", false},
	}
	for _, tt := range tests {
		if got := cfg.Standing.MayDecide(tt.decider, tt.session); got != tt.want {
			t.Errorf("MayDecide(%q, %q) = %v, want %v", tt.decider, tt.session, got, tt.want)
		}
	}
}

func TestStandingConfig_ApprovalsDefaults(t *testing.T) {
	cfg := loadStanding(t, "standingSessions:\n  sessions:\n    - name: a\n")
	a, _ := cfg.Standing.Get("a")
	var none *StandingConfig
	for name, s := range map[string]*StandingConfig{"no approvals block": cfg.Standing, "nil": none} {
		if got := s.ApprovalWait(); got != 600*time.Second {
			t.Errorf("%s: ApprovalWait = %v, want 10m", name, got)
		}
		if got := s.RulesFor(a); got != nil {
			t.Errorf("%s: RulesFor = %+v, want none", name, got)
		}
		if s.MayDecide("a", "b") {
			t.Errorf("%s: a decides for b with no deciders", name)
		}
	}
	own := loop.StandingDefinition{ApprovalRules: []loop.ApprovalRule{{Tool: "Read", Decision: loop.RuleDeny}}}
	if got := none.RulesFor(own); !reflect.DeepEqual(got, own.ApprovalRules) {
		t.Errorf("nil config: RulesFor = %+v, want the definition's own", got)
	}
}

// The rules handed out are copies: altering them leaves the config's.
func TestStandingConfig_RulesAreTheCallersCopy(t *testing.T) {
	cfg := loadStanding(t, approvalsBody)
	worker, _ := cfg.Standing.Get("worker-1")
	worker.ApprovalRules[0].Decision = loop.RuleDeny
	rules := cfg.Standing.RulesFor(worker)
	rules[1].Decision = loop.RuleAllow
	again, _ := cfg.Standing.Get("worker-1")
	if again.ApprovalRules[0].Decision != loop.RuleAllow {
		t.Errorf("Get shares the entry's rules: %+v", again.ApprovalRules)
	}
	if d := cfg.Standing.Approvals.Rules[0].Decision; d != loop.RuleDeny {
		t.Errorf("RulesFor shares the shared rules: rules[0] is now %q", d)
	}
}

func TestLoad_AcceptsRulesWithoutAMatch(t *testing.T) {
	cfg := loadStanding(t, `standingSessions:
  permissionMode: dontAsk
  approvals:
    rules:
      - {tool: Bash, decision: deny}
      - {tool: Bash, match: "", decision: allow}
      - {tool: WebFetch, decision: deny, message: offline}
  sessions:
    - name: a
      approvals:
        rules: []
`)
	if cfg.StandingErr != nil {
		t.Fatal(cfg.StandingErr)
	}
	if n := len(cfg.Standing.Approvals.Rules); n != 3 {
		t.Errorf("%d shared rules, want 3", n)
	}
}

func TestValidate_RefusesBadApprovalsNamingTheKey(t *testing.T) {
	entry := func(approvals string) string {
		return "standingSessions:\n  sessions:\n    - name: a\n      approvals: " + approvals + "\n"
	}
	shared := func(approvals string) string {
		return "standingSessions:\n  approvals: " + approvals + "\n"
	}
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"an unknown shared decision", shared("{rules: [{tool: Bash, decision: deny}, {tool: Bash, decision: maybe}]}"),
			[]string{"standingSessions.approvals.rules[1].decision: 'maybe' is not one of: allow, deny, ask"}},
		{"an unknown entry decision", entry("{rules: [{tool: Read, decision: 'yes'}]}"),
			[]string{"standingSessions.sessions[0].approvals.rules[0].decision (a): 'yes' is not one of: allow, deny, ask"}},
		{"no decision", shared("{rules: [{tool: Bash}]}"),
			[]string{"standingSessions.approvals.rules[0]: the rule has no decision; set decision to one of: allow, deny, ask"}},
		{"a decision not a string", shared("{rules: [{tool: Bash, decision: true}]}"),
			[]string{"standingSessions.approvals.rules[0].decision: expected one of: allow, deny, ask, got boolean true"}},
		{"no tool", shared("{rules: [{decision: deny}]}"),
			[]string{"standingSessions.approvals.rules[0]: the rule names no tool; set tool to the tool's name", "'*' for any tool"}},
		{"an empty tool", entry("{rules: [{tool: '', decision: deny}]}"),
			[]string{"standingSessions.sessions[0].approvals.rules[0] (a): tool is empty; set tool"}},
		{"a rule not a mapping", shared("{rules: ['Bash: deny']}"),
			[]string{"standingSessions.approvals.rules[0]: a rule must be a mapping of tool, match, decision and message, got string 'Bash: deny'"}},
		{"rules not a list", shared("{rules: {tool: Bash, decision: deny}}"),
			[]string{"standingSessions.approvals.rules: rules must be a list of {tool, match, decision, message} mappings, got mapping"}},
		{"approvals not a mapping", shared("[deny]"),
			[]string{"standingSessions.approvals: approvals must be a mapping of waitSeconds, rules and deciders, got list"}},
		{"an entry's approvals not a mapping", entry("deny"),
			[]string{"standingSessions.sessions[0] (a): approvals must be a mapping with the entry's rules, got string"}},
		{"a match not a string", shared("{rules: [{tool: Bash, match: 5, decision: deny}]}"),
			[]string{"standingSessions.approvals.rules[0].match: expected a string (a glob), got integer 5"}},
		{"a match for a tool without one", shared("{rules: [{tool: WebFetch, match: 'https://*', decision: deny}]}"),
			[]string{"standingSessions.approvals.rules[0].match: 'https://*' has nothing to match for tool WebFetch", "drop match"}},
		{"a bad path pattern", shared("{rules: [{tool: Write, match: '/etc/[', decision: deny}]}"),
			[]string{"standingSessions.approvals.rules[0].match: '/etc/[' is not a path pattern Go's path.Match accepts (syntax error in pattern)"}},
		{"a bad path pattern on tool *", shared("{rules: [{tool: '*', match: 'ls [', decision: deny}]}"),
			[]string{"standingSessions.approvals.rules[0].match: 'ls [' is not a path pattern", "set tool: Bash"}},
		{"an entry's ask in its own dontAsk", "standingSessions:\n  sessions:\n    - name: a\n      permissionMode: dontAsk\n      approvals: {rules: [{tool: Bash, decision: ask}]}\n",
			[]string{"standingSessions.sessions[0].approvals.rules[0].decision (a): an ask rule is not measured in dontAsk mode; drop the rule or pick another permissionMode"}},
		{"an entry's ask in the block's dontAsk", "standingSessions:\n  permissionMode: dontAsk\n  sessions:\n    - name: a\n      approvals: {rules: [{tool: Bash, decision: ask}]}\n",
			[]string{"standingSessions.sessions[0].approvals.rules[0].decision (a): an ask rule is not measured in dontAsk mode"}},
		{"a shared ask meeting an entry's dontAsk", "standingSessions:\n  approvals: {rules: [{tool: Bash, decision: deny}, {tool: Read, decision: ask}]}\n  sessions:\n    - name: a\n      permissionMode: dontAsk\n",
			[]string{"standingSessions.sessions[0] (a): permissionMode dontAsk meets the ask rule standingSessions.approvals.rules[1]: an ask rule is not measured in dontAsk mode; drop the rule or pick another permissionMode"}},
		{"a shared ask in the block's dontAsk", "standingSessions:\n  permissionMode: dontAsk\n  approvals: {rules: [{tool: Bash, decision: ask}]}\n  sessions:\n    - name: a\n",
			[]string{"standingSessions.approvals.rules[0].decision: an ask rule is not measured in dontAsk mode (standingSessions.permissionMode", "drop the rule or pick another permissionMode"}},
		{"waitSeconds zero", shared("{waitSeconds: 0}"),
			[]string{"standingSessions.approvals.waitSeconds: 0 is not a whole number of seconds from 1 to 86400", "(default 600)"}},
		{"waitSeconds over a day", shared("{waitSeconds: 86401}"),
			[]string{"standingSessions.approvals.waitSeconds: 86401 is not a whole number of seconds from 1 to 86400"}},
		{"waitSeconds a fraction", shared("{waitSeconds: 1.5}"),
			[]string{"standingSessions.approvals.waitSeconds: 1.5 is not a whole number"}},
		{"waitSeconds a string", shared("{waitSeconds: '600'}"),
			[]string{"standingSessions.approvals.waitSeconds: '600' is not a whole number"}},
		{"deciders a list", shared("{deciders: [supervisor]}"),
			[]string{"standingSessions.approvals.deciders: deciders must be a mapping of an agent session's name", "got list"}},
		{"a decider's globs a string", shared("{deciders: {supervisor: 'worker-*'}}"),
			[]string{"standingSessions.approvals.deciders.supervisor: expected a list of globs of session names", "got string 'worker-*'"}},
		{"a glob not a string", shared("{deciders: {supervisor: [worker-1, 7]}}"),
			[]string{"standingSessions.approvals.deciders.supervisor[1]: expected a glob of session names (a string), got integer 7"}},
		{"a glob path.Match refuses", shared("{deciders: {supervisor: ['worker-[']}}"),
			[]string{"standingSessions.approvals.deciders.supervisor[0]: 'worker-[' is not a glob Go's path.Match accepts"}},
		{"a decider that is no session's name", shared("{deciders: {Super Visor: ['*']}}"),
			[]string{`standingSessions.approvals.deciders["Super Visor"]: 'Super Visor' is not a standing session's name`, "e.g. 'super-visor'"}},
		{"schema: an unknown rule key", shared("{rules: [{tool: Bash, mach: 'rm *', decision: deny}]}"),
			[]string{"standingSessions.approvals.rules[0].mach: unknown key 'mach' (did you mean 'match'?)"}},
		{"schema: waitSeconds in an entry", entry("{waitSeconds: 5}"),
			[]string{"standingSessions.sessions[0].approvals.waitSeconds: unknown key 'waitSeconds'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate([]byte(tt.body))
			if len(errs) != 1 {
				t.Fatalf("Validate gave %d problems, want one (each said once): %v", len(errs), errs)
			}
			msg := errs[0].Error()
			mustContain(t, msg, tt.want...)
			noPointers(t, msg)
			if code := loop.ErrorCode(errs[0]); code != loop.EINVALID {
				t.Errorf("code = %q, want %q", code, loop.EINVALID)
			}
			cfg := loadStanding(t, tt.body)
			if cfg.StandingErr == nil || cfg.Standing != nil {
				t.Fatalf("Load kept the block: StandingErr %v, Standing %+v", cfg.StandingErr, cfg.Standing)
			}
			mustContain(t, cfg.StandingErr.Error(), tt.want...)
		})
	}
}

// A tolerant load drops only what is refused: a bad shared rule or glob,
// and an entry whose own approvals are bad.
func TestLoadTolerant_DropsOnlyTheRefusedApprovals(t *testing.T) {
	cfg := LoadTolerant(writeConfig(t, `standingSessions:
  approvals:
    waitSeconds: -3
    rules:
      - {tool: Bash, match: "rm *", decision: deny}
      - {tool: Bash, decision: perhaps}
      - {tool: Read, decision: ask}
    deciders:
      supervisor: ["worker-*", "[", 3]
      "Bad": ["*"]
  sessions:
    - name: good
    - name: bad
      approvals: {rules: [{decision: deny}]}
`))
	if cfg.StandingErr == nil {
		t.Fatal("StandingErr is nil")
	}
	want := []loop.ApprovalRule{{Tool: "Bash", Match: "rm *", Decision: loop.RuleDeny}, {Tool: "Read", Decision: loop.RuleAsk}}
	if got := cfg.Standing.Approvals.Rules; !reflect.DeepEqual(got, want) {
		t.Errorf("shared rules = %+v, want %+v", got, want)
	}
	if got := cfg.Standing.Approvals.Deciders; !reflect.DeepEqual(got, map[string][]string{"supervisor": {"worker-*"}}) {
		t.Errorf("deciders = %v, want supervisor's valid glob only", got)
	}
	if got := cfg.Standing.ApprovalWait(); got != 600*time.Second {
		t.Errorf("ApprovalWait = %v, want the default for a refused waitSeconds", got)
	}
	if got := cfg.Standing.Names(); !reflect.DeepEqual(got, []string{"good"}) {
		t.Errorf("entries = %v, want only good", got)
	}
	joined := cfg.StandingErr.Error()
	for _, w := range []string{"approvals.waitSeconds", "approvals.rules[1].decision", "deciders.supervisor[1]", "deciders.supervisor[2]", "deciders.Bad:", "sessions[1].approvals.rules[0] (bad)"} {
		if !strings.Contains(joined, w) {
			t.Errorf("StandingErr does not name %s:\n%s", w, joined)
		}
	}
}
