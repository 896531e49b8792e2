package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Stream turns generated token ids into text as they come, without ever splitting a UTF-8
// character across two pieces: a byte-level token may end inside a character (one emoji or CJK
// character is often two or three tokens), so the bytes of an unfinished character wait for the
// next token. Special tokens (<|im_end|>, …) and ids outside the vocabulary add nothing. A
// Stream is used by one goroutine at a time.
type Stream struct {
	t       *Tokenizer
	pending []byte
	text    strings.Builder
}

// NewStream starts an empty stream.
func (t *Tokenizer) NewStream() *Stream { return &Stream{t: t} }

// Push adds one token and returns the text it completes ("" while a character is unfinished).
func (s *Stream) Push(id int) string {
	if id < 0 || id >= len(s.t.tokens) || !s.t.known[id] || s.t.added.special[id] {
		return ""
	}
	s.pending = append(s.pending, s.t.tokens[id]...)
	// Everything up to the last character start that is not yet complete.
	cut := len(s.pending)
	for back := 1; back <= utf8.UTFMax && back <= len(s.pending); back++ {
		b := s.pending[len(s.pending)-back]
		if utf8.RuneStart(b) {
			if !utf8.FullRune(s.pending[len(s.pending)-back:]) {
				cut = len(s.pending) - back
			}
			break
		}
	}
	out := strings.ToValidUTF8(string(s.pending[:cut]), "\uFFFD")
	s.pending = append(s.pending[:0], s.pending[cut:]...)
	s.text.WriteString(out)
	return out
}

// Flush ends the stream: bytes of a character that never finished become U+FFFD.
func (s *Stream) Flush() string {
	out := strings.ToValidUTF8(string(s.pending), "\uFFFD")
	s.pending = s.pending[:0]
	s.text.WriteString(out)
	return out
}

// Text is everything pushed so far, as emitted.
func (s *Stream) Text() string { return s.text.String() }
