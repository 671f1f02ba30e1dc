package loop_test

import (
	"fmt"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestParseWorkItemRef_ValidRefs(t *testing.T) {
	cases := []struct {
		in                string
		want              loop.WorkItemRef
		str, slug, target string
		url               string
	}{
		{"github:octo/repo#15",
			loop.WorkItemRef{Provider: "github", Host: "github.com", Owner: "octo", Repo: "repo", Number: 15},
			"github:octo/repo#15", "github-octo-repo-15", "loop-github-octo-repo-15", "https://github.com/octo/repo/issues/15"},
		{"  github:octo/repo#5\n",
			loop.WorkItemRef{Provider: "github", Host: "github.com", Owner: "octo", Repo: "repo", Number: 5},
			"github:octo/repo#5", "github-octo-repo-5", "loop-github-octo-repo-5", "https://github.com/octo/repo/issues/5"},
		{"github:github.com/octo/repo#5", // the default host spelled out: the same work item
			loop.WorkItemRef{Provider: "github", Host: "github.com", Owner: "octo", Repo: "repo", Number: 5},
			"github:octo/repo#5", "github-octo-repo-5", "loop-github-octo-repo-5", "https://github.com/octo/repo/issues/5"},
		{"github:ghe.corp.example/octo/repo#15",
			loop.WorkItemRef{Provider: "github", Host: "ghe.corp.example", Owner: "octo", Repo: "repo", Number: 15},
			"github:ghe.corp.example/octo/repo#15", "github-ghe.corp.example-octo-repo-15",
			"loop-github-ghe_corp_example-octo-repo-15", "https://ghe.corp.example/octo/repo/issues/15"},
		{"github:ghe:8443/octo/repo#2", // a bare host name with a port
			loop.WorkItemRef{Provider: "github", Host: "ghe:8443", Owner: "octo", Repo: "repo", Number: 2},
			"github:ghe:8443/octo/repo#2", "github-ghe-8443-octo-repo-2", "loop-github-ghe-8443-octo-repo-2",
			"https://ghe:8443/octo/repo/issues/2"},
		{"github:git.example.com:8443/o/r#3",
			loop.WorkItemRef{Provider: "github", Host: "git.example.com:8443", Owner: "o", Repo: "r", Number: 3},
			"github:git.example.com:8443/o/r#3", "github-git.example.com-8443-o-r-3", "loop-github-git_example_com-8443-o-r-3",
			"https://git.example.com:8443/o/r/issues/3"},
		{"github:octo/foo.js#7", // dots are kept in the slug, rewritten in the tmux name
			loop.WorkItemRef{Provider: "github", Host: "github.com", Owner: "octo", Repo: "foo.js", Number: 7},
			"github:octo/foo.js#7", "github-octo-foo.js-7", "loop-github-octo-foo_js-7", "https://github.com/octo/foo.js/issues/7"},
		{"gitlab:group/proj#3", // another provider has no default host
			loop.WorkItemRef{Provider: "gitlab", Owner: "group", Repo: "proj", Number: 3},
			"gitlab:group/proj#3", "gitlab-group-proj-3", "loop-gitlab-group-proj-3", ""},
		{"my-tracker2:acme.io/team/app#0",
			loop.WorkItemRef{Provider: "my-tracker2", Host: "acme.io", Owner: "team", Repo: "app", Number: 0},
			"my-tracker2:acme.io/team/app#0", "my-tracker2-acme.io-team-app-0", "loop-my-tracker2-acme_io-team-app-0", ""},
		{"github:we ird/r@po#9", // the grammar takes any owner/repo; the slug makes it safe
			loop.WorkItemRef{Provider: "github", Host: "github.com", Owner: "we ird", Repo: "r@po", Number: 9},
			"github:we ird/r@po#9", "github-we-ird-r-po-9", "loop-github-we-ird-r-po-9", ""},
		{"github:octo/repo#007",
			loop.WorkItemRef{Provider: "github", Host: "github.com", Owner: "octo", Repo: "repo", Number: 7},
			"github:octo/repo#7", "github-octo-repo-7", "loop-github-octo-repo-7", "https://github.com/octo/repo/issues/7"},
	}
	for _, c := range cases {
		got, err := loop.ParseWorkItemRef(c.in)
		if err != nil {
			t.Errorf("ParseWorkItemRef(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseWorkItemRef(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if s := got.String(); s != c.str {
			t.Errorf("%q: String = %q, want %q", c.in, s, c.str)
		}
		if s := got.Slug(); s != c.slug {
			t.Errorf("%q: Slug = %q, want %q", c.in, s, c.slug)
		}
		if s := got.TmuxTarget(); s != c.target {
			t.Errorf("%q: TmuxTarget = %q, want %q", c.in, s, c.target)
		}
		if !loop.TargetRE.MatchString(got.TmuxTarget()) {
			t.Errorf("%q: target %q is not a the-loop session name", c.in, got.TmuxTarget())
		}
		if s := got.URL(); s != c.url {
			t.Errorf("%q: URL = %q, want %q", c.in, s, c.url)
		}
		again, err := loop.ParseWorkItemRef(got.String())
		if err != nil || again != got {
			t.Errorf("%q: String %q does not parse back (%+v, %v)", c.in, got.String(), again, err)
		}
	}
}

func TestParseWorkItemRef_InvalidRefs(t *testing.T) {
	grammar := "; expected <provider>:[<host>/]<owner>/<repo>#<number> (e.g. github:octo/repo#15, github:ghe.corp.example/octo/repo#15)"
	path := "; expected <owner>/<repo>, optionally preceded by a host, before '#'"
	cases := map[string]string{
		"":                                      grammar,
		"octo/repo#15":                          grammar, // no provider
		"GitHub:octo/repo#15":                   grammar, // provider must be lowercase
		"1github:octo/repo#15":                  grammar,
		"github:octo/repo":                      grammar, // no number
		"github:octo/repo#":                     grammar,
		"github:octo/repo#x1":                   grammar,
		"github:octo/repo#-1":                   grammar,
		"github:octo/repo#1#2":                  grammar,
		"github:#1":                             grammar,
		"github:repo#15":                        path, // one segment
		"github:octo/repo/sub#15":               path, // "octo" is not a host
		"github:a/b/c/d#1":                      path,
		"github:/repo#1":                        path,
		"github:octo/#1":                        path,
		"github:ghe.corp//repo#1":               path,
		"github:octo/repo#99999999999999999999": "; the number after '#' is out of range",
	}
	for in, suffix := range cases {
		_, err := loop.ParseWorkItemRef(in)
		if loop.ErrorCode(err) != loop.EINVALID {
			t.Errorf("ParseWorkItemRef(%q) = %v, want EINVALID", in, err)
			continue
		}
		if want := "invalid work-item ref '" + in + "'" + suffix; loop.ErrorMessage(err) != want {
			t.Errorf("ParseWorkItemRef(%q) says %q, want %q", in, loop.ErrorMessage(err), want)
		}
	}
}

// The two namespaces never cross: a standing ref is not a work item, and a
// work-item ref is not a standing ref.
func TestRefs_NamespacesNeverCross(t *testing.T) {
	for _, s := range []string{"standing:x", "standing:supervisor", " standing:supervisor ", "standing:octo/repo#5",
		"standing:ghe.corp/octo/repo#5", "standing:", "standing:-x"} {
		if ref, err := loop.ParseWorkItemRef(s); err == nil || loop.ErrorCode(err) != loop.EINVALID {
			t.Errorf("ParseWorkItemRef(%q) = %+v, %v; want refused", s, ref, err)
		}
	}
	_, err := loop.ParseWorkItemRef("standing:octo/repo#5")
	if !strings.Contains(loop.ErrorMessage(err), "the provider 'standing' is reserved") {
		t.Errorf("standing provider refused as %q", loop.ErrorMessage(err))
	}
	for _, s := range []string{"github:octo/repo#5", "github:ghe.corp.example/octo/repo#15", "gitlab:group/proj#3",
		"standing:octo/repo#5"} {
		if name, ok := loop.ParseStandingRef(s); ok {
			t.Errorf("ParseStandingRef(%q) = %q; a work-item ref is never a standing ref", s, name)
		}
	}
	// No work-item target can be a standing session's name:
	// standing-ops:acme/web#7 would be loop-standing-ops-acme-web-7,
	// standing session ops-acme-web-7's.
	for _, s := range []string{"standing-ops:acme/web#7", "standing-x:ghe.corp.example/o/r#1", " standing-:a/b#2"} {
		ref, err := loop.ParseWorkItemRef(s)
		if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(loop.ErrorMessage(err), loop.StandingTargetPrefix) {
			t.Errorf("ParseWorkItemRef(%q) = %+v, %v; want refused naming %s", s, ref, err, loop.StandingTargetPrefix)
		}
	}
	if _, err := loop.ParseWorkItemRef("standingops:acme/web#7"); err != nil {
		t.Errorf("standingops:acme/web#7 is outside the standing namespace, refused: %v", err)
	}
	ref, _ := loop.ParseWorkItemRef("github:octo/repo#5")
	if strings.HasPrefix(ref.TmuxTarget(), loop.StandingTargetPrefix) {
		t.Errorf("work-item target %q is in the standing namespace", ref.TmuxTarget())
	}
}

func TestTmuxSessionName_RewritesTargetSyntax(t *testing.T) {
	cases := map[string]string{
		"loop-a.b-15":  "loop-a_b-15",
		"loop-a:b.c-1": "loop-a_b_c-1",
		"loop-plain-1": "loop-plain-1",
		"loop-a_b-15":  "loop-a_b-15", // idempotent
		"loop-..::-1":  "loop-____-1",
	}
	for in, want := range cases {
		if got := loop.TmuxSessionName(in); got != want {
			t.Errorf("TmuxSessionName(%q) = %q, want %q", in, got, want)
		}
		if got := loop.TmuxSessionName(loop.TmuxSessionName(in)); got != want {
			t.Errorf("TmuxSessionName is not idempotent on %q", in)
		}
	}
}

// TestGrammar_MatchesAndPrintsItsSource: a lazily compiled grammar answers
// as the regexp does and renders as its source in messages.
func TestGrammar_MatchesAndPrintsItsSource(t *testing.T) {
	for name, want := range map[string]bool{"a": true, "agent-01": true, "-a": false, "A": false, strings.Repeat("a", 41): false} {
		if got := loop.ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v", name, got)
		}
	}
	if s := fmt.Sprint(loop.NameRE); s != `^[a-z0-9][a-z0-9-]{0,39}$` {
		t.Errorf("NameRE prints %q", s)
	}
}
