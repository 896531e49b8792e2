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

// runeBytes maps a rune of the byte-level alphabet back to its byte.
var runeBytes = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	for b, r := range byteRunes {
		m[r] = byte(b)
	}
	return m
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
		b, found := runeBytes[r]
		if !found {
			return "", false
		}
		buf = append(buf, b)
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

// encodeByteLevel spells bytes in the byte-level alphabet.
func encodeByteLevel(raw []byte) string {
	runes := make([]rune, len(raw))
	for i, b := range raw {
		runes[i] = byteRunes[b]
	}
	return string(runes)
}
