package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/talk"
)

// namedCommand finds `the-loop …` in backticks, and the `x`/`y` that may
// follow it as alternatives for its last word.
var namedCommand = regexp.MustCompile("`the-loop ([^`]+)`((?:/`[^`]+`)*)")

// commandLines returns every the-loop command line text names.
func commandLines(text string) []string {
	var out []string
	for _, m := range namedCommand.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
		words := strings.Fields(m[1])
		for _, alt := range strings.Split(strings.Trim(m[2], "/"), "/") {
			if alt = strings.Trim(alt, "`"); alt != "" {
				out = append(out, strings.Join(append(words[:len(words)-1:len(words)-1], alt), " "))
			}
		}
	}
	return out
}

// cliModel is the kong model of the CLI.
func cliModel(t *testing.T) *kong.Node {
	t.Helper()
	var cli CLI
	p, err := kong.New(&cli, kong.Name("the-loop"), kong.Vars{"version": "test"}, kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	return p.Model.Node
}

// checkCommandLine reports a command or flag of line ("standing start
// NAME --x") the CLI does not have. Words that are not plain (NAME, <n>,
// …) are arguments; a word with | lists alternatives, each checked.
func checkCommandLine(root *kong.Node, line string) error {
	node := root
	var flags []*kong.Flag
	flags = append(flags, root.Flags...)
	for _, w := range strings.Fields(line) {
		switch {
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			if name == "" || name == "help" || name == "version" {
				continue
			}
			if !hasFlag(flags, name) {
				return fmt.Errorf("`the-loop %s`: no flag --%s on `%s`", line, name, node.FullPath())
			}
		case strings.HasPrefix(w, "-"):
			continue
		case !regexp.MustCompile(`^[a-z][a-z0-9|-]*$`).MatchString(w):
			continue // an argument placeholder
		default:
			cmds := commandChildren(node)
			if len(cmds) == 0 {
				continue // an argument of a leaf command
			}
			alts := strings.Split(w, "|")
			var next *kong.Node
			for _, alt := range alts {
				c := child(cmds, alt)
				if c == nil {
					if len(node.Positional) > 0 {
						break // the group takes an argument here
					}
					return fmt.Errorf("`the-loop %s`: `%s` has no command %q", line, node.FullPath(), alt)
				}
				next = c
			}
			if next != nil && len(alts) == 1 {
				node = next
				flags = append(flags, node.Flags...)
			}
		}
	}
	return nil
}

func commandChildren(n *kong.Node) []*kong.Node {
	var out []*kong.Node
	for _, c := range n.Children {
		if c.Type == kong.CommandNode {
			out = append(out, c)
		}
	}
	return out
}

func child(cmds []*kong.Node, name string) *kong.Node {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func hasFlag(flags []*kong.Flag, name string) bool {
	for _, f := range flags {
		if f.Name == name {
			return true
		}
	}
	return false
}

func TestCheckCommandLine(t *testing.T) {
	root := cliModel(t)
	for line, ok := range map[string]bool{
		"standing start <name>":         true,
		"standing say x --text hi":      true,
		"sessions list --status closed": true,
		"events --type x":               true,
		"config validate":               true,
		"graph show":                    false,
		"events --types":                false,
		"sessions start|pause":          false,
		"channels listen":               false,
		"diagnose --dry-run":            false,
	} {
		if err := checkCommandLine(root, line); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", line, err, ok)
		}
	}
	if got := commandLines("post `the-loop start`/`stop`/`pause` and `the-loop standing list`"); strings.Join(got, ",") != "start,stop,pause,standing list" {
		t.Errorf("commandLines: %q", got)
	}
}

// descriptions collects every description in a schema document.
func descriptions(node any, path string, out map[string]string) {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if s, ok := v.(string); ok && k == "description" {
				out[path] = s
				continue
			}
			descriptions(v, path+"/"+k, out)
		}
	case []any:
		for i, v := range n {
			descriptions(v, fmt.Sprintf("%s/%d", path, i), out)
		}
	}
}

// TestSchemaDescriptions_NameOnlyCommandsThisCLIHas: every `the-loop …`
// the embedded schema's descriptions name is a command (and flags) of
// this CLI.
func TestSchemaDescriptions_NameOnlyCommandsThisCLIHas(t *testing.T) {
	var doc any
	if err := json.Unmarshal(config.Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	descs := map[string]string{}
	descriptions(doc, "", descs)
	root := cliModel(t)
	n := 0
	for path, d := range descs {
		for _, line := range commandLines(d) {
			n++
			if err := checkCommandLine(root, line); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d commands found in the descriptions: the extraction is broken", n)
	}
}

// TestDirective_NamesOnlyCommandsThisCLIHas: the standing directive an
// agent boots with names only commands this CLI has.
func TestDirective_NamesOnlyCommandsThisCLIHas(t *testing.T) {
	prompt, err := talk.BootPrompt(loop.StandingDefinition{Name: "sup", SlackEnabled: true}, true, "sock")
	if err != nil {
		t.Fatal(err)
	}
	lines := commandLines(prompt)
	if len(lines) < 4 {
		t.Fatalf("only %d commands found in the directive: %q", len(lines), lines)
	}
	root := cliModel(t)
	for _, line := range lines {
		if err := checkCommandLine(root, line); err != nil {
			t.Error(err)
		}
	}
}
