package tokenizer

import (
	"fmt"

	"github.com/dlclark/regexp2"
)

// splitter cuts normalized text into the pieces BPE merges within (Split with behavior
// "Isolated": every match is a piece, and so is any text between matches).
type splitter interface {
	split(text string, emit func(piece string))
}

// qwenPattern is the pre-tokenizer pattern of Qwen2 and Qwen3 tokenizer.json files.
const qwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// newSplitter returns the hand-written matcher for Qwen's pattern (several times faster than a
// backtracking engine), and a regexp2 matcher, which supports the lookahead Go's regexp lacks,
// for any other pattern.
func newSplitter(pattern string) (splitter, error) {
	if pattern == qwenPattern {
		return qwenSplitter{}, nil
	}
	return newRegexSplitter(pattern)
}

// wholeText is the split of a byte-level pre-tokenizer without a pattern: one piece.
type wholeText struct{}

func (wholeText) split(text string, emit func(string)) { emit(text) }

// regexSplitter splits with an arbitrary pattern, in .NET/Oniguruma-like syntax.
type regexSplitter struct{ re *regexp2.Regexp }

func newRegexSplitter(pattern string) (regexSplitter, error) {
	re, err := regexp2.Compile(pattern, regexp2.Unicode)
	if err != nil {
		return regexSplitter{}, fmt.Errorf("tokenizer.json pre-tokenizer pattern %q does not compile: %v", pattern, err)
	}
	return regexSplitter{re: re}, nil
}

func (s regexSplitter) split(text string, emit func(string)) {
	// regexp2 reports positions in runes; map them back to bytes.
	byteAt := make([]int, 0, len(text)+1)
	for i := range text {
		byteAt = append(byteAt, i)
	}
	byteAt = append(byteAt, len(text))
	last := 0
	m, err := s.re.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = s.re.FindNextMatch(m) {
		if m.Length == 0 {
			continue
		}
		start, end := byteAt[m.Index], byteAt[m.Index+m.Length]
		if start > last {
			emit(text[last:start])
		}
		emit(text[start:end])
		last = end
	}
	if last < len(text) {
		emit(text[last:])
	}
}
