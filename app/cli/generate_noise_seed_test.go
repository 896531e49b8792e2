package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/engine/seed"
)

// TestGenerateEditSeedTrap: an Easel PNG given as a condition image with the run's own seed and
// size moves the noise to seed.EditNoise(seed) (a notice; noise_seed in every --json event that
// carries a seed and in the PNG), and the picture is the one that noise seed draws; another seed,
// another size or the PNG as a start image (--init) does not move it; --from the edited PNG
// reproduces it.
func TestGenerateEditSeedTrap(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	gen := func(name string, extra ...string) (string, []jsonEvent, string) {
		t.Helper()
		out := filepath.Join(dir, name+".png")
		args := append([]string{"generate", "--model", model, "--prompt", "make it night", "--steps", "2", "--backend", "cpu", "--out", out, "--json"}, extra...)
		code, stdout, stderr := run(args...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		var evs []jsonEvent
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var e jsonEvent
			if err := jsonUnmarshal(line, &e); err != nil {
				t.Fatalf("%s: %q: %v", name, line, err)
			}
			evs = append(evs, e)
		}
		return out, evs, stderr
	}
	// noiseSeeds are the noise seeds of the events that carry a seed, and the notices.
	noiseSeeds := func(evs []jsonEvent) (seeds map[string]bool, notices string) {
		seeds = map[string]bool{}
		for _, e := range evs {
			if e.Seed != nil {
				s := "none"
				if e.NoiseSeed != nil {
					s = strconv.FormatUint(*e.NoiseSeed, 10)
				}
				seeds[s] = true
			}
			notices += e.Notice
		}
		return seeds, notices
	}
	orig, _, _ := gen("original", "--seed", "5", "--size", "64x64")
	moved := seed.EditNoise(5)
	want := strconv.FormatUint(moved, 10)

	edit, evs, _ := gen("edit", "--image", orig, "--seed", "5", "--size", "64x64")
	seeds, notices := noiseSeeds(evs)
	if len(seeds) != 1 || !seeds[want] || !strings.Contains(notices, "noise seed "+want) {
		t.Errorf("the edit with the image's own seed and size: noise seeds %v (want only %s), notices %q", seeds, want, notices)
	}
	m, err := imagefile.ReadFile(edit)
	if err != nil || m.Settings.Seed != 5 || m.Settings.NoiseSeed == nil || *m.Settings.NoiseSeed != moved {
		t.Fatalf("the edit's PNG records seed %d, noise seed %v (%v); want 5 and %d", m.Settings.Seed, m.Settings.NoiseSeed, err, moved)
	}
	// The noise is the derived seed's: the same edit with --seed moved (no trap then) draws it.
	plain, evs, _ := gen("plain", "--image", orig, "--seed", want, "--size", "64x64")
	if s, _ := noiseSeeds(evs); !s["none"] || len(s) != 1 {
		t.Errorf("another seed moved the noise: %v", s)
	}
	if !bytes.Equal(pixelsOf(t, edit), pixelsOf(t, plain)) {
		t.Error("the edit's picture is not the one its noise seed draws")
	}
	for name, extra := range map[string][]string{
		"other-size": {"--image", orig, "--seed", "5", "--size", "96x64"},
		"init":       {"--init", orig, "--seed", "5", "--size", "64x64"},
	} {
		out, evs, _ := gen(name, extra...)
		s, notices := noiseSeeds(evs)
		m, _ := imagefile.ReadFile(out)
		if !s["none"] || len(s) != 1 || strings.Contains(notices, "noise seed") || m.Settings.NoiseSeed != nil {
			t.Errorf("%s: noise seeds %v, notices %q, PNG noise seed %v; want none", name, s, notices, m.Settings.NoiseSeed)
		}
	}
	again, _, _ := gen("again", "--from", edit)
	if !bytes.Equal(pixelsOf(t, again), pixelsOf(t, edit)) {
		t.Error("--from the edited PNG does not reproduce it")
	}
	if m, _ := imagefile.ReadFile(again); m.Settings.NoiseSeed == nil || *m.Settings.NoiseSeed != moved {
		t.Errorf("--from the edited PNG records noise seed %v, want %d", m.Settings.NoiseSeed, moved)
	}
}

func jsonUnmarshal(line string, v any) error { return json.Unmarshal([]byte(line), v) }
