package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// Load reads the CLI config at path strictly. An empty path or a missing file
// gives the defaults. A file that cannot be read or parsed, whose top level is
// not a mapping, that the migration gate refuses, or that fails the schema
// outside standingSessions is refused with a *loop.Error (EINVALID) naming
// every problem by its dotted key path. A problem inside standingSessions does
// not fail the load: it sets StandingErr and leaves Standing nil (decisions D8).
func Load(path string) (*Config, error) {
	cfg := Default()
	cfg.Path = path
	data, err := readConfig(path)
	if err != nil {
		return nil, loop.Errorf(loop.EINVALID, "cannot load the CLI config %s: %w", path, err)
	}
	if data == nil {
		return cfg, nil
	}
	doc, err := decode(data)
	if err != nil {
		return nil, loop.Errorf(loop.EINVALID, "cannot load the CLI config %s: %w", path, err)
	}
	a := analyse(doc)
	all := append(append([]problem(nil), a.general...), a.standing...)
	sortProblems(all)
	if len(a.general) > 0 {
		return nil, &loop.Error{Code: loop.EINVALID, Message: refusal(path, all)}
	}
	a.fill(cfg, doc)
	cfg.resolvePaths()
	cfg.Problems = errorsOf(all)
	if len(a.standing) > 0 {
		cfg.Standing = nil
		cfg.StandingErr = &loop.Error{Code: loop.EINVALID, Message: joinProblems(a.standing)}
	}
	return cfg, nil
}

// LoadTolerant reads the CLI config at path and never fails: it is what stop
// uses, so a broken config never strands a running agent. Every problem is
// recorded in Problems and whatever can be read is used — the defaults where
// a value is unusable, the top-level sections that parse when the YAML is
// broken, and the standingSessions entries that parse (StandingErr is still
// set when the block has problems; Standing is never nil).
func LoadTolerant(path string) *Config {
	cfg := Default()
	cfg.Path = path
	data, err := readConfig(path)
	if err != nil {
		cfg.Problems = []error{loop.Errorf(loop.EINVALID, "cannot load the CLI config %s: %w", path, err)}
		return cfg
	}
	if data == nil {
		return cfg
	}
	var early []problem
	doc, err := decode(data)
	if err != nil {
		early = append(early, problem{msg: "cannot parse the YAML: " + err.Error(), err: err})
		doc = salvage(data)
	}
	a := analyse(doc)
	all := append(append(early, a.general...), a.standing...)
	sortProblems(all)
	a.fill(cfg, doc)
	cfg.resolvePaths()
	cfg.Problems = errorsOf(all)
	if len(a.standing) > 0 {
		cfg.StandingErr = &loop.Error{Code: loop.EINVALID, Message: joinProblems(a.standing)}
	}
	return cfg
}

// Validate checks a config document and returns every problem (each a
// *loop.Error, EINVALID, naming its dotted key path), standingSessions
// included; nil when the document is valid.
func Validate(data []byte) []error {
	doc, err := decode(data)
	if err != nil {
		return []error{loop.Errorf(loop.EINVALID, "cannot parse the YAML: %w", err)}
	}
	a := analyse(doc)
	all := append(append([]problem(nil), a.general...), a.standing...)
	sortProblems(all)
	return errorsOf(all)
}

// ValidateFile is Validate of the file at path (what `the-loop config
// validate` runs); a file that cannot be read is one problem.
func ValidateFile(path string) []error {
	data, err := os.ReadFile(path)
	if err != nil {
		return []error{loop.Errorf(loop.EINVALID, "cannot read the CLI config %s: %w", path, err)}
	}
	return Validate(data)
}

// readConfig returns the file's bytes; nil (and no error) when path is empty
// or the file does not exist.
func readConfig(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// refusal words a failed strict load: one problem on the line, several as a
// list.
func refusal(path string, ps []problem) string {
	if path == "" {
		path = "(no file)"
	}
	if len(ps) == 1 {
		return fmt.Sprintf("cannot load the CLI config %s: %s", path, ps[0])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cannot load the CLI config %s: %d problems:", path, len(ps))
	for _, p := range ps {
		b.WriteString("\n  - " + p.String())
	}
	return b.String()
}

// analysis is what the checks found in one document.
type analysis struct {
	doc      map[string]any // migrated view: pruned, JSON-compatible
	general  []problem      // outside standingSessions: fail a strict load
	standing []problem      // inside standingSessions: refuse the block
	parsed   *StandingConfig
	typed    *Config
}

// analyse runs the migration gate, the schema and the standingSessions parser
// over a decoded document (nil for an empty file).
func analyse(raw any) *analysis {
	a := &analysis{}
	top, ok := raw.(map[string]any)
	if raw != nil && !ok {
		a.general = append(a.general, problem{msg: fmt.Sprintf(
			"the file holds %s, not a mapping of keys (version, state, routing, standingSessions, service, …)", describeTop(raw))})
		top = nil
	}
	a.doc = pruneEmptySections(top, schemaDoc())

	gate := migrationProblems(a.doc)
	var schemaGeneral, schemaStanding []problem
	for _, p := range schemaProblems(a.doc) {
		if p.path.inStanding() {
			schemaStanding = append(schemaStanding, p)
		} else {
			schemaGeneral = append(schemaGeneral, p)
		}
	}
	a.general = append(a.general, gate...)
	a.general = append(a.general, uncovered(schemaGeneral, gate)...)
	sortProblems(a.general)

	a.typed = Default()
	a.typed.apply(a.doc)
	a.general = append(a.general, crossProblems(a.typed)...)
	sortProblems(a.general)
	parsed, parser := parseStanding(a.doc, a.typed.Routing)
	a.parsed = parsed
	a.standing = append(parser, uncovered(schemaStanding, parser)...)
	sortProblems(a.standing)
	return a
}

// fill copies the analysis into cfg (which carries Path).
func (a *analysis) fill(cfg *Config, raw any) {
	path := cfg.Path
	*cfg = *a.typed
	cfg.Path = path
	if top, ok := raw.(map[string]any); ok {
		cfg.Raw = top
	}
	cfg.Standing = a.parsed
}

// describeTop names what a non-mapping top level is.
func describeTop(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a plain string"
	default:
		return "a single " + kindOf(v)
	}
}

// crossProblems are the refusals no schema can state: keys that are valid
// alone and refused together.
func crossProblems(c *Config) []problem {
	var out []problem
	if c.Service.AuthOff() && c.Service.Exposed {
		out = append(out, problem{path: keyPath{"service", "auth"}, msg: "service.auth: none is refused together with service.exposed: true " +
			"(a service reachable from other hosts must ask for a credential); set service.auth: token, or service.exposed: false"})
	}
	return out
}
