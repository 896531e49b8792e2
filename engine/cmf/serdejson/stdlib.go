package serdejson

import (
	"bytes"
	"encoding/json"
)

// MarshalStdlib marshals a typed Go value (string, integer, bool, slice, tagged struct) with
// encoding/json, compact and without HTML escaping, as serde_json writes the same Rust value,
// with one difference in strings: encoding/json writes U+2028 and U+2029 as "\u2028" and
// "\u2029" and replaces invalid UTF-8 with "\ufffd", where serde_json (and Marshal) writes the
// characters as they are (for U+2028 and U+2029 both forms read back as the same string; only
// the bytes differ).
func MarshalStdlib(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
