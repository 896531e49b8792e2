package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// JSON as cortiq's serde_json writes a serde_json::Value: object keys sorted (serde_json's map is
// a BTreeMap), integers as written, floats in ryu's shortest form ("1e-6", "5000000.0"), strings
// escaped minimally; compact, or pretty with two-space indentation (to_vec_pretty).

// parseJSON reads JSON keeping numbers as written.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// serdeJSON writes v (nil, bool, string, json.Number, float64, int, []any, map[string]any,
// []string) as serde_json would.
func serdeJSON(v any, pretty bool) ([]byte, error) {
	var b bytes.Buffer
	if err := writeSerde(&b, v, pretty, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeSerde(b *bytes.Buffer, v any, pretty bool, depth int) error {
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
		writeSerdeString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		s, err := ryu(x)
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
			if s, err = ryu(f); err != nil {
				return err
			}
		}
		b.WriteString(s)
	case []string:
		arr := make([]any, len(x))
		for i, s := range x {
			arr[i] = s
		}
		return writeSerde(b, arr, pretty, depth)
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
			if err := writeSerde(b, e, pretty, depth+1); err != nil {
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
			writeSerdeString(b, k)
			b.WriteByte(':')
			if pretty {
				b.WriteByte(' ')
			}
			if err := writeSerde(b, x[k], pretty, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte('}')
	default:
		return fmt.Errorf("cannot write %T as JSON", v)
	}
	return nil
}

// writeSerdeString escapes as serde_json does: quote, backslash and control characters only.
func writeSerdeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// ryu formats an f64 as serde_json prints it: shortest round-trip digits, plain notation with
// ".0" for integers below 1e16, scientific below 1e-5 ("1e-6", "1.5e-7") and from 1e16 up.
func ryu(x float64) (string, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "", fmt.Errorf("JSON cannot hold %v", x)
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
	mant, expText, _ := strings.Cut(strconv.FormatFloat(x, 'e', -1, 64), "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	point := exp + 1 // digits before the decimal point
	var s string
	switch {
	case point > 16 || point < -4:
		s = digits[:1]
		if len(digits) > 1 {
			s += "." + digits[1:]
		}
		s += "e" + strconv.Itoa(point-1)
	case point <= 0:
		s = "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		s = digits + strings.Repeat("0", point-len(digits)) + ".0"
	default:
		s = digits[:point] + "." + digits[point:]
	}
	return sign + s, nil
}
