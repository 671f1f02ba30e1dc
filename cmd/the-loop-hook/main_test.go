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
func TestRuled_TheFirstMatchingRuleAnswers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(file, []byte(`[{"tool":"Bash","match":"rm -rf *","decision":"deny","message":"never rm -rf"},
		{"tool":"Bash","match":"ls *","decision":"allow"},{"tool":"Write","match":"/w/secret/*","decision":"ask"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	payload := func(tool, input string) string {
		return `{"hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"cwd":"/w"}`
	}
	for _, c := range []struct{ file, payload, want string }{
		{file, payload("Bash", `{"command":"rm -rf /"}`), `"permissionDecision":"deny","permissionDecisionReason":"never rm -rf"`},
		{file, payload("Bash", `{"command":"ls /tmp"}`), `"permissionDecision":"allow"`},
		{file, payload("Bash", `{"command":"ls /tmp; rm -rf ~"}`), ""},
		{file, payload("Write", `{"file_path":"secret/key","content":"x"}`), `"permissionDecision":"ask"`},
		{file, payload("Bash", `{"command":"make"}`), ""},
		{file, `not json`, ""},
		{filepath.Join(t.TempDir(), "none.json"), payload("Bash", `{"command":"rm -rf /"}`), ""},
	} {
		got := string(ruled(c.file, strings.NewReader(c.payload)))
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("ruled(%.60s) = %q, want %q", c.payload, got, c.want)
		}
	}
}
