package serdejson

import (
	"encoding/json"
	"strings"
	"testing"
)

// Fields come back in file order with values verbatim, and are written in declaration order with
// unknown keys last, compacted but otherwise unchanged (numbers keep their text).
func TestObjectRoundTrip(t *testing.T) {
	fields, err := DecodeObject([]byte(`{"zeta": {"n": 1e-06}, "b": [1, 2], "a": "x", "extra": 1.50}`))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range fields {
		keys = append(keys, f.Key)
	}
	if got := strings.Join(keys, ","); got != "zeta,b,a,extra" {
		t.Errorf("keys in order %s, want zeta,b,a,extra", got)
	}
	got, err := EncodeObject(fields, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"x","b":[1,2],"zeta":{"n":1e-06},"extra":1.50}`; string(got) != want {
		t.Errorf("EncodeObject = %s, want %s", got, want)
	}
}

func TestDecodeObjectRefuses(t *testing.T) {
	for _, in := range []string{`[1]`, `{"a":1,"a":2}`, `{"a":1} {}`, `{"a":}`, ``} {
		if _, err := DecodeObject([]byte(in)); err == nil {
			t.Errorf("DecodeObject(%q) succeeded, want an error", in)
		}
	}
}

func TestEncodeObjectRefusesInvalidValue(t *testing.T) {
	if _, err := EncodeObject([]Field{{"a", json.RawMessage(`{oops`)}}, nil); err == nil {
		t.Error("EncodeObject wrote an invalid value")
	}
}
