package config

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The validator below implements the JSON Schema 2020-12 keywords the
// embedded schema uses, and refuses to compile a schema that uses any other
// validation keyword — so no keyword can be silently ignored and the check
// stays as strict as the schema says. It exists because a general-purpose
// validator library pays its start-up (compiling its meta-schemas) in a
// package init, in every process that links it, `--help` included; this
// one costs nothing until a config is validated.
//
// Like the library it replaces, it reports every leaf failure (not only the
// first) with the instance location, and short-circuits a node on type,
// const and enum, so a value of the wrong type yields one message.

// schemaNode is one compiled schema (object or boolean).
type schemaNode struct {
	never bool // the boolean schema false

	types     []string
	enum      []any
	hasConst  bool
	constVal  any
	minimum   *float64
	maximum   *float64
	exclMin   *float64
	exclMax   *float64
	minLength *int
	maxLength *int
	pattern   *regexp.Regexp
	minItems  *int
	maxItems  *int
	unique    bool
	items     *schemaNode
	props     map[string]*schemaNode
	allowed   []string    // the declared property names, sorted
	extra     *schemaNode // additionalProperties, nil when absent
	required  []string
	ref       *schemaNode
}

// isAnnotation reports whether a keyword carries no assertion; every other
// keyword must be one keyword() implements. ($defs holds schemas that are
// compiled, and so checked, where a $ref reaches them.)
func isAnnotation(kw string) bool {
	switch kw {
	case "$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly":
		return true
	}
	return false
}

// schemaCompiler turns parsed schema documents into schemaNodes, resolving
// $ref against the documents' $id.
type schemaCompiler struct {
	docs map[string]any         // $id → parsed document
	done map[string]*schemaNode // absolute location → node (refs may recur)
}

// compileSchemaDocs compiles the document with id main; docs holds every
// document a $ref may reach, by $id.
func compileSchemaDocs(docs map[string]any, main string) (*schemaNode, error) {
	c := &schemaCompiler{docs: docs, done: map[string]*schemaNode{}}
	return c.at(main, "")
}

// at compiles the schema at base#pointer (a $ref's target; memoised).
func (c *schemaCompiler) at(base, pointer string) (*schemaNode, error) {
	doc, ok := c.docs[base]
	if !ok {
		return nil, fmt.Errorf("%s#%s: no such schema document", base, pointer)
	}
	raw, err := resolvePointer(doc, pointer)
	if err != nil {
		return nil, fmt.Errorf("%s#%s: %w", base, pointer, err)
	}
	return c.node(raw, base, pointer)
}

// node compiles raw, found at base#pointer (memoised by location, so a $ref
// to a compiled schema, or a cycle, finds it).
func (c *schemaCompiler) node(raw any, base, pointer string) (*schemaNode, error) {
	loc := base + "#" + pointer
	if n, ok := c.done[loc]; ok {
		return n, nil
	}
	n := &schemaNode{}
	c.done[loc] = n // before compiling, so a cycle finds it
	if err := c.compileNode(n, raw, base, pointer); err != nil {
		return nil, err
	}
	return n, nil
}

// compileNode fills n from the schema raw found at base#pointer.
func (c *schemaCompiler) compileNode(n *schemaNode, raw any, base, pointer string) error {
	loc := base + "#" + pointer
	switch s := raw.(type) {
	case bool:
		n.never = !s
		return nil
	case map[string]any:
		for kw, v := range s {
			if err := c.keyword(n, kw, v, base, pointer); err != nil {
				return fmt.Errorf("%s: '%s': %w", loc, kw, err)
			}
		}
		return nil
	default:
		return fmt.Errorf("%s: a schema must be an object or a boolean, got %T", loc, raw)
	}
}

// keyword compiles one keyword of the schema at base#pointer into n: an
// assertion on the value itself through its entry in valueKeywords, a
// keyword that holds schemas by compiling them where they stand, an
// annotation not at all. Any other keyword is refused, so that none is
// silently ignored.
func (c *schemaCompiler) keyword(n *schemaNode, kw string, v any, base, pointer string) error {
	if compile, ok := valueKeywords[kw]; ok {
		return compile(n, v)
	}
	var err error
	switch kw {
	case "items":
		n.items, err = c.sub(v, base, pointer, "items")
	case "properties":
		err = c.properties(n, v, base, pointer)
	case "additionalProperties":
		n.extra, err = c.sub(v, base, pointer, "additionalProperties")
	case "$ref":
		n.ref, err = c.ref(v, base)
	default:
		if !isAnnotation(kw) {
			return fmt.Errorf("keyword not implemented by the config validator (config/validate.go); implement it before the schema uses it")
		}
	}
	return err
}

