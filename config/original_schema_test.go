package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// originalSchemaDir is where the original's published schema sits beside the
// checkout (the spec folder), or at $THE_LOOP_ORIGINAL_SCHEMA (a worktree
// elsewhere); tests that need it skip when it is absent.
func originalSchemaDir() string {
	return cmp.Or(os.Getenv("THE_LOOP_ORIGINAL_SCHEMA"), "../../shared/spec/original-schema")
}

// originalSchema compiles the original's cli-config schema, with the
// collaborators schema it references, or skips the test. It is compiled by
// an independent validator (github.com/google/jsonschema-go), not ours, so
// the comparisons below are not ours agreeing with ourselves.
func originalSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	main := filepath.Join(originalSchemaDir(), "cli-config.schema.json")
	if _, err := os.Stat(main); err != nil {
		t.Skipf("original schema not found beside the checkout (%s): %v", originalSchemaDir(), err)
	}
	return independentSchema(t, func(name string) ([]byte, error) {
		return os.ReadFile(filepath.Join(originalSchemaDir(), name))
	})
}

// independentSchema compiles cli-config.schema.json, and the
// collaborators.schema.json it references, read by name through read, with
// github.com/google/jsonschema-go.
func independentSchema(t testing.TB, read func(name string) ([]byte, error)) *jsonschema.Resolved {
	t.Helper()
	load := func(name string) (*jsonschema.Schema, error) {
		raw, err := read(name)
		if err != nil {
			return nil, err
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &s, nil
	}
	root, err := load("cli-config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := root.Resolve(&jsonschema.ResolveOptions{Loader: func(u *url.URL) (*jsonschema.Schema, error) {
		return load(path.Base(u.Path))
	}})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// yamlDoc decodes a YAML (or JSON) document the way Load does.
func yamlDoc(t *testing.T, data []byte) map[string]any {
	t.Helper()
	v, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := v.(map[string]any)
	return m
}

func TestSchema_OriginalAcceptsTheFullFixtureToo(t *testing.T) {
	orig := originalSchema(t)
	data, err := os.ReadFile(filepath.Join("testdata", "full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := yamlDoc(t, data)
	if err := orig.Validate(doc); err != nil {
		t.Fatalf("the original schema refuses full.yaml, so it proves nothing: %v", err)
	}
	if ps := schemaProblems(pruneEmptySections(doc, schemaDoc())); len(ps) != 0 {
		t.Fatalf("ours refuses what the original accepts: %v", ps)
	}
	// Every top-level key the original declares is exercised.
	props := originalProperties(t)
	for key := range props {
		if _, ok := doc[key]; !ok {
			t.Errorf("full.yaml lacks top-level key %s", key)
		}
	}

	additions, err := os.ReadFile(filepath.Join("testdata", "additions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := orig.Validate(yamlDoc(t, additions)); err == nil {
		t.Error("the original accepts additions.yaml: they are not additions")
	}
}

// TestSchema_AcceptsEveryValueTheOriginalDocuments places every default,
// example and enum member the original schema documents at its key, and
// checks that ours accepts each document the original accepts.
func TestSchema_AcceptsEveryValueTheOriginalDocuments(t *testing.T) {
	orig := originalSchema(t)
	root := map[string]any{"properties": originalProperties(t)}
	checked := 0
	walkSchema(root, nil, func(path []any, value any) {
		doc := build(path, value)
		if orig.Validate(doc) != nil {
			return // the original refuses it too
		}
		checked++
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		ours := yamlDoc(t, data)
		if ps := schemaProblems(pruneEmptySections(ours, schemaDoc())); len(ps) != 0 {
			t.Errorf("original accepts %s, ours refuses: %v", data, ps)
		}
	})
	if checked < 150 {
		t.Errorf("only %d documents checked; the walk is broken", checked)
	}
}

func originalProperties(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(originalSchemaDir(), "cli-config.schema.json"))
	if err != nil {
		t.Skip(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s["properties"].(map[string]any)
}

// fillers are values for the keys an array item requires, so an item's
// other keys can be tried.
var fillers = map[string]any{"name": "a", "handle": "@a", "roles": []any{"qa"}, "provider": "github", "type": "slack"}

// walkSchema calls try with every documented value (default, examples,
// enum members) of every property beneath node. Array items are reached
// with index 0 and their required keys filled in.
func walkSchema(node map[string]any, path []any, try func(path []any, value any)) {
	if len(path) > 0 {
		tryDocumented(node, path, try)
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for k, sub := range props {
			if m, ok := sub.(map[string]any); ok {
				walkSchema(m, append(append([]any(nil), path...), k), try)
			}
		}
	}
	if items, ok := node["items"].(map[string]any); ok {
		req, _ := items["required"].([]any)
		walkSchema(items, append(append([]any(nil), path...), required{req}), try)
	}
}

// tryDocumented calls try with each value node documents: its default,
// examples and enum members.
func tryDocumented(node map[string]any, path []any, try func(path []any, value any)) {
	if d, ok := node["default"]; ok {
		try(path, d)
	}
	for _, key := range []string{"examples", "enum"} {
		if l, ok := node[key].([]any); ok {
			for _, v := range l {
				try(path, v)
			}
		}
	}
}

// required marks a list item in a walk path, with the keys it must carry.
type required struct{ keys []any }

// build nests value at path in a fresh document.
func build(path []any, value any) map[string]any {
	var v = value
	for i := len(path) - 1; i >= 0; i-- {
		switch p := path[i].(type) {
		case string:
			v = map[string]any{p: v}
		case required:
			item, ok := v.(map[string]any)
			if !ok {
				v = []any{v}
				continue
			}
			for _, k := range p.keys {
				if _, set := item[k.(string)]; !set {
					item[k.(string)] = fillers[k.(string)]
				}
			}
			v = []any{item}
		}
	}
	return v.(map[string]any)
}
