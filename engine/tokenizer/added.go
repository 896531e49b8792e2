package tokenizer

import (
	"fmt"
	"sort"
	"strings"
)

// addedTokens finds the file's added tokens (specials such as <|im_start|> and plain ones such
// as <think>) in raw text. Like Hugging Face tokenizers (an Aho–Corasick automaton in
// leftmost-longest mode), the earliest occurrence wins, and among tokens starting there the
// longest.
type addedTokens struct {
	byContent map[string]int
	// byFirstByte lists, for each first byte, the token contents starting with it, longest first.
	byFirstByte [256][]string
	special     map[int]bool
}

func newAddedTokens(list []addedTokenJSON) (*addedTokens, error) {
	a := &addedTokens{byContent: make(map[string]int, len(list)), special: make(map[int]bool)}
	for _, tok := range list {
		switch {
		case tok.Content == "":
			return nil, fmt.Errorf("tokenizer.json added token %d has empty content", tok.ID)
		case tok.ID < 0 || tok.ID > maxTokenID:
			return nil, fmt.Errorf("tokenizer.json added token %q has id %d out of range", tok.Content, tok.ID)
		case tok.SingleWord || tok.LStrip || tok.RStrip:
			return nil, fmt.Errorf("tokenizer.json added token %q uses single_word/lstrip/rstrip: not implemented", tok.Content)
		case tok.Normalized:
			return nil, fmt.Errorf("tokenizer.json added token %q is matched after normalization: not implemented", tok.Content)
		}
		a.byContent[tok.Content] = tok.ID
		if tok.Special {
			a.special[tok.ID] = true
		}
		first := tok.Content[0]
		a.byFirstByte[first] = append(a.byFirstByte[first], tok.Content)
	}
	for i := range a.byFirstByte {
		sort.SliceStable(a.byFirstByte[i], func(x, y int) bool { return len(a.byFirstByte[i][x]) > len(a.byFirstByte[i][y]) })
	}
	return a, nil
}

// next finds the first added token in text at or after byte from: its start, its content's
// length and its id; start is -1 when there is none.
func (a *addedTokens) next(text string, from int) (start, length, id int) {
	for i := from; i < len(text); i++ {
		for _, content := range a.byFirstByte[text[i]] {
			if strings.HasPrefix(text[i:], content) {
				return i, len(content), a.byContent[content]
			}
		}
	}
	return -1, 0, 0
}
