package loop_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// bash is a Bash tool input running command.
func bash(command string) json.RawMessage {
	b, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		panic(err)
	}
	return b
}

// fileInput is a tool input with key set to p.
func fileInput(key, p string) json.RawMessage {
	b, err := json.Marshal(map[string]string{key: p})
	if err != nil {
		panic(err)
	}
	return b
}

// rule is an approval rule of tool, match and decision.
func rule(tool, match, decision string) loop.ApprovalRule {
	return loop.ApprovalRule{Tool: tool, Match: match, Decision: decision}
}

// matchCase is one tool use against one list of rules: want is the index
// of the rule that decides it, -1 for none.
type matchCase struct {
	name  string
	rules []loop.ApprovalRule
	tool  string
	input json.RawMessage
	cwd   string
	want  int
}

// runMatchCases runs MatchApprovalRule over each case.
func runMatchCases(t *testing.T, cases []matchCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i, ok := loop.MatchApprovalRule(tc.rules, tc.tool, tc.input, tc.cwd)
			got := -1
			if ok {
				got = i
			}
			if got != tc.want {
				t.Errorf("MatchApprovalRule(%s %s) = %d (ok %v), want %d", tc.tool, tc.input, i, ok, tc.want)
			}
		})
	}
}

func TestMatchApprovalRule_BashGlobIsAnchoredAndCrossesSlashes(t *testing.T) {
	deny := func(match string) []loop.ApprovalRule { return []loop.ApprovalRule{rule("Bash", match, loop.RuleDeny)} }
	runMatchCases(t, []matchCase{
		{"a star crosses /", deny("rm -rf *"), "Bash", bash("rm -rf /home/me/src"), "/", 0},
		{"a star in the middle crosses /", deny("cat */secret"), "Bash", bash("cat /etc/app/secret"), "/", 0},
		{"anchored at the start", deny("git *"), "Bash", bash("sudo git push"), "/", -1},
		{"anchored at the end", deny("*.sh"), "Bash", bash("run.sh.bak"), "/", -1},
		{"the end matches", deny("*.sh"), "Bash", bash("./run.sh"), "/", 0},
		{"no star: the whole command", deny("ls"), "Bash", bash("ls -l"), "/", -1},
		{"no star: equal", deny("ls"), "Bash", bash("ls"), "/", 0},
		{"a star matches nothing too", deny("make*"), "Bash", bash("make"), "/", 0},
		{"a lone star matches the empty command", deny("*"), "Bash", bash(""), "/", 0},
		{"several stars in order", deny("*a*b*"), "Bash", bash("xxaxxbxx"), "/", 0},
		{"several stars out of order", deny("*a*b*"), "Bash", bash("xxbxxaxx"), "/", -1},
		{"a star gives back what the rest needs", deny("*ab"), "Bash", bash("aab"), "/", 0},
		{"? is literal, not any character", deny("echo ?"), "Bash", bash("echo a"), "/", -1},
		{"? matches itself", deny("echo ?"), "Bash", bash("echo ?"), "/", 0},
		{"[ is literal, not a class", deny("ls [ab]"), "Bash", bash("ls a"), "/", -1},
		{"[ matches itself", deny("ls [ab]"), "Bash", bash("ls [ab]"), "/", 0},
		{"case matters", deny("git *"), "Bash", bash("GIT status"), "/", -1},
	})
}

func TestMatchApprovalRule_AllowNeverMatchesAChainedOrRedirectedCommand(t *testing.T) {
	refused := []string{";", "&", "|", "$(", "`", "<", ">", "\n"}
	var cases []matchCase
	for _, c := range refused {
		command := "echo a" + c + "b"
		cases = append(cases,
			matchCase{"allow refuses " + strings.ReplaceAll(c, "\n", `\n`), []loop.ApprovalRule{rule("Bash", "echo *", loop.RuleAllow)}, "Bash", bash(command), "/", -1},
			matchCase{"an empty-match allow refuses " + strings.ReplaceAll(c, "\n", `\n`), []loop.ApprovalRule{rule("Bash", "", loop.RuleAllow)}, "Bash", bash(command), "/", -1},
			matchCase{"a star allow refuses " + strings.ReplaceAll(c, "\n", `\n`), []loop.ApprovalRule{rule("*", "", loop.RuleAllow)}, "Bash", bash(command), "/", -1},
			matchCase{"deny still matches " + strings.ReplaceAll(c, "\n", `\n`), []loop.ApprovalRule{rule("Bash", "echo *", loop.RuleDeny)}, "Bash", bash(command), "/", 0},
			matchCase{"ask still matches " + strings.ReplaceAll(c, "\n", `\n`), []loop.ApprovalRule{rule("Bash", "echo *", loop.RuleAsk)}, "Bash", bash(command), "/", 0},
			matchCase{"a refused allow falls through to the next rule " + strings.ReplaceAll(c, "\n", `\n`),
				[]loop.ApprovalRule{rule("Bash", "echo *", loop.RuleAllow), rule("Bash", "*", loop.RuleAsk)}, "Bash", bash(command), "/", 1},
		)
	}
	cases = append(cases,
		matchCase{"a plain command is allowed", []loop.ApprovalRule{rule("Bash", "echo *", loop.RuleAllow)}, "Bash", bash("echo a b"), "/", 0},
		matchCase{"$ alone is not $(", []loop.ApprovalRule{rule("Bash", "echo *", loop.RuleAllow)}, "Bash", bash("echo $HOME (x)"), "/", 0},
		matchCase{"the characters do not stop an allow of a file tool", []loop.ApprovalRule{rule("Write", "", loop.RuleAllow)}, "Write", fileInput("file_path", "/a;b|c>d"), "/", 0},
	)
	runMatchCases(t, cases)
}

