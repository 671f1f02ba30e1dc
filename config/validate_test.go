package config

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// embeddedSchemaIndependently compiles our embedded schema with the
// independent validator (github.com/google/jsonschema-go).
func embeddedSchemaIndependently(t *testing.T) interface{ Validate(any) error } {
	t.Helper()
	return independentSchema(t, func(name string) ([]byte, error) { return schemaFS.ReadFile("schema/" + name) })
}

// battery is the values tried at every key of the schema: each JSON type,
// bounds, duplicates, an unknown key.
func battery() []any {
	return []any{
		"x", "", "github", "claude", 0, -1, 1, 5, 2.5, 3.0, 70000, uint64(1 << 63), true, false, nil,
		[]any{}, []any{"a"}, []any{"a", "a"}, []any{"qa", "qa"}, []any{1}, []any{nil}, []any{map[string]any{}},
		map[string]any{}, map[string]any{"zzUnknown": 1},
	}
}

// TestValidator_AgreesWithAnIndependentOne puts every value of the battery,
// and every value the schema documents, at every key of our schema (list
// items with their required keys filled in), and checks that our validator
// accepts exactly what an independent 2020-12 validator accepts — so
// replacing the library lost no strictness.
func TestValidator_AgreesWithAnIndependentOne(t *testing.T) {
	ind := embeddedSchemaIndependently(t)
	var main, collab map[string]any // as published: with the documented values
	if err := json.Unmarshal(Schema(), &main); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mustRead(t, "schema/collaborators.schema.json"), &collab); err != nil {
		t.Fatal(err)
	}
	checked, refused := 0, 0
	try := func(path []any, value any) {
		doc := build(path, value)
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		theirs := ind.Validate(doc)
		ours := schemaProblems(doc)
		checked++
		if len(ours) > 0 {
			refused++
		}
		if (theirs == nil) != (len(ours) == 0) {
			t.Errorf("%s: the independent validator says %v, ours says %v", data, theirs, ours)
		}
		for _, p := range ours {
			if p.path == nil {
				t.Errorf("%s: a problem without a key path: %v", data, p)
			}
		}
	}
	walkWithRefs(t, map[string]any{"properties": main["properties"]}, main, collab, nil, func(path []any) {
		for _, v := range battery() {
			try(path, v)
		}
	}, try)
	for _, f := range []string{"full.yaml", "additions.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		doc := yamlDoc(t, data)
		if ind.Validate(doc) != nil || len(schemaProblems(doc)) != 0 {
			t.Errorf("%s: independent %v, ours %v", f, ind.Validate(doc), schemaProblems(doc))
		}
	}
	t.Logf("%d documents checked, %d refused", checked, refused)
	if checked < 2000 || refused < 1000 {
		t.Errorf("only %d documents checked, %d refused; the walk is broken", checked, refused)
	}
}

// walkWithRefs is walkSchema that also follows $ref (into the main schema
// or the collaborators one) and calls each(path) once per key.
func walkWithRefs(t *testing.T, node, doc, collab map[string]any, path []any, each func(path []any), try func(path []any, value any)) {
	node, doc = deref(t, node, doc, collab)
	if len(path) > 0 {
		each(path)
		tryDocumented(node, path, try)
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for k, sub := range props {
			if m, ok := sub.(map[string]any); ok {
				walkWithRefs(t, m, doc, collab, append(append([]any(nil), path...), k), each, try)
			}
		}
	}
	if items, ok := node["items"].(map[string]any); ok {
		items, doc := deref(t, items, doc, collab)
		req, _ := items["required"].([]any)
		walkWithRefs(t, items, doc, collab, append(append([]any(nil), path...), required{req}), each, try)
	}
}

