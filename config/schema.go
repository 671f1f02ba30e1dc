package config

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// SchemaID is the $id of the embedded CLI-config schema.
const SchemaID = "https://github.com/the-loop-dev/the-loop/config/schema/cli-config.schema.json"

// collaboratorsID is the $id of the schema the main one references.
const collaboratorsID = "https://github.com/the-loop-dev/the-loop/config/schema/collaborators.schema.json"

// schemaFS holds the schemas as published (with their descriptions) and,
// under schema/validation/, the same schemas with every annotation
// (description, title, default, examples) removed: an eighth of the bytes,
// which is what a validating process parses. A test holds the two equal
// (`go test ./config -run ValidationCopy -args -update` rewrites the copies).
//
//go:embed schema/cli-config.schema.json schema/collaborators.schema.json schema/validation
var schemaFS embed.FS

// schemaFiles are the schemas' $id and file name.
var schemaFiles = [...]struct{ id, name string }{
	{SchemaID, "cli-config.schema.json"},
	{collaboratorsID, "collaborators.schema.json"},
}

// Schema returns the embedded JSON Schema of the CLI config (what
// `the-loop config schema` prints).
func Schema() []byte {
	b, err := schemaFS.ReadFile("schema/cli-config.schema.json")
	if err != nil {
		panic(err) // embedded at build time
	}
	return b
}

// compiledSchema is the schema compiled for validation, plus the parsed
// main document (to prune empty sections).
type compiledSchema struct {
	root *schemaNode
	doc  map[string]any
}

// compiled compiles the embedded schema once per process, on first use (a
// process that validates no config never pays for it); the result is
// immutable and safe for concurrent use.
var compiled = sync.OnceValues(compileSchema)

func compileSchema() (*compiledSchema, error) {
	docs := map[string]any{}
	for _, f := range schemaFiles {
		file := "schema/validation/" + f.name
		raw, err := schemaFS.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", file, err)
		}
		docs[f.id] = doc
	}
	root, err := compileSchemaDocs(docs, SchemaID)
	if err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	main, _ := docs[SchemaID].(map[string]any)
	return &compiledSchema{root: root, doc: main}, nil
}

// schemaProblems validates doc (JSON-compatible values) against the embedded
// schema and returns one problem per leaf failure, sorted.
func schemaProblems(doc map[string]any) []problem {
	cs, err := compiled()
	if err != nil {
		return []problem{{msg: "the embedded schema does not compile: " + err.Error(), err: err}}
	}
	var out []problem
	cs.root.validate(doc, nil, &out)
	if len(out) == 0 {
		return nil
	}
	sortProblems(out)
	return slices.CompactFunc(out, func(a, b problem) bool { return a.String() == b.String() })
}

// wantTypes renders a schema's accepted types in the operator's words.
func wantTypes(want []string) string {
	words := make([]string, len(want))
	for i, w := range want {
		switch w {
		case "object":
			words[i] = "a mapping"
		case "array":
			words[i] = "a list"
		case "integer":
			words[i] = "an integer"
		default:
			words[i] = "a " + w
		}
	}
	return strings.Join(words, " or ")
}

// suggest returns the allowed key closest to name, if one is close enough to
// be a typo (same letters in another case, or at most two edits away).
func suggest(name string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		if strings.EqualFold(a, name) {
			return a
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(a)); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// schemaDoc returns the parsed main schema (for pruning empty sections).
func schemaDoc() map[string]any {
	cs, err := compiled()
	if err != nil {
		return nil
	}
	return cs.doc
}

// isObjectSchema reports whether a schema node declares type object.
func isObjectSchema(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	return m["type"] == "object"
}