// valueKeywords are the keywords that assert something of the value
// itself, each with the function that reads its argument into a node (an
// argument of the wrong kind is an error). It is only read.
var valueKeywords = map[string]func(n *schemaNode, v any) error{
	"type": compileType,
	"enum": func(n *schemaNode, v any) error {
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("expected a list, got %T", v)
		}
		n.enum = l
		return nil
	},
	"const": func(n *schemaNode, v any) error {
		n.hasConst, n.constVal = true, v
		return nil
	},
	"minimum":          numberKeyword(func(n *schemaNode) **float64 { return &n.minimum }),
	"maximum":          numberKeyword(func(n *schemaNode) **float64 { return &n.maximum }),
	"exclusiveMinimum": numberKeyword(func(n *schemaNode) **float64 { return &n.exclMin }),
	"exclusiveMaximum": numberKeyword(func(n *schemaNode) **float64 { return &n.exclMax }),
	"minLength":        countKeyword(func(n *schemaNode) **int { return &n.minLength }),
	"maxLength":        countKeyword(func(n *schemaNode) **int { return &n.maxLength }),
	"minItems":         countKeyword(func(n *schemaNode) **int { return &n.minItems }),
	"maxItems":         countKeyword(func(n *schemaNode) **int { return &n.maxItems }),
	"uniqueItems": func(n *schemaNode, v any) error {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("expected a boolean, got %T", v)
		}
		n.unique = b
		return nil
	},
	"pattern": func(n *schemaNode, v any) error {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("expected a string, got %T", v)
		}
		var err error
		n.pattern, err = regexp.Compile(s)
		return err
	},
	"required": compileRequired,
}

// numberKeyword is the compiler of a keyword whose argument is a number,
// kept in the node's field that field returns.
func numberKeyword(field func(n *schemaNode) **float64) func(n *schemaNode, v any) error {
	return func(n *schemaNode, v any) error {
		var err error
		*field(n), err = schemaNumber(v)
		return err
	}
}

// countKeyword is the compiler of a keyword whose argument is a
// non-negative integer, kept in the node's field that field returns.
func countKeyword(field func(n *schemaNode) **int) func(n *schemaNode, v any) error {
	return func(n *schemaNode, v any) error {
		var err error
		*field(n), err = schemaCount(v)
		return err
	}
}

// compileType reads type: one type name or a list of them.
func compileType(n *schemaNode, v any) error {
	switch t := v.(type) {
	case string:
		n.types = []string{t}
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("expected a type name, got %v", e)
			}
			n.types = append(n.types, s)
		}
	default:
		return fmt.Errorf("expected a string or a list, got %T", v)
	}
	return nil
}

// compileRequired reads required: a list of key names.
func compileRequired(n *schemaNode, v any) error {
	l, ok := v.([]any)
	if !ok {
		return fmt.Errorf("expected a list, got %T", v)
	}
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return fmt.Errorf("expected a key name, got %v", e)
		}
		n.required = append(n.required, s)
	}
	return nil
}

// sub compiles raw, a schema held by the keyword path elems of the schema
// at base#pointer (each element escaped as a JSON pointer token).
func (c *schemaCompiler) sub(raw any, base, pointer string, elems ...string) (*schemaNode, error) {
	p := pointer
	for _, e := range elems {
		p += "/" + strings.ReplaceAll(strings.ReplaceAll(e, "~", "~0"), "/", "~1")
	}
	return c.node(raw, base, p)
}

// properties compiles properties, an object of schemas by key, into n,
// and records the declared names, sorted, for the messages about unknown
// keys.
func (c *schemaCompiler) properties(n *schemaNode, v any, base, pointer string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("expected an object, got %T", v)
	}
	n.props = make(map[string]*schemaNode, len(m))
	for name := range m {
		var err error
		if n.props[name], err = c.sub(m[name], base, pointer, "properties", name); err != nil {
			return err
		}
		n.allowed = append(n.allowed, name)
	}
	slices.Sort(n.allowed)
	return nil
}

// ref compiles the target of $ref v, resolved against base (the document's
// $id): the document it names, at the JSON pointer of its fragment.
func (c *schemaCompiler) ref(v any, base string) (*schemaNode, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("expected a string, got %T", v)
	}
	b, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	r, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	abs := b.ResolveReference(r)
	frag := abs.Fragment
	abs.Fragment = ""
	return c.at(abs.String(), frag)
}

// resolvePointer follows a JSON pointer ("" or "/a/b") into doc.
func resolvePointer(doc any, pointer string) (any, error) {
	if pointer == "" {
		return doc, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("only JSON-pointer fragments are supported")
	}
	cur := doc
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no '%s' in a non-object", tok)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("no '%s'", tok)
		}
	}
	return cur, nil
}

func schemaNumber(v any) (*float64, error) {
	f, ok := v.(float64)
	if !ok {
		return nil, fmt.Errorf("expected a number, got %T", v)
	}
	return &f, nil
}

func schemaCount(v any) (*int, error) {
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) {
		return nil, fmt.Errorf("expected a non-negative integer, got %v", v)
	}
	i := int(f)
	return &i, nil
}

