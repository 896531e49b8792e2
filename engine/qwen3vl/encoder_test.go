package qwen3vl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/quant"
	"easel/internal/tinysnapshot"
)

func TestMRoPEPositions(t *testing.T) {
	const P = 9 // the image token in these examples
	tests := []struct {
		name  string
		ids   []int32
		grids []mergedGrid
		want  [][3]int
		runs  []imageRun
	}{
		{
			name: "text only counts up on every axis",
			ids:  []int32{1, 2, 3},
			want: [][3]int{{0, 0, 0}, {1, 1, 1}, {2, 2, 2}},
		},
		{
			// spec §10.3: the image starts at s = 3; rows add to h, columns to w; the text after
			// it resumes at the largest position so far + 1 = 3 + 2 + 1.
			name:  "one image of 2×3 merged tokens",
			ids:   []int32{1, 2, 3, P, P, P, P, P, P, 4, 5},
			grids: []mergedGrid{{t: 1, h: 2, w: 3}},
			want: [][3]int{{0, 0, 0}, {1, 1, 1}, {2, 2, 2},
				{3, 3, 3}, {3, 3, 4}, {3, 3, 5}, {3, 4, 3}, {3, 4, 4}, {3, 4, 5},
				{6, 6, 6}, {7, 7, 7}},
			runs: []imageRun{{start: 3, count: 6}},
		},
		{
			name:  "two images, the second taller than wide",
			ids:   []int32{1, P, P, 2, P, P},
			grids: []mergedGrid{{t: 1, h: 1, w: 2}, {t: 1, h: 2, w: 1}},
			want: [][3]int{{0, 0, 0}, {1, 1, 1}, {1, 1, 2}, {3, 3, 3},
				{4, 4, 4}, {4, 5, 4}},
			runs: []imageRun{{start: 1, count: 2}, {start: 4, count: 2}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pos, runs, err := mropePositions(tc.ids, P, tc.grids)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pos, tc.want) {
				t.Errorf("positions %v, want %v", pos, tc.want)
			}
			if len(tc.runs) > 0 && !reflect.DeepEqual(runs, tc.runs) {
				t.Errorf("image runs %v, want %v", runs, tc.runs)
			}
		})
	}
}

