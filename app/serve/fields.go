package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// detailItem is one entry of a 422 response's `detail`, as FastAPI with pydantic v1 (A1111's)
// writes it.
type detailItem struct {
	Loc  []any          `json:"loc"`
	Msg  string         `json:"msg"`
	Type string         `json:"type"`
	Ctx  map[string]any `json:"ctx,omitempty"`
}

// fields reads a JSON object's members one by one with pydantic v1's coercions, collecting every
// wrong type or range as a detailItem. Unknown members are ignored (A1111 ignores them); a member
// that is absent or null takes the caller's default.
type fields struct {
	m    map[string]json.RawMessage
	errs []detailItem
	seen map[string]bool
}

// readObject parses a request body as a JSON object. A body that is not JSON is pydantic's
// value_error.jsondecode at its byte offset; a JSON value that is not an object is
// type_error.dict.
func readObject(body []byte) (*fields, []detailItem) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil {
		if _, err2 := dec.Token(); err2 != io.EOF {
			err = fmt.Errorf("Extra data")
		}
	}
	if err != nil {
		pos := int(dec.InputOffset())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			pos = int(se.Offset)
		}
		msg := "Expecting value"
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			msg, pos = "Expecting value: the body ended early", len(body)
		} else if err.Error() == "Extra data" {
			msg = "Extra data"
		} else {
			msg = "Invalid JSON: " + err.Error()
		}
		return nil, []detailItem{{Loc: []any{"body", pos}, Msg: msg, Type: "value_error.jsondecode",
			Ctx: map[string]any{"msg": msg, "pos": pos}}}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, []detailItem{{Loc: []any{"body"}, Msg: "value is not a valid dict", Type: "type_error.dict"}}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, []detailItem{{Loc: []any{"body"}, Msg: "value is not a valid dict", Type: "type_error.dict"}}
	}
	return &fields{m: m, seen: map[string]bool{}}, nil
}

// raw is a member's value and whether it is given (absent and null are not).
func (f *fields) raw(name string) (json.RawMessage, bool) {
	f.seen[name] = true
	r, ok := f.m[name]
	if !ok || string(bytes.TrimSpace(r)) == "null" {
		return nil, false
	}
	return r, true
}

// Has reports whether a member is given (not absent, not null).
func (f *fields) Has(name string) bool { _, ok := f.raw(name); return ok }

func (f *fields) fail(name, msg, typ string, ctx map[string]any) {
	f.errs = append(f.errs, detailItem{Loc: []any{"body", name}, Msg: msg, Type: typ, Ctx: ctx})
}

// scalar is a member as a Go value (json.Number for numbers).
func scalar(r json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.UseNumber()
	var v any
	dec.Decode(&v)
	return v
}

// Str is a str field: strings, and numbers written as text (pydantic v1 coerces them).
func (f *fields) Str(name, def string) string {
	r, ok := f.raw(name)
	if !ok {
		return def
	}
	switch v := scalar(r).(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	f.fail(name, "str type expected", "type_error.str", nil)
	return def
}

// Int is an int field: whole numbers, floats (truncated) and numeric strings, as int() takes them.
func (f *fields) Int(name string, def int64) int64 {
	r, ok := f.raw(name)
	if !ok {
		return def
	}
	var x float64
	switch v := scalar(r).(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		fl, err := v.Float64()
		if err != nil || math.IsInf(fl, 0) || math.Abs(fl) > 1<<62 {
			f.fail(name, "value is not a valid integer", "type_error.integer", nil)
			return def
		}
		x = fl
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			f.fail(name, "value is not a valid integer", "type_error.integer", nil)
			return def
		}
		return i
	case bool:
		if v {
			return 1
		}
		return 0
	default:
		f.fail(name, "value is not a valid integer", "type_error.integer", nil)
		return def
	}
	return int64(x)
}

// Float is a float field: numbers and numeric strings.
func (f *fields) Float(name string, def float64) float64 {
	r, ok := f.raw(name)
	if !ok {
		return def
	}
	var x float64
	var err error
	switch v := scalar(r).(type) {
	case json.Number:
		x, err = v.Float64()
	case string:
		x, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
	case bool:
		if v {
			return 1
		}
		return 0
	default:
		err = errors.New("not a number")
	}
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		f.fail(name, "value is not a valid float", "type_error.float", nil)
		return def
	}
	return x
}

// Bool is a bool field: true/false, 0/1 and the words pydantic v1 accepts.
func (f *fields) Bool(name string, def bool) bool {
	r, ok := f.raw(name)
	if !ok {
		return def
	}
	switch v := scalar(r).(type) {
	case bool:
		return v
	case json.Number:
		switch v.String() {
		case "0":
			return false
		case "1":
			return true
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "0", "off", "f", "false", "n", "no":
			return false
		case "1", "on", "t", "true", "y", "yes":
			return true
		}
	}
	f.fail(name, "value could not be parsed to a boolean", "type_error.bool", nil)
	return def
}

// StrList is a list of strings (base64 images).
func (f *fields) StrList(name string) []string {
	r, ok := f.raw(name)
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(r, &items); err != nil {
		f.fail(name, "value is not a valid list", "type_error.list", nil)
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := scalar(it).(string)
		if !ok {
			f.errs = append(f.errs, detailItem{Loc: []any{"body", name, i}, Msg: "str type expected", Type: "type_error.str"})
			continue
		}
		out = append(out, s)
	}
	return out
}

// List reports whether a member is a non-empty list (fields Easel does not use, like styles).
func (f *fields) List(name string) int {
	r, ok := f.raw(name)
	if !ok {
		return 0
	}
	var items []json.RawMessage
	if err := json.Unmarshal(r, &items); err != nil {
		f.fail(name, "value is not a valid list", "type_error.list", nil)
		return 0
	}
	return len(items)
}

// Object is a dict member (override_settings, alwayson_scripts), nil when absent.
func (f *fields) Object(name string) map[string]json.RawMessage {
	r, ok := f.raw(name)
	if !ok {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil {
		f.fail(name, "value is not a valid dict", "type_error.dict", nil)
		return nil
	}
	return m
}

// Range checks lo ≤ v ≤ hi for an int field that was given, with pydantic's messages.
func (f *fields) Range(name string, v, lo, hi int64) {
	if !f.Has(name) {
		return
	}
	switch {
	case v < lo:
		f.fail(name, fmt.Sprintf("ensure this value is greater than or equal to %d", lo), "value_error.number.not_ge", map[string]any{"limit_value": lo})
	case v > hi:
		f.fail(name, fmt.Sprintf("ensure this value is less than or equal to %d", hi), "value_error.number.not_le", map[string]any{"limit_value": hi})
	}
}

// RangeF is Range for a float field.
func (f *fields) RangeF(name string, v, lo, hi float64) {
	if !f.Has(name) {
		return
	}
	switch {
	case v < lo:
		f.fail(name, fmt.Sprintf("ensure this value is greater than or equal to %s", strconv.FormatFloat(lo, 'g', -1, 64)), "value_error.number.not_ge", map[string]any{"limit_value": lo})
	case v > hi:
		f.fail(name, fmt.Sprintf("ensure this value is less than or equal to %s", strconv.FormatFloat(hi, 'g', -1, 64)), "value_error.number.not_le", map[string]any{"limit_value": hi})
	}
}

// Invalid adds a value error naming the field (a value of the right type Easel cannot use).
func (f *fields) Invalid(name, msg string) { f.fail(name, msg, "value_error", nil) }
