package tokenizer

import (
	"encoding/json"
	"fmt"
)

// The vocab and merges of a tokenizer.json are almost all of its 11 MB. Decoding them through
// encoding/json's reflection took about half a second, so they are read by the small scanner
// below; encoding/json has already checked that the whole document is valid JSON.

// vocabJSON is model.vocab in file order: token (in the byte-level alphabet) and id.
type vocabJSON []vocabEntry

type vocabEntry struct {
	token string
	id    int
}

func (v *vocabJSON) UnmarshalJSON(data []byte) error {
	s := jsonScanner{data: data}
	entries := make(vocabJSON, 0, len(data)/16)
	err := s.object(func() error {
		token, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		id, err := s.int()
		if err != nil {
			return fmt.Errorf("vocab entry %q: %v", token, err)
		}
		entries = append(entries, vocabEntry{token, id})
		return nil
	})
	if err != nil {
		return fmt.Errorf("model.vocab: %v", err)
	}
	*v = entries
	return nil
}

// mergesJSON is model.merges: pairs ["a", "b"] in current files, strings "a b" in older ones.
type mergesJSON [][2]string

func (m *mergesJSON) UnmarshalJSON(data []byte) error {
	s := jsonScanner{data: data}
	merges := make(mergesJSON, 0, len(data)/16)
	err := s.array(func() error {
		var pair [2]string
		if s.peek() == '"' {
			line, err := s.str()
			if err != nil {
				return err
			}
			a, b, ok := cutSpace(line)
			if !ok {
				return fmt.Errorf("merge %d (%q) is not two tokens separated by a space", len(merges), line)
			}
			pair = [2]string{a, b}
		} else {
			n := 0
			err := s.array(func() error {
				if n == 2 {
					return fmt.Errorf("merge %d has more than two tokens", len(merges))
				}
				var err error
				pair[n], err = s.str()
				n++
				return err
			})
			if err != nil {
				return err
			}
			if n != 2 {
				return fmt.Errorf("merge %d has %d tokens, want 2", len(merges), n)
			}
		}
		merges = append(merges, pair)
		return nil
	})
	if err != nil {
		return fmt.Errorf("model.merges: %v", err)
	}
	*m = merges
	return nil
}

func cutSpace(s string) (a, b string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// jsonScanner reads the few JSON forms above from valid JSON text.
type jsonScanner struct {
	data []byte
	pos  int
}

func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek is the next non-space byte, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *jsonScanner) expect(c byte) error {
	if got := s.peek(); got != c {
		return fmt.Errorf("at byte %d: want %q, found %q", s.pos, c, got)
	}
	s.pos++
	return nil
}

// object calls member for each member of an object, after which the scanner stands at the
// member's key.
func (s *jsonScanner) object(member func() error) error { return s.sequence('{', '}', member) }

// array calls element for each element of an array.
func (s *jsonScanner) array(element func() error) error { return s.sequence('[', ']', element) }

func (s *jsonScanner) sequence(open, close byte, item func() error) error {
	if err := s.expect(open); err != nil {
		return err
	}
	if s.peek() == close {
		s.pos++
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case close:
			s.pos++
			return nil
		default:
			return fmt.Errorf("at byte %d: want ',' or %q", s.pos, close)
		}
	}
}

// str reads a string; only strings with escapes go through encoding/json.
func (s *jsonScanner) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start, escaped := s.pos, false
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\\':
			escaped = true
			s.pos += 2
			continue
		case '"':
			s.pos++
			if !escaped {
				return string(s.data[start : s.pos-1]), nil
			}
			var out string
			if err := json.Unmarshal(s.data[start-1:s.pos], &out); err != nil {
				return "", fmt.Errorf("at byte %d: %v", start, err)
			}
			return out, nil
		}
		s.pos++
	}
	return "", fmt.Errorf("at byte %d: unterminated string", start)
}

// int reads a non-negative integer.
func (s *jsonScanner) int() (int, error) {
	s.skipSpace()
	start, n := s.pos, 0
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		if n > maxTokenID {
			return 0, fmt.Errorf("at byte %d: number out of range", start)
		}
		n = n*10 + int(s.data[s.pos]-'0')
		s.pos++
	}
	if s.pos == start {
		return 0, fmt.Errorf("at byte %d: want a non-negative integer", start)
	}
	return n, nil
}