// deref follows node's $ref, if any, into doc or the collaborators schema,
// returning the target and the document it lies in.
func deref(t *testing.T, node, doc, collab map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	ref, ok := node["$ref"].(string)
	if !ok {
		return node, doc
	}
	base, frag, _ := strings.Cut(ref, "#")
	if base == "collaborators.schema.json" {
		doc = collab
	}
	r, err := resolvePointer(doc, frag)
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	return r.(map[string]any), doc
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := schemaFS.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compileTest compiles a schema written inline (JSON), with other.json
// beside it for $ref.
func compileTest(t *testing.T, main, other string) (*schemaNode, error) {
	t.Helper()
	docs := map[string]any{}
	for id, src := range map[string]string{"https://example.test/main.json": main, "https://example.test/other.json": other} {
		var d any
		if err := json.Unmarshal([]byte(src), &d); err != nil {
			t.Fatal(err)
		}
		docs[id] = d
	}
	return compileSchemaDocs(docs, "https://example.test/main.json")
}

// TestValidator_ReportsEveryFailureInOurWords covers each keyword the
// validator implements, all failures of one document at once.
func TestValidator_ReportsEveryFailureInOurWords(t *testing.T) {
	root, err := compileTest(t, `{
		"type": "object", "additionalProperties": false, "required": ["need"],
		"properties": {
			"need": {}, "port": {"type": "integer", "minimum": 1, "maximum": 10},
			"ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
			"mode": {"enum": ["a", ""]}, "fixed": {"const": "v"},
			"name": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$"},
			"tags": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true, "items": {"type": "string"}},
			"empty": {"type": "array", "minItems": 1},
			"never": false, "flag": {"type": ["boolean", "null"]},
			"other": {"$ref": "other.json#/$defs/thing"},
			"free": {"type": "object", "additionalProperties": {"type": "integer"}}
		}}`,
		`{"$defs": {"thing": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{
		"port": 11, "ratio": 1.0, "mode": "b", "fixed": "w", "name": "ABCD",
		"tags": []any{"a", "a", 3}, "empty": []any{}, "never": 1, "flag": "yes",
		"other": map[string]any{}, "free": map[string]any{"n": 2.5}, "nmae": 1,
	}
	var got []problem
	root.validate(doc, nil, &got)
	sortProblems(got)
	want := []string{
		"empty: needs at least 1 item(s), got 0",
		"fixed: 'w' must be v",
		"flag: expected a boolean or a null, got string 'yes'",
		"free.n: expected an integer, got number 2.5",
		"mode: 'b' is not one of: a, '' (empty)",
		"name: 'ABCD' does not match ^[a-z]+$",
		"name: must be at most 3 character(s) long, got 4",
		"need: required key is missing",
		"never: is not allowed here",
		"nmae: unknown key 'nmae' (did you mean 'name'?); allowed here: empty, fixed, flag, free, mode, name, need, never, other, port, ratio, tags",
		"other.id: required key is missing",
		"port: must be at most 10, got 11",
		"ratio: must be less than 1, got 1",
		"tags: items [0] and [1] are equal; list each value once",
		"tags: takes at most 2 item(s), got 3",
		"tags[2]: expected a string, got integer 3",
	}
	var gotS []string
	for _, p := range got {
		gotS = append(gotS, p.String())
	}
	if strings.Join(gotS, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(gotS, "\n"), strings.Join(want, "\n"))
	}

	var none []problem
	root.validate(map[string]any{"need": nil, "port": 1, "ratio": 0.5, "mode": "", "fixed": "v", "name": "ab",
		"tags": []any{"a"}, "empty": []any{0}, "flag": nil, "other": map[string]any{"id": "x"}, "free": map[string]any{"n": 2.0}}, nil, &none)
	if len(none) != 0 {
		t.Errorf("a valid document refused: %v", none)
	}
}

// TestValidator_RefusesAKeywordItDoesNotImplement: a schema that grows a
// keyword the validator ignores must fail to compile, never pass silently.
func TestValidator_RefusesAKeywordItDoesNotImplement(t *testing.T) {
	for _, kw := range []string{`"anyOf": [{}]`, `"format": "email"`, `"patternProperties": {}`, `"if": {}`} {
		_, err := compileTest(t, `{"properties": {"a": {`+kw+`}}}`, `{}`)
		if err == nil || !strings.Contains(err.Error(), "not implemented by the config validator") || !strings.Contains(err.Error(), "#/properties/a") {
			t.Errorf("%s: err = %v", kw, err)
		}
	}
	if _, err := compileTest(t, `{"$ref": "other.json#/$defs/missing"}`, `{}`); err == nil {
		t.Error("a dangling $ref compiled")
	}
}

// TestConfig_LinksNoSchemaLibrary: the package's (non-test) dependencies hold
// no JSON Schema library, whose package init every CLI start would pay.
func TestConfig_LinksNoSchemaLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(strings.ToLower(dep), "jsonschema") {
			t.Errorf("config links %s", dep)
		}
	}
}

var update = flag.Bool("update", false, "rewrite schema/validation/ from the published schemas")

// stripAnnotations removes the annotation keywords (never a property that
// happens to share their name) from a parsed schema.
func stripAnnotations(n any) any {
	switch x := n.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			switch k {
			case "description", "title", "default", "examples", "$comment":
			case "properties", "$defs":
				m, _ := v.(map[string]any)
				sub := make(map[string]any, len(m))
				for name, s := range m {
					sub[name] = stripAnnotations(s)
				}
				out[k] = sub
			case "enum", "const", "required":
				out[k] = v
			default:
				out[k] = stripAnnotations(v)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripAnnotations(e)
		}
		return out
	}
	return n
}

// TestSchema_ValidationCopyIsThePublishedSchemaWithoutAnnotations: what the
// validator compiles is exactly the published schema (what `config schema`
// prints) less its annotations. -update rewrites the copies.
func TestSchema_ValidationCopyIsThePublishedSchemaWithoutAnnotations(t *testing.T) {
	for _, f := range schemaFiles {
		var full any
		if err := json.Unmarshal(mustRead(t, "schema/"+f.name), &full); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(stripAnnotations(full))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		if *update {
			if err := os.WriteFile(filepath.Join("schema", "validation", f.name), want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := schemaFS.ReadFile("schema/validation/" + f.name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("schema/validation/%s is stale (err %v): run go test ./config -run ValidationCopy -args -update", f.name, err)
		}
	}
}