func TestMatchApprovalRule_FileToolsMatchTheCleanAbsolutePath(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"an absolute path", []loop.ApprovalRule{rule("Write", "/repo/src/*.go", loop.RuleAllow)}, "Write", fileInput("file_path", "/repo/src/a.go"), "/repo", 0},
		{"a relative path is joined to cwd", []loop.ApprovalRule{rule("Edit", "/repo/src/*.go", loop.RuleAllow)}, "Edit", fileInput("file_path", "src/a.go"), "/repo", 0},
		{"a relative pattern is joined to cwd", []loop.ApprovalRule{rule("Write", "src/*.go", loop.RuleAllow)}, "Write", fileInput("file_path", "/repo/src/a.go"), "/repo", 0},
		{"a relative pattern is not another cwd's", []loop.ApprovalRule{rule("Write", "src/*.go", loop.RuleAllow)}, "Write", fileInput("file_path", "/other/src/a.go"), "/repo", -1},
		{"a star does not cross /", []loop.ApprovalRule{rule("Write", "/repo/*", loop.RuleAllow)}, "Write", fileInput("file_path", "/repo/src/a.go"), "/repo", -1},
		{".. is cleaned away before matching", []loop.ApprovalRule{rule("Write", "/repo/*/*", loop.RuleAllow)}, "Write", fileInput("file_path", "/repo/src/../../etc/passwd"), "/repo", -1},
		{".. out of cwd reaches the deny", []loop.ApprovalRule{rule("Read", "/etc/*", loop.RuleDeny)}, "Read", fileInput("file_path", "../etc/passwd"), "/repo", 0},
		{"./ and // are cleaned", []loop.ApprovalRule{rule("MultiEdit", "/repo/a.go", loop.RuleDeny)}, "MultiEdit", fileInput("file_path", ".//a.go"), "/repo", 0},
		{"path.Match classes work here", []loop.ApprovalRule{rule("Write", "/repo/[ab].go", loop.RuleAllow)}, "Write", fileInput("file_path", "/repo/b.go"), "/", 0},
		{"a bad pattern matches nothing", []loop.ApprovalRule{rule("Write", "/repo/[", loop.RuleDeny)}, "Write", fileInput("file_path", "/repo/["), "/", -1},
		{"NotebookEdit reads notebook_path", []loop.ApprovalRule{rule("NotebookEdit", "/nb/*.ipynb", loop.RuleDeny)}, "NotebookEdit", fileInput("notebook_path", "/nb/a.ipynb"), "/", 0},
		{"NotebookEdit ignores file_path", []loop.ApprovalRule{rule("NotebookEdit", "/nb/*.ipynb", loop.RuleDeny)}, "NotebookEdit", fileInput("file_path", "/nb/a.ipynb"), "/", -1},
		{"a file rule does not glob a command", []loop.ApprovalRule{rule("Write", "/repo/*", loop.RuleDeny)}, "Write", bash("/repo/x"), "/", -1},
	})
}

func TestMatchApprovalRule_ToolMustBeEqualOrStar(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"another tool", []loop.ApprovalRule{rule("Write", "", loop.RuleDeny)}, "Edit", fileInput("file_path", "/a"), "/", -1},
		{"the name's case matters", []loop.ApprovalRule{rule("bash", "", loop.RuleDeny)}, "Bash", bash("ls"), "/", -1},
		{"star with no match: any tool", []loop.ApprovalRule{rule("*", "", loop.RuleDeny)}, "WebFetch", json.RawMessage(`{"url":"https://x"}`), "/", 0},
		{"star with a match globs a Bash command", []loop.ApprovalRule{rule("*", "rm *", loop.RuleDeny)}, "Bash", bash("rm -f /x"), "/", 0},
		{"star with a match is path.Match for a file tool", []loop.ApprovalRule{rule("*", "/etc/*", loop.RuleDeny)}, "Read", fileInput("file_path", "/etc/hosts"), "/", 0},
		{"star with a match never matches a tool without a subject", []loop.ApprovalRule{rule("*", "*", loop.RuleDeny)}, "WebFetch", json.RawMessage(`{"url":"x"}`), "/", -1},
		{"a named tool without a subject matches only an empty match", []loop.ApprovalRule{rule("WebFetch", "*", loop.RuleDeny), rule("WebFetch", "", loop.RuleAsk)}, "WebFetch", json.RawMessage(`{"url":"x"}`), "/", 1},
	})
}

