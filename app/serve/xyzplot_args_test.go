package serve

import (
	"slices"
	"testing"
)

// A1111's value syntax expands as its scripts/xyz_grid.py does: int ranges A-B (inclusive), with
// a step (+S) or a count [N] (np.linspace, truncated to int); float ranges with a step run
// np.arange(A, B+S, S); CSV quoting keeps commas inside a value.
func TestXYZValues(t *testing.T) {
	intOpt, floatOpt, srOpt := xyzOption{easel: "steps"}, xyzOption{easel: "cfg", isFloat: true}, xyzOption{easel: "prompt-sr"}
	for _, c := range []struct {
		o    xyzOption
		in   string
		want []string
	}{
		{intOpt, "1-5", []string{"1", "2", "3", "4", "5"}},
		{intOpt, "1-10 (+3)", []string{"1", "4", "7", "10"}},
		{intOpt, "10-1 (-4)", []string{"10", "6"}}, // range(10, 2, -4), as A1111
		{intOpt, "1-10 [4]", []string{"1", "4", "7", "10"}},
		{intOpt, "3, 8,12", []string{"3", "8", "12"}},
		{floatOpt, "0.25-1 (+0.25)", []string{"0.25", "0.5", "0.75", "1"}},
		{floatOpt, "1-2 [3]", []string{"1", "1.5", "2"}},
		{floatOpt, "2.5, 7", []string{"2.5", "7"}},
		{srOpt, `red,"blue, bright", green`, []string{"red", "blue, bright", "green"}},
		{srOpt, `red, "blue, bright"`, []string{"red", `"blue`, `bright"`}}, // Python's csv: no quoting after a space
	} {
		got, _ := xyzValues(c.o, c.in, nil, &xyzArgs{})
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
	// The mode's indices, as A1111 filters its options.
	t2i, i2i := xyzModeOptions("txt2img"), xyzModeOptions("img2img")
	for _, c := range []struct {
		opts  []xyzOption
		index int
		label string
	}{{t2i, 1, "Seed"}, {t2i, 4, "Steps"}, {t2i, 6, "CFG Scale"}, {t2i, 7, "Prompt S/R"}, {t2i, 23, "Denoising"}, {t2i, 37, "RNG source"},
		{i2i, 5, "CFG Scale"}, {i2i, 6, "Image CFG Scale"}, {i2i, 22, "Denoising"}, {i2i, 36, "RNG source"}} {
		if c.opts[c.index].label != c.label {
			t.Errorf("type %d is %q, want %q", c.index, c.opts[c.index].label, c.label)
		}
	}
}
