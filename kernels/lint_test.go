package kernels_test

import (
	"regexp"
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
	}
	for _, name := range kernels.Names() {
		src, err := kernels.Source(name)
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
