package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Streaming a text's tokens one at a time gives every piece as valid UTF-8 and, joined, the
// text itself, even where tokens end inside a character; special tokens add nothing.
func TestStreamNeverSplitsACharacter(t *testing.T) {
	tok := qwenTokenizer(t)
	for _, text := range []string{"a cat asleep on a sunny windowsill", "猫が窓辺で眠る 🐈‍⬛ café ☀️", "Ünïcödé — ε ≈ 0.1"} {
		ids := tok.Encode(text)
		im, ok := tok.TokenID("<|im_end|>")
		if !ok {
			t.Fatal("no <|im_end|>")
		}
		ids = append(ids, im)
		s := tok.NewStream()
		var pieces []string
		for _, id := range ids {
			p := s.Push(id)
			if !utf8.ValidString(p) {
				t.Errorf("%q: piece %q is not valid UTF-8", text, p)
			}
			pieces = append(pieces, p)
		}
		pieces = append(pieces, s.Flush())
		if got := strings.Join(pieces, ""); got != text || s.Text() != text {
			t.Errorf("streamed %q (%q), want %q", got, s.Text(), text)
		}
	}
	// A character cut off at the end becomes U+FFFD, once.
	s := tok.NewStream()
	ids := tok.Encode("🐈")
	for _, id := range ids[:len(ids)-1] {
		s.Push(id)
	}
	if len(ids) > 1 && s.Flush() != "\uFFFD" {
		t.Errorf("an unfinished character at the end: %q", s.Text())
	}
}
