package tokenizer

import "testing"

// TestByteLevelAlphabet: the 256 bytes map to 256 distinct runes below alphabetEnd, printable
// Latin-1 to themselves, space to 'Ġ' and newline to 'Ċ' as in GPT-2, and back.
func TestByteLevelAlphabet(t *testing.T) {
	seen := map[rune]bool{}
	for b := 0; b < 256; b++ {
		r := byteRunes[b]
		if seen[r] || r >= alphabetEnd {
			t.Fatalf("byte %#x maps to %U: repeated or outside the alphabet", b, r)
		}
		seen[r] = true
		if printableLatin1(b) && r != rune(b) {
			t.Errorf("printable byte %#x maps to %U, want itself", b, r)
		}
		raw, ok := decodeByteLevel(string(r))
		if !ok || raw != string([]byte{byte(b)}) {
			t.Errorf("%U decodes to %q, %v; want byte %#x", r, raw, ok, b)
		}
	}
	tests := []struct {
		spelled, raw string
	}{
		{"Ġ", " "}, {"Ċ", "\n"}, {"ĉ", "\t"}, {"aĠb", "a b"}, {"Ã©", "é"},
	}
	for _, tc := range tests {
		if got, ok := decodeByteLevel(tc.spelled); !ok || got != tc.raw {
			t.Errorf("decodeByteLevel(%q) = %q, %v; want %q", tc.spelled, got, ok, tc.raw)
		}
	}
	if _, ok := decodeByteLevel("a\u0400"); ok {
		t.Error("a rune outside the alphabet decoded")
	}
}
