package tokenizer

// GPT-2's byte-level alphabet: tokenizer.json spells every byte as one printable rune, so that
// vocabulary entries and merges are text. Printable Latin-1 bytes stand for themselves; the other
// 68 bytes are mapped, in order, to U+0100 onwards (space becomes 'Ġ', newline 'Ċ').

// byteRunes maps a byte to its rune in the byte-level alphabet.
var byteRunes = func() [256]rune {
	var table [256]rune
	next := rune(256)
	for b := 0; b < 256; b++ {
		if printableLatin1(b) {
			table[b] = rune(b)
		} else {
			table[b] = next
			next++
		}
	}
	return table
}()

// alphabetEnd bounds the runes of the byte-level alphabet (the last mapped byte lands on U+0143).
const alphabetEnd = 256 + 68

// runeBytes maps a rune of the byte-level alphabet back to its byte, plus one: 0 marks a rune
// outside the alphabet.
var runeBytes = func() (table [alphabetEnd]uint16) {
	for b, r := range byteRunes {
		table[r] = uint16(b) + 1
	}
	return table
}()

func printableLatin1(b int) bool {
	return ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF)
}

// decodeByteLevel converts a token spelled in the byte-level alphabet to its bytes; ok is false
// when a rune is outside the alphabet.
func decodeByteLevel(token string) (raw string, ok bool) {
	if selfSpelled(token) {
		return token, true
	}
	buf := make([]byte, 0, len(token))
	for _, r := range token {
		if r < 0 || r >= alphabetEnd || runeBytes[r] == 0 {
			return "", false
		}
		buf = append(buf, byte(runeBytes[r]-1))
	}
	return string(buf), true
}

// selfSpelled reports whether every byte of token is printable ASCII, which the byte-level
// alphabet spells as itself.
func selfSpelled(token string) bool {
	for i := 0; i < len(token); i++ {
		if token[i] < '!' || token[i] > '~' {
			return false
		}
	}
	return true
}
