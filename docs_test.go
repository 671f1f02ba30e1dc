package loop_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every reference a comment makes must resolve inside the repository: a
// decision is cited as "decisions Dn" and must be a heading of
// docs/decisions.md, a behaviour of the Python original as "original §n" and
// must be a heading of docs/original.md, and a Markdown file a comment names
// must exist at that path from the repository's root. Documents that live
// outside the repository (the specification folder, its design and
// requirements pages, the original's tracker) are never cited.

var (
	decisionToken = regexp.MustCompile(`\bD\d+[a-z]?\b`)
	decisionCite  = regexp.MustCompile(`\bdecisions\s+D\d+[a-z]?(?:(?:\s*[,;]\s*(?:and\s+)?|\s+and\s+|\s+or\s+)D\d+[a-z]?)*`)
	sectionToken  = regexp.MustCompile(`§(\d+(?:\.\d+)*)`)
	sectionCite   = regexp.MustCompile(`\boriginal\s+§\d+(?:\.\d+)*(?:(?:\s*[,;]\s*(?:and\s+)?|\s+and\s+|\s+or\s+)§\d+(?:\.\d+)*)*`)
	markdownFile  = regexp.MustCompile(`[\w./-]*\w\.md\b`)

	decisionHeading = regexp.MustCompile(`(?m)^#{1,6}\s+(D\d+[a-z]?)\b`)
	sectionHeading  = regexp.MustCompile(`(?m)^#{1,6}\s+§(\d+(?:\.\d+)*)`)

	// outside are wordings that point at documents kept outside the
	// repository, each with what to write instead.
	outside = []struct {
		re   *regexp.Regexp
		hint string
	}{
		{regexp.MustCompile(`\.\./shared|\bshared/spec\b|\bspec/`), "names the specification folder outside the repository: cite docs/ or state the fact"},
		{regexp.MustCompile(`(?i)\bdesign\s+(?:D\d|")|\bthe design's\b|\bdesign\s+doc`), `cites the design: cite "decisions Dn" or docs/architecture.md, or state the fact`},
		{regexp.MustCompile(`\bR\d+\.\d+\b`), "cites a requirement by number: state the fact"},
		{regexp.MustCompile(`\b(?:issue|decision)-\d+\b`), "cites the original's tracker: cite original §n or state the fact"},
		{regexp.MustCompile(`\boriginal-behaviour\b`), `cites the original's notes by file: write "original §n" (docs/original.md)`},
		{regexp.MustCompile(`\bissue\s+[A-Z]\d+\b`), "cites an issue by its letter: state the fact"},
		{regexp.MustCompile(`(?i)\bissues?\s+\d+`), "cites an issue by its number, which resolves nowhere in the repository: state the fact"},
		{regexp.MustCompile(`(?i)\bacceptance\s+(?:point\s+)?\d`), "cites an issue's acceptance point: state the fact"},
		{regexp.MustCompile(`\bthe issue names\b`), "cites an issue: state the fact"},
	}
)

// anchors reads the headings of a page under docs/ that re matches.
func anchors(t *testing.T, page string, re *regexp.Regexp) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("docs", page))
	if err != nil {
		t.Fatalf("docs/%s: %v", page, err)
	}
	out := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		out[m[1]] = true
	}
	if len(out) == 0 {
		t.Fatalf("docs/%s has no headings a comment could cite", page)
	}
	return out
}

// refChecker checks the references in Go comments.
type refChecker struct {
	decisions map[string]bool // the headings of docs/decisions.md
	sections  map[string]bool // the section numbers of docs/original.md
	exists    func(path string) bool
}

// checkSource parses one Go file and returns a problem per reference in its
// comments that does not resolve inside the repository.
func (c refChecker) checkSource(name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, cg := range f.Comments {
		line := fset.Position(cg.Pos()).Line
		for _, p := range c.checkText(commentText(cg)) {
			out = append(out, name+":"+strconv.Itoa(line+p.line)+": "+p.msg)
		}
	}
	return out
}

