package kernels_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"easel/kernels"
)

// stripComments removes // and /* */ comments, keeping line breaks so line numbers stay right.
func stripComments(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch {
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			if i < len(src) {
				b.WriteByte('\n')
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			b.WriteString(strings.Repeat("\n", strings.Count(src[i:i+2+end], "\n")))
			i += end + 3
		default:
			b.WriteByte(src[i])
		}
	}
	return b.String()
}

// TestSourcesAvoidEmulatorGaps keeps the kernels inside what Apple's compiler and the emulator
// treat alike (docs/reference/msl-emu.md §5): an unsuffixed floating literal is float in MSL but
// double in C++, so the emulator would compute in more precision than the GPU; and C++ features
// MSL forbids compile under clang but not for the Mac.
func TestSourcesAvoidEmulatorGaps(t *testing.T) {
	rules := []struct {
		re   *regexp.Regexp
		what string
	}{
		{regexp.MustCompile(`(^|[^\w.])(\d+\.\d*|\.\d+)([eE][-+]?\d+)?([^\w.]|$)`), "a floating literal without the f suffix (double in the emulator, float on the GPU)"},
		{regexp.MustCompile(`\b\d+[eE][-+]?\d+\b[^f]`), "an exponent literal without the f suffix"},
		{regexp.MustCompile(`\b(double|long double|goto|virtual|throw|try|catch|new|delete|thread_local|printf)\b`), "a C++ feature MSL forbids"},
		{regexp.MustCompile(`\bstd::`), "the C++ standard library, which MSL does not have"},
		{regexp.MustCompile(`\b(INFINITY|HUGE_VALF?|isinf|isnan|isfinite|infinity|NAN)\b`), "an infinity or NaN the kernel relies on (undefined under fast math, which Metal compiles with unless told otherwise; use a finite bound such as -FLT_MAX)"},
	}
	for _, name := range append(kernels.Names(), kernels.Fragments()...) {
		src, err := kernels.File(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(stripComments(string(src)), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, r := range rules {
				if m := r.re.FindString(line); m != "" {
					t.Errorf("%s:%d: %s: %q", name, i+1, r.what, strings.TrimSpace(line))
				}
			}
		}
	}
}

// significantLines are src's lines without comments, whitespace runs collapsed, keeping only
// those that say something (not blank, not a lone brace, not a preprocessor line), with their
// 1-based line numbers.
func significantLines(src string) (lines []string, at []int) {
	for i, line := range strings.Split(stripComments(src), "\n") {
		line = strings.Join(strings.Fields(line), " ")
		switch {
		case line == "", line == "{", line == "}", line == "};", strings.HasPrefix(line, "#"):
			continue
		}
		lines = append(lines, line)
		at = append(at, i+1)
	}
	return lines, at
}

// TestSharedTileHasNoSecondCopy keeps kernels/gemmtile.h the one copy of the GEMM core that the
// denoiser's qi_mm_*, the text encoder's ops_linear / ops_mm and the VAE's vae_conv share: the
// files that use it include it, no library repeats three consecutive statements of it (a pasted
// multiply-accumulate loop, q8 staging or guard would), no library indexes the q8 side planes
// (the column field col[k], the row scale rs[o]: only tile_stage_q8 and tile_q8_out apply them),
// and simdgroup multiply-accumulates occur only in it and in the attention kernel, whose
// fragments have other shapes.
func TestSharedTileHasNoSecondCopy(t *testing.T) {
	const fragment = "gemmtile.h"
	users := []string{"gemm.metal", "ops.metal", "vae.metal"}
	ownMMA := map[string]string{"flash.metal": "attention's Q·Kᵀ and P·V fragments", "flashvar.metal": "the attention variants' Q·Kᵀ and P·V fragments"}

	frag, err := kernels.File(fragment)
	if err != nil {
		t.Fatal(err)
	}
	fl, _ := significantLines(string(frag))
	const window = 3
	shared := map[string]bool{}
	for i := 0; i+window <= len(fl); i++ {
		shared[strings.Join(fl[i:i+window], "\n")] = true
	}
	include := regexp.MustCompile(`(?m)^#include "` + regexp.QuoteMeta(fragment) + `"$`)
	mma := regexp.MustCompile(`\b(simdgroup_multiply_accumulate|make_filled_simdgroup_matrix)\b`)
	q8planes := regexp.MustCompile(`\b(col|rs)\s*\[\s*[^[\s]`) // not [[buffer(n)]]
	for _, name := range kernels.Names() {
		src, err := kernels.File(name)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(users, name) && !include.Match(src) {
			t.Errorf("%s does not #include %q: its GEMM must use the shared tile", name, fragment)
		}
		lines, at := significantLines(string(src))
		for i := 0; i+window <= len(lines); i++ {
			if shared[strings.Join(lines[i:i+window], "\n")] {
				t.Errorf("%s:%d repeats %s's code (%q …): call the shared function instead", name, at[i], fragment, lines[i])
			}
		}
		for i, line := range strings.Split(stripComments(string(src)), "\n") {
			if m := q8planes.FindString(line); m != "" {
				t.Errorf("%s:%d indexes a q8 side plane (%s…) outside %s: stage with tile_stage_q8 and scale with tile_q8_out", name, i+1, m, fragment)
			}
		}
		if why, ok := ownMMA[name]; !ok {
			for i, line := range strings.Split(stripComments(string(src)), "\n") {
				if m := mma.FindString(line); m != "" {
					t.Errorf("%s:%d uses %s outside %s: stage into its tile and call tile_mac / tile_zero", name, i+1, m, fragment)
				}
			}
		} else if !mma.Match(src) {
			t.Errorf("%s is listed as having its own simdgroup multiply (%s) but has none: drop it from the list", name, why)
		}
	}
}