// validate checks v (at path) against n and appends one problem per leaf
// failure.
func (n *schemaNode) validate(v any, path keyPath, out *[]problem) {
	if n.never {
		*out = append(*out, problem{path: path, msg: "is not allowed here"})
		return
	}
	if len(n.types) > 0 && !typeMatches(n.types, v) {
		got := kindOf(v)
		msg := fmt.Sprintf("expected %s, got %s", wantTypes(n.types), got)
		if got != "mapping" && got != "list" && got != "null" {
			msg += " " + describe(v)
		}
		*out = append(*out, problem{path: path, msg: msg})
		return
	}
	if n.hasConst && !jsonEqual(v, n.constVal) {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("%s must be %v", describe(v), n.constVal)})
		return
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(w any) bool { return jsonEqual(v, w) }) {
		want := make([]string, len(n.enum))
		for i, w := range n.enum {
			if w == "" {
				want[i] = "'' (empty)"
			} else {
				want[i] = fmt.Sprint(w)
			}
		}
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("%s is not one of: %s", describe(v), strings.Join(want, ", "))})
		return
	}
	if n.ref != nil {
		n.ref.validate(v, path, out)
	}
	switch x := v.(type) {
	case map[string]any:
		n.validateObject(x, path, out)
	case []any:
		n.validateList(x, path, out)
	case string:
		n.validateString(x, path, out)
	default:
		if f, ok := jsonNumber(v); ok {
			n.validateNumber(f, v, path, out)
		}
	}
}

func (n *schemaNode) validateObject(m map[string]any, path keyPath, out *[]problem) {
	for _, name := range n.required {
		if _, ok := m[name]; !ok {
			*out = append(*out, problem{path: path.child(name), msg: "required key is missing"})
		}
	}
	var unknown []string
	for name, e := range m {
		if s, ok := n.props[name]; ok {
			s.validate(e, path.child(name), out)
			continue
		}
		switch {
		case n.extra == nil:
		case n.extra.never:
			unknown = append(unknown, name)
		default:
			n.extra.validate(e, path.child(name), out)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		msg := fmt.Sprintf("unknown key '%s'", name)
		if s := suggest(name, n.allowed); s != "" {
			msg += fmt.Sprintf(" (did you mean '%s'?)", s)
		}
		if len(n.allowed) > 0 {
			msg += "; allowed here: " + strings.Join(n.allowed, ", ")
		}
		*out = append(*out, problem{path: path.child(name), msg: msg})
	}
}

func (n *schemaNode) validateList(l []any, path keyPath, out *[]problem) {
	if n.minItems != nil && len(l) < *n.minItems {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("needs at least %d item(s), got %d", *n.minItems, len(l))})
	}
	if n.maxItems != nil && len(l) > *n.maxItems {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("takes at most %d item(s), got %d", *n.maxItems, len(l))})
	}
	if n.unique {
	dup:
		for i := range l {
			for j := i + 1; j < len(l); j++ {
				if jsonEqual(l[i], l[j]) {
					*out = append(*out, problem{path: path, msg: fmt.Sprintf("items [%d] and [%d] are equal; list each value once", i, j)})
					break dup
				}
			}
		}
	}
	if n.items != nil {
		for i, e := range l {
			n.items.validate(e, path.child(i), out)
		}
	}
}

func (n *schemaNode) validateString(s string, path keyPath, out *[]problem) {
	length := len([]rune(s))
	if n.minLength != nil && length < *n.minLength {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("must be at least %d character(s) long, got %d", *n.minLength, length)})
	}
	if n.maxLength != nil && length > *n.maxLength {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("must be at most %d character(s) long, got %d", *n.maxLength, length)})
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("'%s' does not match %s", s, n.pattern)})
	}
}

func (n *schemaNode) validateNumber(f float64, v any, path keyPath, out *[]problem) {
	got := numString(v)
	if n.minimum != nil && f < *n.minimum {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("must be at least %s, got %s", numString(*n.minimum), got)})
	}
	if n.maximum != nil && f > *n.maximum {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("must be at most %s, got %s", numString(*n.maximum), got)})
	}
	if n.exclMin != nil && f <= *n.exclMin {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("must be greater than %s, got %s", numString(*n.exclMin), got)})
	}
	if n.exclMax != nil && f >= *n.exclMax {
		*out = append(*out, problem{path: path, msg: fmt.Sprintf("must be less than %s, got %s", numString(*n.exclMax), got)})
	}
}

// typeMatches reports whether v is one of the JSON types; a number with no
// fraction is an integer (2020-12).
func typeMatches(types []string, v any) bool {
	for _, t := range types {
		switch t {
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "null":
			if v == nil {
				return true
			}
		case "number":
			if _, ok := jsonNumber(v); ok {
				return true
			}
		case "integer":
			if f, ok := jsonNumber(v); ok && f == math.Trunc(f) {
				return true
			}
		}
	}
	return false
}

// jsonNumber returns a JSON number's value.
func jsonNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// numString renders a number as written (integers without a fraction).
func numString(v any) string {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

// jsonEqual is JSON Schema equality: numbers by value, objects and arrays
// element-wise.
func jsonEqual(a, b any) bool {
	if fa, ok := jsonNumber(a); ok {
		fb, ok := jsonNumber(b)
		return ok && fa == fb
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !jsonEqual(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil, string, bool:
		return a == b
	}
	return false
}
