package setup

import (
	"strings"
	"testing"
)

// engineWords are words an artist should not have to read on the first run's choices: the
// converter's internals and the sampler's vocabulary.
var engineWords = []string{"cortiq", "schedule", "q8", "f16"}

// The first run speaks an artist's language: the model-file card names what the file is, the
// conversion's choices say what each means (smaller and faster, finer, exact) with the bit
// width only in brackets, and the fast-draft offer says what Final does in steps, not schedules.
func TestFirstRunSpeaksPlainly(t *testing.T) {
	h := newHarness(t, nil)
	if m := h.markup(); containsAny(m, engineWords) != "" {
		t.Errorf("the first-run window's choices say %q", containsAny(m, engineWords))
	}

	h.fr.showConvert(h.snap)
	h.wait(t)
	p := h.fr.conv
	if got, want := p.profiles.Selected, "Smaller and faster (4-bit, recommended)"; got != want {
		t.Errorf("the conversion's default choice reads %q, want %q", got, want)
	}
	for _, o := range p.profiles.Options {
		if w := containsAny(o, engineWords); w != "" || !strings.Contains(o, "-bit") && !strings.Contains(o, "full precision") {
			t.Errorf("the conversion choice %q does not say in plain words what it means", o)
		}
	}

	// The offer's first words; the chosen LoRA's technical note below them may name its schedule.
	intro := NewFastDraftPanel(nil, t.TempDir(), nil, nil).intro.Text
	if containsAny(intro, engineWords) != "" || !strings.Contains(intro, "all 40 steps") {
		t.Errorf("the fast-draft offer reads %q: it should say what Final does in steps, not schedules", intro)
	}
}

// containsAny is the first of words found in s, case-insensitively ("" if none).
func containsAny(s string, words []string) string {
	s = strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(s, w) {
			return w
		}
	}
	return ""
}
