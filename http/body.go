package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	loop "github.com/the-loop-dev/the-loop"
)

// object is a JSON request body read field by field, so that required
// fields, defaults and types are checked in one place and every problem is
// named by its place ("body.verb: field required"). Unknown fields are
// ignored, as the original's bodies ignore them.
type object struct {
	raw      map[string]json.RawMessage
	problems []string
}

// readObject reads the request body as a JSON object. A body over the limit
// is the *http.MaxBytesError (413); anything that is not a JSON object is
// unprocessable (422).
func readObject(c echo.Context) (*object, error) {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, err
		}
		return nil, unprocessable("body: could not be read: %v", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, unprocessable("body: field required (send a JSON object)")
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, unprocessable("body: not valid JSON: %v", err)
	}
	if data[0] != '{' {
		return nil, unprocessable("body: expected a JSON object, got %s", kindOf(data))
	}
	o := &object{}
	if err := json.Unmarshal(data, &o.raw); err != nil {
		return nil, unprocessable("body: %v", err)
	}
	return o, nil
}

// kindOf names the JSON type of a raw value.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func (o *object) problem(key, msg string) {
	o.problems = append(o.problems, "body."+key+": "+msg)
}

// str reads a string field; required fields have no default.
func (o *object) str(key string, required bool, def string) string {
	raw, ok := o.raw[key]
	if !ok {
		if required {
			o.problem(key, "field required")
		}
		return def
	}
	var s string
	if kindOf(raw) != "a string" || json.Unmarshal(raw, &s) != nil {
		o.problem(key, "expected a string, got "+kindOf(raw))
		return def
	}
	return s
}

// boolean reads an optional boolean field.
func (o *object) boolean(key string, def bool) bool {
	raw, ok := o.raw[key]
	if !ok {
		return def
	}
	var b bool
	if kindOf(raw) != "a boolean" || json.Unmarshal(raw, &b) != nil {
		o.problem(key, "expected a boolean, got "+kindOf(raw))
		return def
	}
	return b
}

// number reads an optional number field.
func (o *object) number(key string, def float64) float64 {
	raw, ok := o.raw[key]
	if !ok {
		return def
	}
	var n float64
	if kindOf(raw) != "a number" || json.Unmarshal(raw, &n) != nil {
		o.problem(key, "expected a number, got "+kindOf(raw))
		return def
	}
	return n
}

// list reads an optional array of strings that may be null: absent and
// null are nil, [] is an empty list.
func (o *object) list(key string) *[]string {
	raw, ok := o.raw[key]
	if !ok || kindOf(raw) == "null" {
		return nil
	}
	if kindOf(raw) != "an array" {
		o.problem(key, "expected an array of strings or null, got "+kindOf(raw))
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		o.problem(key, err.Error())
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		var s string
		if kindOf(it) != "a string" || json.Unmarshal(it, &s) != nil {
			o.problem(key+"["+strconv.Itoa(i)+"]", "expected a string, got "+kindOf(it))
			continue
		}
		out = append(out, s)
	}
	return &out
}

// err is nil when every field read was valid, else one unprocessable error
// naming every problem.
func (o *object) err() error {
	if len(o.problems) == 0 {
		return nil
	}
	return &loop.Error{Code: loop.EUNPROCESSABLE, Message: strings.Join(o.problems, "; ")}
}
