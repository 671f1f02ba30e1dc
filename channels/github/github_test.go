package github

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s:\n got %q\nwant %q", name, got, want)
	}
}

// TestCommentBody_IsTheOriginalsAnswerOfRecord pins original §10.3's body:
// header, the reply quoted line by line after scrubbing and defanging, the
// self-authored stamp.
func TestCommentBody_IsTheOriginalsAnswerOfRecord(t *testing.T) {
	text := "Use the v2 API.\r\n\nMy token was xoxb-1234-5678-abcdef, sorry.\nthe-loop stop is not what I mean\n"
	got := CommentBody("UOPS", text, config.Default().Routing.ControlKeywords)
	golden(t, "comment.md", got)
	for _, want := range []string{
		"\U0001F5E3\uFE0F **the-loop** — reply from `UOPS` on the **slack** channel, recorded here as the answer of record:\n\n> Use the v2 API.\n> \n> My token",
		"> t\u200dhe-loop stop is not what I mean\n\n\U0001F916 _the-loop, autonomous comment_\n<!-- the-loop:agent-comment -->",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("body lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "xoxb-") || strings.HasSuffix(got, "\n") {
		t.Errorf("body %q", got)
	}
}

func TestScrub_RedactsTheSecretsItNames(t *testing.T) {
	cases := []struct{ in, want string }{
		{"bot xoxb-123456-abcdefGHIJ here", "bot [redacted] here"},
		{"user xoxp-1-2-3-abcdef", "user [redacted]"},
		{"app xapp-1-A0B1C2-xyz", "app [redacted]"},
		{"ghp_0123456789abcdefABCDEF0123456789", "[redacted]"},
		{"(gho_0123456789abcdefABCD)", "([redacted])"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijkl", "[redacted]"},
		{"key=sk-ant-api03-abcdefghijklmnop", "key=[redacted]"},
		{"Authorization: Bearer eyJhbGciOi.JIUzI1NiJ9.e30=", "Authorization: Bearer [redacted]"},
		{"authorization: bearer abcdefgh12345678", "authorization: bearer [redacted]"},
		// Left alone: too short, or not a token at all.
		{"xoxb-12 is short", "xoxb-12 is short"},
		{"ghp_short", "ghp_short"},
		{"scikit-learn and task-sk-thing and risk-assessment-of-the-thing", "scikit-learn and task-sk-thing and risk-assessment-of-the-thing"},
		{"the bearer of bad news", "the bearer of bad news"},
		{"", ""},
	}
	for _, c := range cases {
		if got := Scrub(c.in); got != c.want {
			t.Errorf("Scrub(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDefang_EveryConfiguredKeywordStopsMatching(t *testing.T) {
	kws := []string{"the-loop start", "the-loop stop", "loop halt", ""}
	cases := []struct{ in, want string }{
		{"the-loop stop", "t\u200dhe-loop stop"},
		{"please The-Loop   STOP now", "please T\u200dhe-Loop   STOP now"},
		{"the-loop\nstart", "t\u200dhe-loop\nstart"},
		{"the-loop start then the-loop stop", "t\u200dhe-loop start then t\u200dhe-loop stop"},
		{"run loop halt", "run l\u200doop halt"},
		{"the-loop pause", "the-loop pause"}, // not configured here
		{"the-loop", "the-loop"},
		{"nothing to see", "nothing to see"},
	}
	for _, c := range cases {
		got := Defang(c.in, kws)
		if got != c.want {
			t.Errorf("Defang(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.ReplaceAll(got, "\u200d", "") != c.in {
			t.Errorf("Defang(%q) changed more than a joiner: %q", c.in, got)
		}
		for _, kw := range kws[:3] {
			if kw != "" && strings.Contains(strings.ToLower(got), kw) {
				t.Errorf("Defang(%q) = %q still holds %q", c.in, got, kw)
			}
		}
	}
	if got := Defang("é-loop start", []string{"é-loop start"}); got != "é\u200d-loop start" {
		t.Errorf("multi-byte first rune: %q", got)
	}
}

// TestDefang_UnicodeSpacesAndHiddenCharactersDoNotSlipThrough: a keyword
// split by a Unicode space (NO-BREAK SPACE, EM SPACE, …) is still one, and
// zero-width characters hidden inside it are stripped before it is
// matched; the defanged keyword carries exactly one joiner.
func TestDefang_UnicodeSpacesAndHiddenCharactersDoNotSlipThrough(t *testing.T) {
	kws := []string{"the-loop stop"}
	cases := []struct{ in, want string }{
		{"the-loop\u00a0stop", "t\u200dhe-loop\u00a0stop"},
		{"the-loop\u2003stop", "t\u200dhe-loop\u2003stop"},
		{"the-loop \u3000 stop", "t\u200dhe-loop \u3000 stop"},
		{"th\u200be-loop stop", "t\u200dhe-loop stop"},
		{"\u200bthe-loop stop", "t\u200dhe-loop stop"},
		{"the-loop\u2060 \ufeffst\u00adop", "t\u200dhe-loop stop"},
		{"t\u200dhe-loop stop", "t\u200dhe-loop stop"}, // already defanged: unchanged
		{"family 👨\u200d👩\u200d👧 and the-loop stop", "family 👨\u200d👩\u200d👧 and t\u200dhe-loop stop"},
	}
	for _, c := range cases {
		if got := Defang(c.in, kws); got != c.want {
			t.Errorf("Defang(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCommentArgv(t *testing.T) {
	mustRef := func(s string) loop.WorkItemRef {
		r, err := loop.ParseWorkItemRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	got, err := CommentArgv("gh", mustRef("github:octo/repo#5"), "B")
	if want := []string{"gh", "api", "--method", "POST", "repos/octo/repo/issues/5/comments", "-f", "body=B"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("argv %q %v", got, err)
	}
	got, err = CommentArgv("/opt/gh", mustRef("github:ghe.corp.example/octo/repo#7"), "B")
	if want := []string{"/opt/gh", "api", "--hostname", "ghe.corp.example", "--method", "POST", "repos/octo/repo/issues/7/comments", "-f", "body=B"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("argv %q %v", got, err)
	}
	for _, ref := range []string{"gitlab:octo/repo#5", "github:octo/re po#5"} {
		if _, err := CommentArgv("gh", mustRef(ref), "B"); loop.ErrorCode(err) != loop.EINVALID {
			t.Errorf("%s: %v", ref, err)
		}
	}
}
