package loop

import (
	"regexp"
	"strings"
	"sync"
)

// StandingPrefix starts the ref string of a standing session ("standing:<name>").
const StandingPrefix = "standing:"

// StandingTargetPrefix starts the tmux session name of a standing session.
const StandingTargetPrefix = "loop-standing-"

// NameRE is the grammar of a standing session's name: it becomes a tmux
// session name and a store key.
var NameRE = NewGrammar(`^[a-z0-9][a-z0-9-]{0,39}$`)

// TargetRE guards every signal the-loop sends: only tmux sessions named like
// the ones it creates (no '.', no ':') are ever terminated.
var TargetRE = NewGrammar(`^loop-[A-Za-z0-9_-]+$`)

// Grammar is a regular expression compiled on first use, not in the package
// init every process (every CLI call, `--help` included) pays; NameRE's
// {0,39} alone costs about 500 allocations to compile.
type Grammar struct {
	src string
	re  func() *regexp.Regexp
}

// NewGrammar returns the grammar of the regular expression src (which must
// compile: it panics on first use otherwise, as regexp.MustCompile would).
func NewGrammar(src string) *Grammar {
	return &Grammar{src: src, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })}
}

// MatchString reports whether s matches the grammar.
func (g *Grammar) MatchString(s string) bool { return g.re().MatchString(s) }

// String returns the expression's source (what a message shows).
func (g *Grammar) String() string { return g.src }

// ValidName reports whether name is a valid standing-session name.
func ValidName(name string) bool { return NameRE.MatchString(name) }

// CheckName refuses an invalid standing-session name as a caller's mistake
// (EINVALID: exit 2, HTTP 400), whatever the verb.
func CheckName(name string) error {
	if ValidName(name) {
		return nil
	}
	return Invalid("invalid standing-session name '%s': expected lowercase letters, digits and hyphens, "+
		"not starting with a hyphen (max 40; %s) — the name becomes a tmux session and a file name", name, NameRE)
}

// StandingRef returns "standing:<name>".
func StandingRef(name string) string { return StandingPrefix + name }

// ParseStandingRef returns the name a "standing:<name>" ref addresses, or ""
// and false when ref is not one (a work-item ref never is). It is the only
// recogniser of the prefix.
func ParseStandingRef(ref string) (string, bool) {
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, StandingPrefix) {
		return "", false
	}
	name := ref[len(StandingPrefix):]
	if !ValidName(name) {
		return "", false
	}
	return name, true
}

// TmuxTargetFor returns the tmux session name of a standing session,
// "loop-standing-<name>". It is always derived, never read from a record.
func TmuxTargetFor(name string) string { return StandingTargetPrefix + name }

// TmuxCommand is how an operator reaches the-loop's tmux server: "tmux",
// or "tmux -L <socket>" when routing.tmux.socketName is set.
func TmuxCommand(socket string) string {
	if socket == "" {
		return "tmux"
	}
	return "tmux -L " + socket
}
