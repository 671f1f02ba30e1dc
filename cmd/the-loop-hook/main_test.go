package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rules file answers a tool use by its first matching rule: a deny
// with the rule's message, an allow that never covers a chained command,
// an ask; no match, an unreadable file or a payload that is not one print
// nothing.
func TestParseRules_TheFileAloneOrWithTheSession(t *testing.T) {
	for _, c := range []struct {
		args                []string
		file, root, session string
		ok                  bool
	}{
		{[]string{"--rules", "/r.json"}, "/r.json", "", "", true},
		{[]string{"--state-root", "/s", "--rules", "/r.json", "--session", "standing:a"}, "/r.json", "/s", "standing:a", true},
		{[]string{"--rules"}, "", "", "", false},
		{[]string{"--rules", "/r.json", "--session", "standing:a"}, "", "", "", false},
		{[]string{"--state-root", "/s", "--session", "standing:a", "--await-decision", "5"}, "", "", "", false},
	} {
		file, root, session, ok := parseRules(c.args)
		if ok != c.ok || ok && (file != c.file || root != c.root || session != c.session) {
			t.Errorf("parseRules(%q) = %q %q %q %v, want %q %q %q %v", c.args, file, root, session, ok, c.file, c.root, c.session, c.ok)
		}
	}
}

func TestRuled_TheFirstMatchingRuleAnswers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(file, []byte(`[{"tool":"Bash","match":"rm -rf *","decision":"deny","message":"never rm -rf"},
		{"tool":"Bash","match":"ls *","decision":"allow"},{"tool":"Write","match":"/w/secret/*","decision":"ask"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	payload := func(tool, input string) string {
		return `{"hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"cwd":"/w"}`
	}
	for _, c := range []struct{ file, payload, want, report string }{
		{file, payload("Bash", `{"command":"rm -rf /"}`), `"permissionDecision":"deny","permissionDecisionReason":"never rm -rf"`, `"the_loop_decision":"deny","the_loop_rule":1`},
		{file, payload("Bash", `{"command":"ls /tmp"}`), `"permissionDecision":"allow"`, `"the_loop_decision":"allow","the_loop_rule":2`},
		{file, payload("Bash", `{"command":"ls /tmp; rm -rf ~"}`), "", ""},
		{file, payload("Write", `{"file_path":"secret/key","content":"x"}`), `"permissionDecision":"ask"`, ""},
		{file, payload("Bash", `{"command":"make"}`), "", ""},
		{file, `not json`, "", ""},
		{filepath.Join(t.TempDir(), "none.json"), payload("Bash", `{"command":"rm -rf /"}`), "", ""},
	} {
		answer, report := ruled(c.file, []byte(c.payload))
		if got := string(answer); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("ruled(%.60s) = %q, want %q", c.payload, got, c.want)
		}
		if got := string(report); c.report == "" && got != "" || !strings.Contains(got, c.report) || c.report != "" && !strings.Contains(got, `"tool_name":"Bash"`) {
			t.Errorf("ruled(%.60s) reports %q, want %q and the payload", c.payload, got, c.report)
		}
	}
}
