package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// qwenSplitter matches qwenPattern by hand. At each position the first alternative that matches
// wins, with the greedy and backtracking behaviour of the regex engine; every position is
// matched by some alternative, so the pieces cover the text.
type qwenSplitter struct{}

func (qwenSplitter) split(text string, emit func(string)) {
	for i := 0; i < len(text); {
		n := qwenMatch(text, i)
		emit(text[i : i+n])
		i += n
	}
}

// qwenMatch is the length in bytes of the match of qwenPattern at byte i (always > 0).
func qwenMatch(s string, i int) int {
	r0, n0 := runeAt(s, i)

	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if r0 == '\'' {
		if n := contraction(s, i+1); n > 0 {
			return 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(r0) {
		return letterRunEnd(s, i+n0) - i
	}
	if !isCRLF(r0) && !isNumber(r0) && i+n0 < len(s) {
		if r1, n1 := runeAt(s, i+n0); isLetter(r1) {
			return letterRunEnd(s, i+n0+n1) - i
		}
	}
	// \p{N}
	if isNumber(r0) {
		return n0
	}
	// ' '?[^\s\p{L}\p{N}]+[\r\n]*
	j := i
	if r0 == ' ' {
		j++
	}
	if k := symbolRunEnd(s, j); k > j {
		for k < len(s) && (s[k] == '\r' || s[k] == '\n') {
			k++
		}
		return k - i
	}
	// What remains starts with whitespace (anything else matched above).
	end, lastCRLF, lastStart := i, -1, i
	for end < len(s) {
		r, n := runeAt(s, end)
		if !unicode.IsSpace(r) {
			break
		}
		if isCRLF(r) {
			lastCRLF = end
		}
		lastStart = end
		end += n
	}
	// \s*[\r\n]+: the whitespace run up to its last line break.
	if lastCRLF >= 0 {
		return lastCRLF + 1 - i
	}
	// \s+(?!\S): the whole run at the end of the text, else all but its last character.
	if end == len(s) || lastStart > i {
		if end == len(s) {
			return end - i
		}
		return lastStart - i
	}
	// \s+
	return end - i
}

// contraction is the length of s, t, re, ve, m, ll or d (any case, with the Unicode case
// folding of the regex engine: ſ folds to s) at byte i, or 0.
func contraction(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	r, n := runeAt(s, i)
	switch foldASCII(r) {
	case 's', 't', 'm', 'd':
		return n
	case 'r', 'v':
		if i+n < len(s) && foldASCII(rune(s[i+n])) == 'e' {
			return n + 1
		}
	case 'l':
		if i+n < len(s) && foldASCII(rune(s[i+n])) == 'l' {
			return n + 1
		}
	}
	return 0
}

// foldASCII folds r to a lower-case ASCII letter where Unicode simple case folding does.
func foldASCII(r rune) rune {
	switch {
	case 'A' <= r && r <= 'Z':
		return r + ('a' - 'A')
	case r == 'ſ': // U+017F LATIN SMALL LETTER LONG S
		return 's'
	}
	return r
}

// letterRunEnd is the end of the run of letters starting at byte i.
func letterRunEnd(s string, i int) int {
	for i < len(s) {
		r, n := runeAt(s, i)
		if !isLetter(r) {
			break
		}
		i += n
	}
	return i
}

// symbolRunEnd is the end of the run of characters that are neither whitespace, letters nor
// numbers starting at byte i.
func symbolRunEnd(s string, i int) int {
	for i < len(s) {
		r, n := runeAt(s, i)
		if unicode.IsSpace(r) || isLetter(r) || isNumber(r) {
			break
		}
		i += n
	}
	return i
}

func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isCRLF(r rune) bool { return r == '\r' || r == '\n' }

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsNumber(r)
}
