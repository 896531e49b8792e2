package seed

import (
	"fmt"
	"math"
	"testing"

	"easel/engine/latents"
	"easel/internal/golden"
)

// randnCase is one entry of the "cases" list in randn_cases.safetensors' metadata.
type randnCase struct {
	key   string
	seed  uint64
	shape []int
}

func loadRandnCases(t *testing.T) (*golden.Case, []randnCase) {
	t.Helper()
	path, err := golden.Path("randn_cases.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	c, err := golden.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	list, ok := c.Meta["cases"].([]any)
	if !ok || len(list) == 0 {
		t.Fatalf("%s: metadata has no \"cases\" list", path)
	}
	var cases []randnCase
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			t.Fatalf("%s: case %d is not an object", path, i)
		}
		key, _ := m["key"].(string)
		seed, okSeed := m["seed"].(float64)
		dims, okShape := m["shape"].([]any)
		if key == "" || !okSeed || !okShape {
			t.Fatalf("%s: case %d lacks key, seed or shape: %v", path, i, m)
		}
		rc := randnCase{key: key, seed: uint64(seed)}
		for _, d := range dims {
			rc.shape = append(rc.shape, int(d.(float64)))
		}
		cases = append(cases, rc)
	}
	return c, cases
}

// TestGoldenRandn: every tensor torch drew for a seed and a (1, 1, 64, h, w) shape is reproduced
// bit for bit.
func TestGoldenRandn(t *testing.T) {
	ref, cases := loadRandnCases(t)
	for _, rc := range cases {
		t.Run(rc.key, func(t *testing.T) {
			want, shape, err := ref.Float32s(rc.key)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(shape) != fmt.Sprint(rc.shape) || len(shape) != 5 {
				t.Fatalf("tensor shape %v, metadata shape %v: want both (1, 1, 64, h, w)", shape, rc.shape)
			}
			if ns := NoiseShape(shape[2], shape[3], shape[4]); fmt.Sprint(ns[:]) != fmt.Sprint(shape) {
				t.Fatalf("NoiseShape(%d, %d, %d) = %v, reference drew %v", shape[2], shape[3], shape[4], ns, shape)
			}
			got, err := LatentNoise(rc.seed, shape[2], shape[3], shape[4])
			if err != nil {
				t.Fatal(err)
			}
			assertBitExact(t, got, want)
		})
	}
}

// TestGoldenPipelineNoise: in every pipeline case, the target rows of the first transformer
// input (the last h·w rows of dit0_hidden_states, after the condition latents) are the packed
// noise of the case's seed.
func TestGoldenPipelineNoise(t *testing.T) {
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no pipeline_* cases")
	}
	for _, path := range paths {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(c.Name, func(t *testing.T) {
			defer c.Close()
			seed, err := golden.Seed(c.Meta) // the manual_seed(N) the case's seed_note names
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			h, w := targetGrid(t, c.Meta)
			hidden, shape, err := c.Float32s("dit0_hidden_states")
			if err != nil {
				t.Fatal(err)
			}
			if len(shape) != 3 || shape[1] < h*w {
				t.Fatalf("dit0_hidden_states has shape %v, want [1, ≥%d, channels]", shape, h*w)
			}
			channels := shape[2] // the transformer's in_channels, the VAE's z_dim
			want := hidden[len(hidden)-h*w*channels:]
			noise, err := LatentNoise(seed, channels, h, w)
			if err != nil {
				t.Fatal(err)
			}
			got, err := latents.Pack(noise, channels, h, w)
			if err != nil {
				t.Fatal(err)
			}
			assertBitExact(t, got, want)
		})
	}
}

// targetGrid is the last entry of the case's img_shapes, (1, h, w): the target's latent grid.
func targetGrid(t *testing.T, meta map[string]any) (h, w int) {
	t.Helper()
	batches, ok := meta["img_shapes"].([]any)
	if !ok || len(batches) == 0 {
		t.Fatalf("metadata img_shapes missing: %v", meta["img_shapes"])
	}
	shapes := batches[0].([]any)
	last := shapes[len(shapes)-1].([]any)
	return int(last[1].(float64)), int(last[2].(float64))
}

func assertBitExact(t *testing.T, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, reference has %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if bad < 5 {
				t.Errorf("value %d = %.9g, reference %.9g", i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d values differ from the reference", bad, len(want))
	}
}
