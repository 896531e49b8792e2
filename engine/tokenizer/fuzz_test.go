package tokenizer

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// fuzzSeeds are starting inputs for the fuzzers: the golden strings plus edge cases of the split.
func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		"", " ", "a", "'s", "'S", "'ſ", "don't", "  x", "x  ", "\r\n\r\n  \t", " \n ", "a\u00a0\u3000b",
		"<|im_start|>", "<|im_start", "<|image_pad|><|image_pad|>", ">\u0338", "e\u0301", "١٢٣ ²³", "🙂🙂 🙂",
		"x\xff\xfey", "ＡＢＣ１２３", "\u2028\u2029\u0085", "a\tb", "'re've'll'd'm't",
	} {
		f.Add(s)
	}
}

// FuzzRoundTrip: any text encodes to valid ids that decode to the text, NFC-normalized outside the
// added tokens (invalid UTF-8 is first replaced by U+FFFD).
func FuzzRoundTrip(f *testing.F) {
	tok := qwenTokenizer(f)
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		ids := tok.Encode(text)
		got, err := tok.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		if want := normalizeOutsideAdded(tok, text); got != want {
			t.Errorf("Decode(Encode(%q)) = %q, want %q (ids %v)", text, got, want, ids)
		}
	})
}

// FuzzSplitMatchesRegexp2: the hand-written pre-tokenizer cuts NFC text exactly where regexp2,
// running the pattern from the file, does.
func FuzzSplitMatchesRegexp2(f *testing.F) {
	re, err := newRegexSplitter(qwenPattern)
	if err != nil {
		f.Fatal(err)
	}
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, text string) {
		text = norm.NFC.String(strings.ToValidUTF8(text, "\uFFFD"))
		got, want := pieces(qwenSplitter{}, text), pieces(re, text)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("split(%q)\n hand    %q\n regexp2 %q", text, got, want)
		}
	})
}

func pieces(s splitter, text string) []string {
	var out []string
	s.split(text, func(p string) { out = append(out, p) })
	return out
}
