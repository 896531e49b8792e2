package kit

import (
	"fmt"
	"strings"
)

// PromptLabel is the start of a prompt as the queue and the sheets show it: its words on one
// line, cut to 40 characters, "(no prompt)" for none.
func PromptLabel(prompt string) string {
	p := strings.Join(strings.Fields(prompt), " ")
	if r := []rune(p); len(r) > 40 {
		p = string(r[:39]) + "…"
	}
	if p == "" {
		p = "(no prompt)"
	}
	return p
}

// JobLabel is the queue's name for a job of one seed: the start of the prompt and the seed.
func JobLabel(prompt string, seed uint64) string {
	return fmt.Sprintf("%s · seed %d", PromptLabel(prompt), seed)
}
