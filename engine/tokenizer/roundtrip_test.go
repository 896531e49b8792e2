package tokenizer

import (
	"golang.org/x/text/unicode/norm"
)

// normalizeOutsideAdded is the text a Decode of Encode(text) must return: the stretches between
// added tokens NFC-normalized, the added tokens as written.
func normalizeOutsideAdded(tok *Tokenizer, text string) string {
	var out []byte
	for pos := 0; pos < len(text); {
		start, length, _ := tok.added.next(text, pos)
		if start < 0 {
			start = len(text)
		}
		out = append(out, norm.NFC.String(text[pos:start])...)
		out = append(out, text[start:start+length]...)
		pos = start + length
	}
	return string(out)
}
