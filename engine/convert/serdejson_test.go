package convert

import "testing"

func TestSerdeJSON(t *testing.T) {
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
		v, err := parseJSON([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := serdeJSON(v, c.pretty)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
