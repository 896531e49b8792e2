package serdejson

import (
	"bytes"
	"testing"
)

// What serde_json's to_vec / to_vec_pretty write for these documents once parsed into a Value.
func TestMarshal(t *testing.T) {
	cases := []struct {
		in     string
		pretty bool
		want   string
	}{
		{`{"b": 1e-06, "a": [1, 2.50, 5000000.0], "c": {}}`, false, `{"a":[1,2.5,5000000.0],"b":1e-6,"c":{}}`},
		{`{"x": 0.0, "y": -0.02, "z": 1e16, "w": 123456789012345680000.0, "v": 0.0001, "u": 0.00001, "t": 0.000001}`, false,
			`{"t":1e-6,"u":0.00001,"v":0.0001,"w":1.2345678901234568e20,"x":0.0,"y":-0.02,"z":1e16}`},
		{`{"s": "a\"b\\c\n\u0001é/<"}`, false, `{"s":"a\"b\\c\n\u0001é/<"}`},
		{`{"k": [true, null], "e": []}`, true, "{\n  \"e\": [],\n  \"k\": [\n    true,\n    null\n  ]\n}"},
	}
	for _, c := range cases {
		v, err := Parse([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		marshal := Marshal
		if c.pretty {
			marshal = MarshalPretty
		}
		got, err := marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// Go values that are not parsed JSON: ints, float64s and []string, as the converter builds them.
func TestMarshalGoValues(t *testing.T) {
	got, err := Marshal(map[string]any{"steps": 40, "cfg": 1.0, "eps": 1e-6, "names": []string{"a", "b"}, "none": nil})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"cfg":1.0,"eps":1e-6,"names":["a","b"],"none":null,"steps":40}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := Marshal(map[string]any{"x": int64(1)}); err == nil {
		t.Error("Marshal accepted an int64, which it does not know how to write")
	}
}

// serde_json escapes quote, backslash and the control characters, nothing else: not '<' or '/',
// not DEL, not U+2028. MarshalStdlib (encoding/json) agrees except on U+2028, U+2029 and invalid
// UTF-8; this pins both so that a change to either shows here.
func TestStringEscaping(t *testing.T) {
	for _, tc := range []struct {
		in, serde, stdlib string
	}{
		{"plain", `"plain"`, `"plain"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f\"", `"\u0000\u0001\u001f` + "\x7f\""},
		{`q"b\`, `"q\"b\\"`, `"q\"b\\"`},
		{"<a href='/x'>&amp;</a>", `"<a href='/x'>&amp;</a>"`, `"<a href='/x'>&amp;</a>"`},
		{"é中", `"é中"`, `"é中"`},
		{"a\u2028b\u2029c", "\"a\u2028b\u2029c\"", `"a\u2028b\u2029c"`},
		{"x\xffy", "\"x\xffy\"", `"x\ufffdy"`},
	} {
		serde, err := Marshal(tc.in)
		if err != nil || !bytes.Equal(serde, []byte(tc.serde)) {
			t.Errorf("Marshal(%q) = %q, %v; want %q", tc.in, serde, err, tc.serde)
		}
		stdlib, err := MarshalStdlib(tc.in)
		if err != nil || !bytes.Equal(stdlib, []byte(tc.stdlib)) {
			t.Errorf("MarshalStdlib(%q) = %q, %v; want %q", tc.in, stdlib, err, tc.stdlib)
		}
	}
}
