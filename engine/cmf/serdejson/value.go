package serdejson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Parse reads the JSON value at the start of data as nil, bool, string, json.Number (numbers kept
// as written), []any and map[string]any, ready for Marshal.
func Parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Marshal writes v as serde_json's to_vec writes a serde_json::Value: compact, object keys sorted.
// v is built of nil, bool, string, int, float64, json.Number, []any, []string and map[string]any;
// a json.Number with a fraction or exponent is rewritten in ryu's form ("1e-06" becomes "1e-6"),
// an integer one is written as it is.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeValue(&b, v, false, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MarshalPretty writes v as serde_json's to_vec_pretty does: like Marshal, with each array element
// and object field on its own line indented by two spaces per level, ": " after keys, and empty
// arrays and objects as "[]" and "{}".
func MarshalPretty(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeValue(&b, v, true, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeValue(b *bytes.Buffer, v any, pretty bool, depth int) error {
	newline := func(d int) {
		if pretty {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat("  ", d))
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		s, err := FormatFloat(x, 64)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			f, err := x.Float64()
			if err != nil {
				return err
			}
			if s, err = FormatFloat(f, 64); err != nil {
				return err
			}
		}
		b.WriteString(s)
	case []string:
		arr := make([]any, len(x))
		for i, s := range x {
			arr[i] = s
		}
		return writeValue(b, arr, pretty, depth)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			if err := writeValue(b, e, pretty, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte(']')
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			writeString(b, k)
			b.WriteByte(':')
			if pretty {
				b.WriteByte(' ')
			}
			if err := writeValue(b, x[k], pretty, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte('}')
	default:
		return fmt.Errorf("cannot write a %T as JSON: build the value from nil, bool, string, int, float64, json.Number, []any, []string and map[string]any", v)
	}
	return nil
}
