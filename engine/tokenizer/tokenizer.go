package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer encodes text to token ids and back. It is immutable after Load and safe for
// concurrent use.
type Tokenizer struct {
	nfc   bool
	split splitter
	bpe   *bpe
	added *addedTokens
	// tokens holds the bytes of every id: model tokens decoded from the byte-level alphabet,
	// added tokens as their content; known marks the ids that exist.
	tokens []string
	known  []bool
}

func (t *Tokenizer) buildDecodeTable(added []addedTokenJSON) {
	size := 0
	for _, id := range t.bpe.vocab {
		size = max(size, int(id)+1)
	}
	for _, tok := range added {
		size = max(size, tok.ID+1)
	}
	t.tokens = make([]string, size)
	t.known = make([]bool, size)
	for raw, id := range t.bpe.vocab {
		t.tokens[id], t.known[id] = raw, true
	}
	for _, tok := range added {
		t.tokens[tok.ID], t.known[tok.ID] = tok.Content, true
	}
}

// Encode is tokenizer(text, add_special_tokens=False)["input_ids"]: added tokens written in the
// text (such as "<|im_start|>") become their ids; everything else is NFC-normalized, split and
// merged. Invalid UTF-8 is first replaced by U+FFFD, as a Python string cannot hold it.
func (t *Tokenizer) Encode(text string) []int {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	ids := make([]int, 0, len(text)/3+1)
	for pos := 0; pos < len(text); {
		start, length, id := t.added.next(text, pos)
		if start < 0 {
			start = len(text)
		}
		ids = t.encodeOrdinary(text[pos:start], ids)
		if length == 0 {
			break
		}
		ids = append(ids, id)
		pos = start + length
	}
	return ids
}

// encodeOrdinary appends the ids of text that holds no added token.
func (t *Tokenizer) encodeOrdinary(text string, ids []int) []int {
	if text == "" {
		return ids
	}
	if t.nfc {
		text = norm.NFC.String(text)
	}
	t.split.split(text, func(piece string) {
		ids = t.bpe.encodeWord(piece, ids)
	})
	return ids
}

// Decode joins the tokens of ids back into text, added tokens included, replacing bytes that do
// not form valid UTF-8 with U+FFFD (as the ByteLevel decoder does). An id outside the
// vocabulary is an error.
func (t *Tokenizer) Decode(ids []int) (string, error) {
	var buf []byte
	for i, id := range ids {
		if id < 0 || id >= len(t.tokens) || !t.known[id] {
			return "", fmt.Errorf("token %d of %d has id %d, which is not in the vocabulary (0…%d)", i, len(ids), id, len(t.tokens)-1)
		}
		buf = append(buf, t.tokens[id]...)
	}
	return strings.ToValidUTF8(string(buf), "\uFFFD"), nil
}

// TokenID is the id of an added token ("<|image_pad|>") or of a model token given by its text;
// ok is false when there is no such single token.
func (t *Tokenizer) TokenID(token string) (id int, ok bool) {
	if id, ok := t.added.byContent[token]; ok {
		return id, true
	}
	if id, ok := t.bpe.vocab[token]; ok {
		return int(id), true
	}
	return 0, false
}

// IsSpecial reports whether id is an added token marked special (<|im_start|>, <|image_pad|>, …).
func (t *Tokenizer) IsSpecial(id int) bool { return t.added.special[id] }

// Size is one more than the largest token id (151669 for Qwen3; the text encoder's embedding
// table has 151936 rows, the rest unused).
func (t *Tokenizer) Size() int { return len(t.tokens) }
