package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/store"
)

// CompletionCmd is `the-loop completion bash|zsh|fish`: it prints a script
// that asks `the-loop __complete` for the candidates at each Tab, so verbs,
// flags and session names always match this binary and its store.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

// Run prints the script.
func (c *CompletionCmd) Run(a *App) error {
	var script string
	switch c.Shell {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
	case "fish":
		script = fishCompletion
	default: // kong's enum refuses other shells first
		return loop.Invalid("no completion script for the shell %q; use bash, zsh or fish", c.Shell)
	}
	_, err := fmt.Fprint(a.Stdout, script)
	return err
}

// The scripts per shell. Each passes the words typed after the program
// name, the one under the cursor last (possibly empty), to
// `the-loop __complete --` and offers the lines it prints.
const (
	bashCompletion = `# bash completion for the-loop. Load it with
#   source <(the-loop completion bash)
# or write it to ~/.local/share/bash-completion/completions/the-loop.
_the_loop() {
    local IFS=$'\n'
    COMPREPLY=($(command "${COMP_WORDS[0]}" __complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _the_loop the-loop
`
	zshCompletion = `#compdef the-loop
# zsh completion for the-loop. Write it as _the-loop into a directory on
# $fpath (before compinit runs), or load it with
#   source <(the-loop completion zsh)
# after compinit.
_the-loop() {
    local -a candidates
    candidates=("${(@f)$(command ${words[1]} __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    candidates=(${candidates:#})
    if (( ${#candidates} )); then
        compadd -Q -- "${candidates[@]}"
    else
        _files
    fi
}
if [[ "${funcstack[1]}" == "_the-loop" ]]; then
    _the-loop "$@"
else
    compdef _the-loop the-loop
fi
`
	fishCompletion = `# fish completion for the-loop. Load it with
#   the-loop completion fish | source
# or write it to ~/.config/fish/completions/the-loop.fish.
function __the_loop_complete
    set -l words (commandline -opc)
    command $words[1] __complete -- $words[2..-1] (commandline -ct) 2>/dev/null
end
complete -c the-loop -f -a '(__the_loop_complete)'
`
)

// CompleteCmd is the hidden `the-loop __complete -- WORDS…` the scripts
// call: it prints the candidates for the last word, one a line.
type CompleteCmd struct {
	Words []string `arg:"" optional:"" passthrough:"" help:"The words after the program name; the last is the one being completed."`
}

// Run completes from kong's model of the command tree; session names come
// from the config and the store (read-only, bounded; see completionNames).
func (c *CompleteCmd) Run(a *App, kctx *kong.Context) error {
	words := c.Words
	if len(words) > 0 && words[0] == "--" {
		words = words[1:]
	}
	flagPath, _ := config.FindFlag(words)
	path := a.ConfigPath
	if flagPath != "" {
		path = config.Resolve(flagPath)
	}
	for _, cand := range complete(kctx.Model.Node, words, func() []string { return a.completionNames(path) }) {
		fmt.Fprintln(a.Stdout, cand)
	}
	return nil
}

// complete returns the candidates for the last of words (the words after
// the program name) under the command tree root: subcommands, the flags of
// the command reached and its parents, enum values after a flag that takes
// one, and standing session names (names()) for a NAME argument or the
// --standing flag. Hidden commands and flags are never offered.
func complete(root *kong.Node, words []string, names func() []string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	typed, cur := words[:len(words)-1], words[len(words)-1]
	at := walk(root, typed)
	if cur == "=" && at.pending != nil { // bash: the cursor right after --flag=
		cur = ""
	}
	if flag, value, ok := strings.Cut(cur, "="); ok && strings.HasPrefix(flag, "--") && !at.dashdash && at.pending == nil {
		return joinedValues(at.node, flag, value, names)
	}
	return matching(at.candidates(cur, names), cur)
}

// cursor is where the words typed before the one being completed leave
// the completion: the command reached, the flag whose value comes next,
// how many positional arguments were given, and whether -- ended the
// flags.
type cursor struct {
	node       *kong.Node
	pending    *kong.Flag // the flag whose value the next word is
	positional int
	dashdash   bool
}

// walk follows typed from root: a subcommand's name descends (before any
// positional argument), a flag that takes a value makes the next word its
// value, anything else is a positional argument.
func walk(root *kong.Node, typed []string) cursor {
	at := cursor{node: root}
	for _, w := range typed {
		switch {
		case at.pending != nil:
			if w == "=" { // bash splits --flag=value at the "=" (COMP_WORDBREAKS)
				continue
			}
			at.pending = nil
		case at.dashdash:
			at.positional++
		case w == "--":
			at.dashdash = true
		case strings.HasPrefix(w, "-") && w != "-":
			if f := findFlag(at.node, w); f != nil && !strings.Contains(w, "=") && !f.IsBool() && !f.IsCounter() {
				at.pending = f
			}
		default:
			if child := findChild(at.node, w); child != nil && at.positional == 0 {
				at.node = child
				continue
			}
			at.positional++
		}
	}
	return at
}

