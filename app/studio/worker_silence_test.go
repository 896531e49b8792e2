package studio

import (
	"testing"
	"time"
)

// The late judgement never runs behind the hub's clock: the silence counts from the receipt, a
// word from when it was sent and only as far as its confirmation.
func TestHubSilenceJudgesLate(t *testing.T) {
	const wait = 2 * time.Second
	at := func(ms int) time.Time { return time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond) }
	cases := []struct {
		name  string
		words [][2]int // sent, confirmed (ms after the receipt)
		acked int
		late  bool
	}{
		{"acknowledged within the ack wait, no word", nil, 1900, false},
		{"frozen after the receipt, before any word", nil, 2100, true},
		{"words every half second", [][2]int{{500, 510}, {1000, 1010}, {1500, 1510}, {2000, 2010}}, 2400, false},
		{"frozen between two words", [][2]int{{500, 510}, {3000, 3010}}, 3100, true},
		{"a word confirmed only after a freeze", [][2]int{{300, 2100}}, 2200, true},
		{"acknowledged after a freeze past the last word", [][2]int{{500, 510}}, 2600, true},
	}
	for _, c := range cases {
		s := newHubSilence(at(0), wait)
		for _, w := range c.words {
			s.heard(at(w[0]), at(w[1]))
		}
		if got := s.late(at(c.acked)); got != c.late {
			t.Errorf("%s: late %v, want %v", c.name, got, c.late)
		}
	}
}