// commentText is a comment group's text without its markers, one line of
// text per source line.
func commentText(cg *ast.CommentGroup) string {
	var b strings.Builder
	for _, c := range cg.List {
		t := c.Text
		switch {
		case strings.HasPrefix(t, "//"):
			t = t[2:]
		case strings.HasPrefix(t, "/*"):
			t = strings.TrimSuffix(t[2:], "*/")
		}
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return b.String()
}

// problem is one unresolved reference, line counted from the comment's first.
type problem struct {
	line int
	msg  string
}

// checkText checks one comment's text.
func (c refChecker) checkText(text string) []problem {
	var out []problem
	at := func(off int, msg string) {
		out = append(out, problem{strings.Count(text[:off], "\n"), msg})
	}
	covered := func(spans [][]int, off int) bool {
		return slices.ContainsFunc(spans, func(s []int) bool { return s[0] <= off && off < s[1] })
	}

	cites := decisionCite.FindAllStringIndex(text, -1)
	for _, m := range decisionToken.FindAllStringIndex(text, -1) {
		d := text[m[0]:m[1]]
		switch {
		case !covered(cites, m[0]):
			at(m[0], "bare "+d+": cite it as \"decisions "+d+"\" (docs/decisions.md)")
		case !c.decisions[d]:
			at(m[0], "decisions "+d+" is not a heading of docs/decisions.md")
		}
	}

	cites = sectionCite.FindAllStringIndex(text, -1)
	for _, m := range sectionToken.FindAllStringSubmatchIndex(text, -1) {
		s := text[m[2]:m[3]]
		switch {
		case !covered(cites, m[0]):
			at(m[0], "bare §"+s+": cite it as \"original §"+s+"\" (docs/original.md)")
		case !c.sections[s]:
			at(m[0], "original §"+s+" is not a heading of docs/original.md")
		}
	}

	for _, m := range markdownFile.FindAllStringIndex(text, -1) {
		if p := strings.TrimPrefix(text[m[0]:m[1]], "./"); !c.exists(p) {
			at(m[0], p+" is not a file of the repository (name it by its path from the root, e.g. docs/decisions.md)")
		}
	}

	for _, o := range outside {
		for _, m := range o.re.FindAllStringIndex(text, -1) {
			at(m[0], "\""+text[m[0]:m[1]]+"\" "+o.hint)
		}
	}
	return out
}

// repoChecker reads the anchors of the repository's docs/.
func repoChecker(t *testing.T) refChecker {
	return refChecker{
		decisions: anchors(t, "decisions.md", decisionHeading),
		sections:  anchors(t, "original.md", sectionHeading),
		exists: func(p string) bool {
			st, err := os.Stat(filepath.FromSlash(p))
			return err == nil && !st.IsDir()
		},
	}
}

// TestComments_ReferencesResolveInTheRepository walks every Go file of the
// repository and fails on each comment reference that does not resolve.
func TestComments_ReferencesResolveInTheRepository(t *testing.T) {
	c := repoChecker(t)
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "bin" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, p := range c.checkSource(filepath.ToSlash(path), src) {
			t.Error(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("walked %d Go files: not the repository", files)
	}
}

// TestComments_CheckerRefusesPlantedReferences shows the checker fails on
// each kind of reference that does not resolve, and passes the good forms.
func TestComments_CheckerRefusesPlantedReferences(t *testing.T) {
	c := repoChecker(t)
	bad := map[string]string{
		"bare decision":        "// Refuses it (D24).\npackage p\n",
		"unknown decision":     "// Refuses it (decisions D99).\npackage p\n",
		"bare section":         "// As the original does (§9.1).\npackage p\n",
		"unknown section":      "// As the original does (original §77.1).\npackage p\n",
		"outside document":     "// See design.md for why.\npackage p\n",
		"outside notes":        "// Steps of original-behaviour §1.2.\npackage p\n",
		"spec folder":          "// The schema in ../shared/spec/original-schema.\npackage p\n",
		"design decision":      "// The verbs cannot tell (design D8).\npackage p\n",
		"design section":       "// As design \"Error handling\" says.\npackage p\n",
		"the design's":         "// The design's diagram, extended.\npackage p\n",
		"requirement":          "// The routing defaults of R1.4.\npackage p\n",
		"tracker":              "// send-keys is never used (issue-240).\npackage p\n",
		"issue letter":         "// Both namespaces (issue D1).\npackage p\n",
		"issue number":         "// One bad record never hides the others (issue 16 #13).\npackage p\n",
		"missing page":         "// See docs/nowhere.md.\npackage p\n",
		"claude page by name":  "// As claude-code.md records.\npackage p\n",
		"in a trailing remark": "package p\n\nvar x = 1 // wrapped (D3)\n",
		"block comment":        "/* see §8.2 */\npackage p\n",
		"acceptance point":     "// Acceptance 5: at most once.\npackage p\n",
	}
	for name, src := range bad {
		if got := c.checkSource(name+".go", []byte(src)); len(got) == 0 {
			t.Errorf("%s: %q passed the checker", name, src)
		}
	}
	good := "// Refuses it (decisions D24; decisions D7, D8 and D14b), as the\n" +
		"// original does (original §9.1, §9.2; original §10.3), see\n" +
		"// docs/decisions.md and docs/original.md; a Dn\n" +
		"// mention without digits is fine.\npackage p\n"
	if got := c.checkSource("good.go", []byte(good)); len(got) != 0 {
		t.Errorf("good references refused: %v", got)
	}
	// A citation may wrap onto the next comment line.
	wrapped := "// The CLI (decisions\n// D3, D4).\npackage p\n"
	if got := c.checkSource("wrapped.go", []byte(wrapped)); len(got) != 0 {
		t.Errorf("wrapped citation refused: %v", got)
	}
}

// outsideIn is every problem of text (a document's name, for the message)
// that one of outside's wordings finds, a line each.
func outsideIn(name, text string) []string {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		for _, o := range outside {
			if m := o.re.FindString(line); m != "" {
				out = append(out, fmt.Sprintf("%s:%d: %q %s", name, i+1, m, o.hint))
			}
		}
	}
	return out
}

// TestOpenAPI_DescriptionsCiteNothingOutside: the contract's descriptions
// are read by every client's author; like the comments, they state facts
// and cite no issue, requirement or page outside the repository.
func TestOpenAPI_DescriptionsCiteNothingOutside(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("http", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range outsideIn("http/openapi.yaml", string(raw)) {
		t.Error(p)
	}
	if got := outsideIn("planted", "description: Refuses a say (issue 29).\n"); len(got) != 1 {
		t.Fatalf("a planted issue number: %q, want one problem", got)
	}
}
