package cmf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file writes JSON the way cortiq's serde_json does (compact, fields in declaration order,
// ryu float formatting such as 1e-6 and 10000.0, no HTML escaping), and reads JSON objects as
// ordered fields so that keys Easel does not model survive a rewrite unchanged.

// Field is one key of a JSON object, with its value kept verbatim.
type Field struct {
	Key   string
	Value json.RawMessage
}

// decodeObject splits a JSON object into its fields, in order. Duplicate keys are refused (serde
// refuses them for the fields it knows).
func decodeObject(data []byte) ([]Field, error) {
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

// encodeObject writes fields as a compact JSON object, ordered by their rank in order (keys not in
// order go last, in the order given).
func encodeObject(fields []Field, order []string) ([]byte, error) {
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
		k, err := jsonValue(f.Key)
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

// jsonValue marshals v compactly without HTML escaping, as serde_json does.
func jsonValue(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// serdeFloat formats x as serde_json (ryu) prints an f64 (bits 64) or f32 (bits 32): the shortest
// round-tripping digits, plain notation with a ".0" for integers, scientific ("1e-6") for very
// small or large magnitudes.
func serdeFloat(x float64, bits int) (string, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "", fmt.Errorf("%v cannot be written to a CMF header", x)
	}
	if x == 0 {
		if math.Signbit(x) {
			return "-0.0", nil
		}
		return "0.0", nil
	}
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	sci := strconv.FormatFloat(x, 'e', -1, bits) // d.ddde±XX
	mant, expStr, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	length := len(digits)
	k := exp - (length - 1) // decimal exponent of the last digit
	kk := length + k        // position of the decimal point
	maxPlain, minFrac := 16, -5
	if bits == 32 {
		maxPlain, minFrac = 13, -6
	}
	var s string
	switch {
	case k >= 0 && kk <= maxPlain:
		s = digits + strings.Repeat("0", k) + ".0"
	case kk > 0 && kk <= maxPlain:
		s = digits[:kk] + "." + digits[kk:]
	case kk > minFrac && kk <= 0:
		s = "0." + strings.Repeat("0", -kk) + digits
	case length == 1:
		s = digits + "e" + strconv.Itoa(kk-1)
	default:
		s = digits[:1] + "." + digits[1:] + "e" + strconv.Itoa(kk-1)
	}
	return sign + s, nil
}
