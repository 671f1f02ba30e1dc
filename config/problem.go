package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// keyPath locates a value in the config: each element is a mapping key
// (string) or a list index (int).
type keyPath []any

// child returns a new path with elem appended (never sharing p's array).
func (p keyPath) child(elem any) keyPath {
	out := make(keyPath, len(p), len(p)+1)
	copy(out, p)
	return append(out, elem)
}

// String renders the path in dotted form: routing.tmux.socketName,
// standingSessions.sessions[2].name. A key that is not a plain identifier is
// bracketed and quoted (notifications.events["a.b"]).
func (p keyPath) String() string {
	var b strings.Builder
	for i, e := range p {
		switch v := e.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		case string:
			if plainKey(v) {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(v)
			} else {
				b.WriteString("[" + strconv.Quote(v) + "]")
			}
		}
	}
	if b.Len() == 0 {
		return "(top level)"
	}
	return b.String()
}

// plainKey reports whether a key can be written bare in a dotted path.
func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// within reports whether p is q or lies beneath it.
func (p keyPath) within(q keyPath) bool {
	if len(p) < len(q) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// inStanding reports whether the path lies in the standingSessions block.
func (p keyPath) inStanding() bool { return len(p) > 0 && p[0] == "standingSessions" }

// comparePaths orders paths element-wise, indices numerically and before keys.
func comparePaths(a, b keyPath) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ai, aInt := a[i].(int)
		bi, bInt := b[i].(int)
		switch {
		case aInt && bInt:
			if c := cmp.Compare(ai, bi); c != 0 {
				return c
			}
		case aInt:
			return -1
		case bInt:
			return 1
		default:
			if c := strings.Compare(a[i].(string), b[i].(string)); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(a), len(b))
}

// problem is one thing wrong with a config.
type problem struct {
	path  keyPath
	label string  // shown in parentheses after the path: the entry's name
	msg   string  // what is wrong, the value, the remedy
	cover keyPath // schema complaints at or beneath this path say the same thing again
	err   error   // a wrapped cause, if any
}

// String renders "path (label): msg".
func (p problem) String() string {
	s := p.path.String()
	if p.label != "" {
		s += " (" + p.label + ")"
	}
	return s + ": " + p.msg
}

// asError turns the problem into the-loop's invalid error.
func (p problem) asError() error {
	return &loop.Error{Code: loop.EINVALID, Message: p.String(), Err: p.err}
}

// sortProblems orders problems by path, then message, so output is stable.
func sortProblems(ps []problem) {
	slices.SortStableFunc(ps, func(a, b problem) int {
		if c := comparePaths(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.String(), b.String())
	})
}

// uncovered drops the problems that lie under the cover of one of authority's.
func uncovered(ps, authority []problem) []problem {
	out := ps[:0:0]
next:
	for _, p := range ps {
		for _, a := range authority {
			if a.cover != nil && p.path.within(a.cover) {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}

// errorsOf turns problems into errors (each a *loop.Error, EINVALID).
func errorsOf(ps []problem) []error {
	if len(ps) == 0 {
		return nil
	}
	out := make([]error, len(ps))
	for i, p := range ps {
		out[i] = p.asError()
	}
	return out
}

// joinProblems renders problems on one line, "; " between them.
func joinProblems(ps []problem) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

// describe renders a value for a message: strings quoted, mappings and lists
// by kind only.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "'" + x + "'"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	default:
		return fmt.Sprint(x)
	}
}

// kindOf names the JSON type of a value.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "mapping"
	case []any:
		return "list"
	case int, int64, uint64:
		return "integer"
	case float64:
		return "number"
	default:
		return fmt.Sprintf("%T", v)
	}
}