func TestMatchApprovalRule_AnUnreadableInputMatchesOnlyEmptyMatches(t *testing.T) {
	rules := []loop.ApprovalRule{
		rule("Bash", "*", loop.RuleDeny),
		rule("Bash", "", loop.RuleAllow),
		rule("Bash", "", loop.RuleAsk),
	}
	fileRules := []loop.ApprovalRule{rule("Write", "*", loop.RuleDeny), rule("Write", "", loop.RuleAsk)}
	runMatchCases(t, []matchCase{
		{"not JSON", rules, "Bash", json.RawMessage(`{"command":`), "/", 2},
		{"not an object", rules, "Bash", json.RawMessage(`"ls"`), "/", 2},
		{"a list", rules, "Bash", json.RawMessage(`["ls"]`), "/", 2},
		{"null", rules, "Bash", json.RawMessage(`null`), "/", 2},
		{"empty", rules, "Bash", nil, "/", 2},
		{"the command a number", rules, "Bash", json.RawMessage(`{"command":5}`), "/", 2},
		{"no command key", rules, "Bash", json.RawMessage(`{"cmd":"ls"}`), "/", 2},
		{"a file tool without file_path", fileRules, "Write", json.RawMessage(`{"path":"/a"}`), "/", 1},
		{"a file tool's path a list", fileRules, "Write", json.RawMessage(`{"file_path":["/a"]}`), "/", 1},
	})
}

func TestMatchApprovalRule_FirstMatchWins(t *testing.T) {
	rules := []loop.ApprovalRule{
		rule("Bash", "git push *", loop.RuleDeny),
		rule("Bash", "git *", loop.RuleAllow),
		rule("*", "", loop.RuleAsk),
	}
	runMatchCases(t, []matchCase{
		{"the earlier, narrower rule", rules, "Bash", bash("git push origin main"), "/", 0},
		{"the later, wider rule", rules, "Bash", bash("git status"), "/", 1},
		{"the catch-all", rules, "Bash", bash("make"), "/", 2},
		{"the catch-all for another tool", rules, "Read", fileInput("file_path", "/a"), "/", 2},
		{"no rules", nil, "Bash", bash("ls"), "/", -1},
	})
}

func TestPreToolUseAnswer_IsTheHookSpecificOutput(t *testing.T) {
	for _, tc := range []struct{ decision, reason string }{
		{loop.RuleDeny, `no "rm" here` + "\n<please>"},
		{loop.RuleAllow, "rule 2"},
		{loop.RuleAsk, ""},
	} {
		line := loop.PreToolUseAnswer(tc.decision, tc.reason)
		if strings.ContainsRune(string(line), '\n') {
			t.Errorf("%s: the answer is not one line: %q", tc.decision, line)
		}
		var got map[string]map[string]string
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("%s: %q does not decode: %v", tc.decision, line, err)
		}
		want := map[string]map[string]string{"hookSpecificOutput": {
			"hookEventName": "PreToolUse", "permissionDecision": tc.decision}}
		if tc.reason != "" {
			want["hookSpecificOutput"]["permissionDecisionReason"] = tc.reason
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("PreToolUseAnswer(%q, %q) = %s, want %v", tc.decision, tc.reason, line, want)
		}
	}
}

func TestApprovalRuleKey_NamesTheMatchedInputKey(t *testing.T) {
	want := map[string]string{
		"Bash": "command", "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
		"Read": "file_path", "NotebookEdit": "notebook_path", "WebFetch": "", "*": "", "bash": "",
	}
	for tool, key := range want {
		if got := loop.ApprovalRuleKey(tool); got != key {
			t.Errorf("ApprovalRuleKey(%q) = %q, want %q", tool, got, key)
		}
	}
}

// BenchmarkMatchApprovalRule evaluates a Bash command against ten rules,
// the last of which decides: the work the PreToolUse hook does per call.
func BenchmarkMatchApprovalRule(b *testing.B) {
	rules := []loop.ApprovalRule{
		rule("Write", "/etc/*", loop.RuleDeny),
		rule("Edit", "/etc/*", loop.RuleDeny),
		rule("Bash", "rm -rf *", loop.RuleDeny),
		rule("Bash", "git push --force*", loop.RuleDeny),
		rule("Bash", "curl *", loop.RuleAsk),
		rule("Bash", "wget *", loop.RuleAsk),
		rule("Read", "/repo/*", loop.RuleAllow),
		rule("Bash", "npm publish*", loop.RuleAsk),
		rule("Bash", "ls *", loop.RuleAllow),
		rule("Bash", "go test *", loop.RuleAllow),
	}
	input := bash("go test -run 'Approval|Rule' -count=1 ./config/... ./store/...")
	if _, ok := loop.MatchApprovalRule(rules, "Bash", input, "/repo"); ok {
		b.Fatal("the command holds | and an allow rule matched it")
	}
	input = bash("go test -count=1 ./config/... ./store/... ./lifecycle/...")
	b.ReportAllocs()
	for b.Loop() {
		if i, ok := loop.MatchApprovalRule(rules, "Bash", input, "/repo"); !ok || i != 9 {
			b.Fatalf("rule %d (ok %v), want 9", i, ok)
		}
	}
}
