package serdejson

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatFloat formats x as serde_json (ryu) prints an f64 (bits 64) or an f32 (bits 32; x must
// then hold an f32 value): the shortest digits that round-trip, plain notation with ".0" for
// integers, scientific ("1e-6", "1.5e-7") for very small or large magnitudes. An f64 is plain from
// 1e-5 up to below 1e16, an f32 from 1e-6 up to below 1e13. NaN and infinities are refused: JSON
// has no form for them.
func FormatFloat(x float64, bits int) (string, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "", fmt.Errorf("JSON has no form for %v: give a finite number", x)
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
	mant, expText, _ := strings.Cut(strconv.FormatFloat(x, 'e', -1, bits), "e") // d.ddde±XX
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	point := exp + 1 // where the decimal point falls, counted in digits from the first
	maxPoint, minPoint := 16, -4
	if bits == 32 {
		maxPoint, minPoint = 13, -5
	}
	var s string
	switch {
	case point > maxPoint || point < minPoint:
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
