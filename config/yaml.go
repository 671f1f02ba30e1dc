package config

import (
	"fmt"
	"math"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decode parses YAML into JSON-compatible values: mappings become
// map[string]any (non-string keys stringified), sequences []any, integers
// int (uint64 beyond int64), timestamps their text. An empty document is nil.
func decode(data []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return normalise(v), nil
}

func normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalise(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[keyString(k)] = normalise(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalise(e)
		}
		return x
	case int64:
		return int(x)
	case uint:
		return uint64(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Sprint(x) // not a JSON number: let the schema refuse it as a string
		}
		return x
	case time.Time:
		if x.Equal(x.Truncate(24*time.Hour)) && x.Location() == time.UTC {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.RFC3339Nano)
	default:
		return x
	}
}

// keyString renders a non-string mapping key.
func keyString(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	if k == nil {
		return "null"
	}
	return scalarString(normalise(k))
}

// salvage recovers what it can from a file whose YAML does not parse: each
// top-level section (a line starting in column 0 up to the next) is parsed on
// its own, and the sections that parse are kept. It is how a broken file
// still yields state.root and routing.tmux to LoadTolerant.
func salvage(data []byte) map[string]any {
	out := map[string]any{}
	var chunk strings.Builder
	flush := func() {
		var v any
		if err := yaml.Unmarshal([]byte(chunk.String()), &v); err == nil {
			if m, ok := normalise(v).(map[string]any); ok {
				for k, e := range m {
					out[k] = e
				}
			}
		}
		chunk.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if startsSection(line) {
			flush()
		}
		chunk.WriteString(line)
	}
	flush()
	return out
}

// startsSection reports whether a line opens a top-level key.
func startsSection(line string) bool {
	if line == "" || strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...") {
		return false
	}
	switch line[0] {
	case ' ', '\t', '#', '-', '\n', '\r':
		return false
	}
	return true
}

// pruneEmptySections returns a copy of doc in which a section (a key whose
// schema type is object) holding null — `routing:` with nothing under it —
// is absent, as the original's runtime reads it. Values are shared, maps
// along the pruned paths are copied; doc itself is not modified.
func pruneEmptySections(doc map[string]any, schema map[string]any) map[string]any {
	out := make(map[string]any, len(doc))
	props, _ := schema["properties"].(map[string]any)
	for k, v := range doc {
		sub, _ := props[k].(map[string]any)
		switch x := v.(type) {
		case nil:
			if isObjectSchema(sub) {
				continue
			}
			out[k] = nil
		case map[string]any:
			if sub != nil {
				out[k] = pruneEmptySections(x, sub)
			} else {
				out[k] = x
			}
		case []any:
			items, _ := sub["items"].(map[string]any)
			if items == nil {
				out[k] = x
				continue
			}
			l := make([]any, len(x))
			for i, e := range x {
				if m, ok := e.(map[string]any); ok {
					l[i] = pruneEmptySections(m, items)
				} else {
					l[i] = e
				}
			}
			out[k] = l
		default:
			out[k] = v
		}
	}
	return out
}

// removedKeys are the keys the 0.5.0 layout retired, each with its remedy.
var removedKeys = []struct {
	path   keyPath
	remedy string
}{
	{keyPath{"polling", "stateFile"}, "removed in config 0.5.0: the poll ledger is a directory under state.root now; delete the key (move state.root to relocate it)"},
	{keyPath{"webhooks", "ghWebhook", "routing"}, "removed in config 0.5.0: routing is configured in the top-level `routing` block; move these keys there and delete this one"},
	{keyPath{"integrations", "slack"}, "removed in config 0.5.0: Slack is configured in `channels.slack`; move these keys there and delete this one"},
}

// ghBinaryRemedy is the remedy for a `ghBinary` key, wherever it sits.
const ghBinaryRemedy = "removed in config 0.5.0: the gh binary is set once, in `integrations.github.cli.binary`; move the value there and delete this key"

// migrationProblems is the original's migration gate: keys removed in 0.5.0
// and a declared version below it. Each problem covers its key, so the
// schema's "unknown key" for it is not repeated.
func migrationProblems(doc map[string]any) []problem {
	var out []problem
	for _, r := range removedKeys {
		if has(doc, r.path) {
			out = append(out, problem{path: r.path, msg: r.remedy, cover: r.path})
		}
	}
	findKey(doc, nil, "ghBinary", func(p keyPath) {
		out = append(out, problem{path: p, msg: ghBinaryRemedy, cover: p})
	})
	if v, ok := doc["version"]; ok && v != nil {
		declared := scalarString(v)
		cmp, err := compareVersions(declared, CurrentVersion)
		switch {
		case err != nil:
			out = append(out, problem{path: keyPath{"version"},
				msg: fmt.Sprintf("'%s' is not a version number; write %q (or remove the key)", declared, CurrentVersion)})
		case cmp < 0:
			out = append(out, problem{path: keyPath{"version"},
				msg: fmt.Sprintf("the file declares version '%s', older than %s, the oldest layout this the-loop reads; bring it up to date (drop the keys 0.5.0 removed: …ghBinary, polling.stateFile, webhooks.ghWebhook.routing, integrations.slack) and set version: %q", declared, CurrentVersion, CurrentVersion)})
		}
	}
	sortProblems(out)
	return out
}

// has reports whether doc holds a value (null included) at path.
func has(doc map[string]any, path keyPath) bool {
	var cur any = doc
	for _, e := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		cur, ok = m[e.(string)]
		if !ok {
			return false
		}
	}
	return true
}

// findKey calls found for every mapping key named key, at any depth of
// nested mappings (lists are not searched).
func findKey(m map[string]any, at keyPath, key string, found func(keyPath)) {
	for k, v := range m {
		if k == key {
			found(at.child(k))
		}
		if sub, ok := v.(map[string]any); ok {
			findKey(sub, at.child(k), key, found)
		}
	}
}

// compareVersions compares dotted numeric versions ("0.5.0", "v1.2",
// "0.6.0-rc1": a leading v and any pre-release or build suffix are ignored).
func compareVersions(a, b string) (int, error) {
	pa, err := versionParts(a)
	if err != nil {
		return 0, err
	}
	pb, err := versionParts(b)
	if err != nil {
		return 0, err
	}
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			if x < y {
				return -1, nil
			}
			return 1, nil
		}
	}
	return 0, nil
}

func versionParts(v string) ([]int, error) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	if v == "" {
		return nil, fmt.Errorf("empty version")
	}
	var parts []int
	for _, s := range strings.Split(v, ".") {
		n := 0
		if s == "" {
			return nil, fmt.Errorf("bad version %q", v)
		}
		for _, r := range s {
			if r < '0' || r > '9' {
				return nil, fmt.Errorf("bad version %q", v)
			}
			n = n*10 + int(r-'0')
			if n > 1<<30 {
				return nil, fmt.Errorf("bad version %q", v)
			}
		}
		parts = append(parts, n)
	}
	return parts, nil
}
