package serdejson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// Field is one key of a JSON object, with its value kept verbatim.
type Field struct {
	Key   string
	Value json.RawMessage
}

// DecodeObject splits a JSON object into its fields, in order, values verbatim. Duplicate keys are
// refused (serde refuses them for the fields a struct declares), as is anything after the object.
func DecodeObject(data []byte) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected a JSON object, found %v", tok)
	}
	var fields []Field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("expected a key, found %v", tok)
		}
		if slices.ContainsFunc(fields, func(f Field) bool { return f.Key == key }) {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("key %q: %v", key, err)
		}
		fields = append(fields, Field{key, v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON object")
	}
	return fields, nil
}

// EncodeObject writes fields as a compact JSON object, as serde writes a struct: ordered by each
// key's rank in order (its declaration order), keys not in order last in the order given. Values
// are compacted but otherwise written verbatim; keys are quoted by MarshalStdlib.
func EncodeObject(fields []Field, order []string) ([]byte, error) {
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return len(order)
	}
	sorted := slices.Clone(fields)
	slices.SortStableFunc(sorted, func(a, b Field) int { return rank(a.Key) - rank(b.Key) })
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range sorted {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := MarshalStdlib(f.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		if err := json.Compact(&b, f.Value); err != nil {
			return nil, fmt.Errorf("field %q: %v", f.Key, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