func TestMRoPEPositionsRejectsMismatchedImages(t *testing.T) {
	const P = 9
	bad := []struct {
		name  string
		ids   []int32
		grids []mergedGrid
	}{
		{"fewer image tokens than the grid needs", []int32{1, P, P, 2}, []mergedGrid{{1, 1, 3}}},
		{"an image with no tokens", []int32{1, P, 2}, []mergedGrid{{1, 1, 1}, {1, 1, 1}}},
		{"image tokens without an image", []int32{1, P, 2, P}, []mergedGrid{{1, 1, 1}}},
		{"image tokens and no images", []int32{1, P}, nil},
	}
	for _, tc := range bad {
		if _, _, err := mropePositions(tc.ids, P, tc.grids); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestMRoPETablesInterleave checks the slot → axis rule of spec §10.3 with positions that differ
// per axis: slot j must turn by (position on its axis) · θ^(−2j/headDim).
func TestMRoPETablesInterleave(t *testing.T) {
	const headDim, theta = 128, 5e6
	section := [3]int{24, 20, 20}
	pos := [][3]int{{7, 11, 13}}
	cos, sin := mropeTables(pos, headDim, theta, section)
	counts := [3]int{}
	for j := range headDim / 2 {
		axis := 0
		if j < 60 && j%3 == 1 {
			axis = 1
		} else if j < 60 && j%3 == 2 {
			axis = 2
		}
		counts[axis]++
		angle := float64(pos[0][axis]) * math.Pow(theta, -float64(2*j)/headDim)
		if math.Abs(float64(cos[j])-math.Cos(angle)) > 1e-5 || math.Abs(float64(sin[j])-math.Sin(angle)) > 1e-5 {
			t.Errorf("slot %d: (cos, sin) = (%v, %v), want axis %d's (%v, %v)", j, cos[j], sin[j], axis, math.Cos(angle), math.Sin(angle))
		}
	}
	if counts != section {
		t.Errorf("slots per axis %v, want the mrope section %v", counts, section)
	}
}

func TestMergeWindowOrder(t *testing.T) {
	got := mergeWindowOrder(1, 2, 4, 2)
	want := [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merge-window order %v, want %v", got, want)
	}
}

func TestParseTextConfigReadsBothRopeLayouts(t *testing.T) {
	base := `"hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32, "intermediate_size": 96, "vocab_size": 10`
	for _, js := range []string{
		`{` + base + `, "rope_parameters": {"rope_theta": 1000.0, "mrope_section": [6, 5, 5]}}`,
		`{` + base + `, "rope_theta": 1000.0, "rope_scaling": {"mrope_section": [6, 5, 5], "mrope_interleaved": true}}`,
	} {
		c, err := ParseTextConfig([]byte(js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if c.RopeTheta != 1000 || c.MRopeSection != [3]int{6, 5, 5} || c.HeadDim != 32 || c.KVHeads != 1 {
			t.Errorf("%s: parsed %+v", js, c)
		}
	}
	if _, err := ParseTextConfig([]byte(`{` + base + `, "rope_parameters": {"mrope_section": [24, 20, 20]}}`)); err == nil {
		t.Error("an mrope section that does not fill head_dim/2 was accepted")
	}
}

func TestDropPrefixRows(t *testing.T) {
	h := []float32{1, 2, 3, 4, 5, 6}
	got, err := DropPrefixRows(h, 2, 1)
	if err != nil || !reflect.DeepEqual(got, []float32{3, 4, 5, 6}) {
		t.Errorf("dropping 1 row of 2: %v, %v", got, err)
	}
	if _, err := DropPrefixRows(h, 2, 4); err == nil {
		t.Error("dropping more rows than there are was accepted")
	}
	if _, err := DropPrefixRows(h, 4, 0); err == nil {
		t.Error("a width that does not divide the values was accepted")
	}
}

// TestGELUErfMatchesTheDefinition: the op set's exact GELU, which the vision mergers use.
func TestGELUErfMatchesTheDefinition(t *testing.T) {
	b := cpu.New()
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 1000)
	for i := range v {
		v[i] = float32(r.NormFloat64() * 3)
	}
	x, err := b.Upload(v, 10, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.GELUErf(x, x); err != nil {
		t.Fatal(err)
	}
	out, err := b.Download(x)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range v {
		want := 0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2))
		if math.Abs(float64(out[i])-want) > 1e-6*(1+math.Abs(want)) {
			t.Fatalf("GELU(%v) = %v, want %v", x, out[i], want)
		}
	}
}

// textOnlySource hides the vision tower, like a model file converted with --no-vision.
type textOnlySource struct{ *tinysnapshot.Source }

func (s textOnlySource) Tensor(name string) (*quant.Tensor, error) {
	if strings.HasPrefix(name, "vis.") {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	return s.Source.Tensor(name)
}

func TestEncodeWithoutVisionTowerRefusesImages(t *testing.T) {
	enc, err := NewEncoder(cpu.New(), textOnlySource{openHFTextEncoder(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := enc.VisionConfig(); ok {
		t.Fatal("a source without vis.* reports a vision tower")
	}
	img := VisionInput{Pixels: make([]float32, 4*1536), Grid: [3]int{1, 2, 2}}
	_, err = enc.Encode(context.Background(), []int32{1, defaultImageTokenID, 2}, []VisionInput{img})
	if err == nil || !strings.Contains(err.Error(), "vision tower") {
		t.Errorf("images without a vision tower: error %v, want one that names the missing vision tower", err)
	}
	if _, err := enc.Encode(context.Background(), []int32{1, 2, 3}, nil); err != nil {
		t.Errorf("text only without a vision tower: %v", err)
	}
}

func TestEncodeStopsWhenCancelled(t *testing.T) {
	enc := newTinyEncoder(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := enc.Encode(ctx, []int32{1, 2, 3}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v, want context.Canceled", err)
	}
}
