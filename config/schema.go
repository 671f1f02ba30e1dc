package config

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// SchemaID is the $id of the embedded CLI-config schema.
const SchemaID = "https://github.com/the-loop-dev/the-loop/config/schema/cli-config.schema.json"

// collaboratorsID is the $id of the schema the main one references.
const collaboratorsID = "https://github.com/the-loop-dev/the-loop/config/schema/collaborators.schema.json"

//go:embed schema/cli-config.schema.json schema/collaborators.schema.json
var schemaFS embed.FS

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
// documents (to name the keys an object allows).
type compiledSchema struct {
	schema *jsonschema.Schema
	docs   map[string]any // $id → parsed document
}

// compiled compiles the embedded schema once per process; the result is
// immutable and safe for concurrent use.
var compiled = sync.OnceValues(compileSchema)

func compileSchema() (*compiledSchema, error) {
	c := jsonschema.NewCompiler()
	docs := map[string]any{}
	for id, file := range map[string]string{
		SchemaID:        "schema/cli-config.schema.json",
		collaboratorsID: "schema/collaborators.schema.json",
	} {
		raw, err := schemaFS.ReadFile(file)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", file, err)
		}
		if err := c.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("embedded schema %s: %w", file, err)
		}
		docs[id] = doc
	}
	s, err := c.Compile(SchemaID)
	if err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	return &compiledSchema{schema: s, docs: docs}, nil
}

// schemaProblems validates doc (JSON-compatible values) against the embedded
// schema and returns one problem per leaf failure, sorted.
func schemaProblems(doc map[string]any) []problem {
	cs, err := compiled()
	if err != nil {
		return []problem{{msg: "the embedded schema does not compile: " + err.Error(), err: err}}
	}
	err = cs.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []problem{{msg: err.Error(), err: err}}
	}
	var out []problem
	cs.collect(ve, doc, &out)
	sortProblems(out)
	return slices.CompactFunc(out, func(a, b problem) bool { return a.String() == b.String() })
}

// collect walks a ValidationError tree and renders its leaves.
func (cs *compiledSchema) collect(e *jsonschema.ValidationError, doc any, out *[]problem) {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if len(e.Causes) > 0 {
			path, v := locate(doc, e.InstanceLocation)
			var alts []string
			for _, c := range e.Causes {
				var sub []problem
				cs.collect(c, doc, &sub)
				for _, p := range sub {
					alts = append(alts, p.msg)
				}
			}
			*out = append(*out, problem{path: path, msg: fmt.Sprintf("%s matches none of the allowed forms (%s)", describe(v), strings.Join(alts, "; or "))})
			return
		}
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			cs.collect(c, doc, out)
		}
		return
	}
	path, v := locate(doc, e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		allowed := cs.allowedKeys(e.SchemaURL)
		for _, name := range k.Properties {
			msg := fmt.Sprintf("unknown key '%s'", name)
			if s := suggest(name, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean '%s'?)", s)
			}
			if len(allowed) > 0 {
				msg += "; allowed here: " + strings.Join(allowed, ", ")
			}
			*out = append(*out, problem{path: path.child(name), msg: msg})
		}
	case *kind.Required:
		for _, name := range k.Missing {
			*out = append(*out, problem{path: path.child(name), msg: "required key is missing"})
		}
	default:
		*out = append(*out, problem{path: path, msg: leafMessage(e.ErrorKind, v)})
	}
}

// leafMessage words one failed keyword for an operator.
func leafMessage(k jsonschema.ErrorKind, v any) string {
	switch k := k.(type) {
	case *kind.Type:
		got := kindOf(v)
		if got == "mapping" || got == "list" || got == "null" {
			return fmt.Sprintf("expected %s, got %s", wantTypes(k.Want), got)
		}
		return fmt.Sprintf("expected %s, got %s %s", wantTypes(k.Want), got, describe(v))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			if w == "" {
				want[i] = "'' (empty)"
			} else {
				want[i] = fmt.Sprint(w)
			}
		}
		return fmt.Sprintf("%s is not one of: %s", describe(v), strings.Join(want, ", "))
	case *kind.Const:
		return fmt.Sprintf("%s must be %v", describe(v), k.Want)
	case *kind.Pattern:
		return fmt.Sprintf("'%s' does not match %s", k.Got, k.Want)
	case *kind.Minimum:
		return fmt.Sprintf("must be at least %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("must be at most %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("must be greater than %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("must be less than %s, got %s", ratString(k.Want), ratString(k.Got))
	case *kind.MinItems:
		return fmt.Sprintf("needs at least %d item(s), got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("takes at most %d item(s), got %d", k.Want, k.Got)
	case *kind.UniqueItems:
		return fmt.Sprintf("items [%d] and [%d] are equal; list each value once", k.Duplicates[0], k.Duplicates[1])
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d character(s) long, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d character(s) long, got %d", k.Want, k.Got)
	case *kind.FalseSchema:
		return "is not allowed here"
	default:
		return fmt.Sprintf("%s fails the schema's '%s'", describe(v), strings.Join(k.KeywordPath(), "/"))
	}
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

// ratString renders a schema number (integers without a fraction).
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// locate turns a jsonschema instance location into a keyPath (list indices
// as ints) and returns the value found there.
func locate(doc any, loc []string) (keyPath, any) {
	path := make(keyPath, 0, len(loc))
	cur := doc
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				path = append(path, tok)
				cur = nil
				continue
			}
			path = append(path, i)
			cur = c[i]
		case map[string]any:
			path = append(path, tok)
			cur = c[tok]
		default:
			path = append(path, tok)
			cur = nil
		}
	}
	return path, cur
}

// allowedKeys lists the properties the schema object at schemaURL declares.
func (cs *compiledSchema) allowedKeys(schemaURL string) []string {
	base, frag, _ := strings.Cut(schemaURL, "#")
	var node any = cs.docs[base]
	if frag != "" {
		if f, err := url.PathUnescape(frag); err == nil {
			frag = f
		}
		for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, ok := node.(map[string]any)
			if !ok {
				return nil
			}
			node = m[tok]
		}
	}
	m, _ := node.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
	m, _ := cs.docs[SchemaID].(map[string]any)
	return m
}

// isObjectSchema reports whether a schema node declares type object.
func isObjectSchema(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	return m["type"] == "object"
}