// joinedValues offers --flag=value whole, as zsh and fish keep it one
// word: the flag's values that begin with value, sorted.
func joinedValues(node *kong.Node, flag, value string, names func() []string) []string {
	var cands []string
	if f := findFlag(node, flag); f != nil {
		for _, v := range flagValues(f, names) {
			if strings.HasPrefix(v, value) {
				cands = append(cands, flag+"="+v)
			}
		}
	}
	slices.Sort(cands)
	return cands
}

// candidates are what may come at the cursor, before cur filters them: a
// pending flag's values, the flags of the command and its parents for a
// word that begins with -, the subcommands, or the positional argument's
// values (session names for a NAME but the new one of standing create).
func (at cursor) candidates(cur string, names func() []string) []string {
	var cands []string
	switch node := at.node; {
	case at.pending != nil:
		cands = flagValues(at.pending, names)
	case strings.HasPrefix(cur, "-") && !at.dashdash:
		for n := node; n != nil; n = n.Parent {
			for _, f := range n.Flags {
				if !f.Hidden {
					cands = append(cands, "--"+f.Name)
				}
			}
		}
	case at.positional == 0 && hasCommands(node):
		for _, child := range node.Children {
			if child.Type == kong.CommandNode && !child.Hidden {
				cands = append(cands, child.Name)
			}
		}
	case at.positional < len(node.Positional):
		arg := node.Positional[at.positional]
		switch {
		case arg.Name == "name" && commandPath(node) != "standing create":
			cands = names()
		default:
			cands = arg.EnumSlice()
		}
	}
	return cands
}

// matching is cands that begin with cur, without empty ones or repeats,
// sorted.
func matching(cands []string, cur string) []string {
	out := cands[:0:0]
	for _, c := range cands {
		if strings.HasPrefix(c, cur) && c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// flagValues are the values offered after the flag f: session names for
// --standing, its enum's values otherwise (none: the shell's own completion,
// files, applies).
func flagValues(f *kong.Flag, names func() []string) []string {
	if f.Name == "standing" {
		return names()
	}
	return f.EnumSlice()
}

// findFlag finds the flag w (--long, --long=value or -s) of node or a parent.
func findFlag(node *kong.Node, w string) *kong.Flag {
	long, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
	for n := node; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			switch {
			case strings.HasPrefix(w, "--") && (f.Name == long || slices.Contains(f.Aliases, long)):
				return f
			case !strings.HasPrefix(w, "--") && len(w) == 2 && f.Short == rune(w[1]):
				return f
			}
		}
	}
	return nil
}

// findChild finds the subcommand called w (or an alias of it) under node.
func findChild(node *kong.Node, w string) *kong.Node {
	for _, child := range node.Children {
		if child.Type == kong.CommandNode && (child.Name == w || slices.Contains(child.Aliases, w)) {
			return child
		}
	}
	return nil
}

// hasCommands reports whether node has subcommands.
func hasCommands(node *kong.Node) bool {
	return slices.ContainsFunc(node.Children, func(c *kong.Node) bool { return c.Type == kong.CommandNode })
}

// commandPath is node's command words from the root ("standing create").
func commandPath(node *kong.Node) string {
	var parts []string
	for n := node; n != nil && n.Type == kong.CommandNode; n = n.Parent {
		parts = append([]string{n.Name}, parts...)
	}
	return strings.Join(parts, " ")
}

// Bounds of completionNames: a Tab must answer at once.
const (
	completionStoreWait   = 100 * time.Millisecond
	completionServiceWait = 500 * time.Millisecond
)

// completionNames lists the standing sessions named in the config at path
// and recorded in its store, cheaply and leaving no trace: the config is
// read tolerantly, the store read-only (a missing one is not created), and
// when the running service holds the store its list is asked for instead.
// Whatever cannot be read within the bounds is left out.
func (a *App) completionNames(path string) []string {
	cfg := config.LoadTolerant(path)
	var names []string
	for _, d := range cfg.Standing.Sessions {
		names = append(names, d.Name)
	}
	recorded, err := store.StandingNames(filepath.Join(cfg.StateDir(), "the-loop.db"), completionStoreWait)
	if store.IsLocked(err) && cfg.Service.Enabled && a.probe(cfg, completionServiceWait).ours {
		ctx, cancel := context.WithTimeout(context.Background(), completionServiceWait)
		defer cancel()
		if rows, lerr := a.client(cfg).Standing.List(ctx); lerr == nil {
			for _, r := range rows {
				recorded = append(recorded, r.Name)
			}
		}
	}
	return append(names, recorded...)
}
