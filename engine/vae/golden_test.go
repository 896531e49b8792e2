package vae

import (
	"context"
	"testing"

	"easel/internal/golden"
)

// parityTolerance is the end-to-end bound REFERENCE.md sets for a faithful float32 implementation.
const parityTolerance = 1e-4

// caseLatents reads a [1, C, 1, h, w] tensor of a case as a channel-first grid.
func caseLatents(t *testing.T, c *golden.Case, name string) *Latents {
	t.Helper()
	v, shape, err := c.Float32s(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(shape) != 5 || shape[0] != 1 || shape[2] != 1 {
		t.Fatalf("%s %s: shape %v, want [1, C, 1, h, w]", c.Name, name, shape)
	}
	return &Latents{C: shape[1], H: shape[3], W: shape[4], Data: v}
}

func caseImage(t *testing.T, c *golden.Case, name string) *Image {
	t.Helper()
	l := caseLatents(t, c, name)
	return &Image{C: l.C, H: l.H, W: l.W, Pix: l.Data}
}

func vaeCases(t *testing.T) []*golden.Case {
	t.Helper()
	paths, err := golden.Cases("vae")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no vae_* reference cases found")
	}
	var cases []*golden.Case
	for _, p := range paths {
		c, err := golden.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cases = append(cases, c)
	}
	return cases
}

func checkClose(t *testing.T, what string, got, want []float32) {
	t.Helper()
	rel := golden.RelErr(got, want)
	t.Logf("%s: relative error %.2e, max abs %.2e", what, rel, golden.MaxAbsErr(got, want))
	if !(rel <= parityTolerance) {
		t.Errorf("%s: relative error %.3e exceeds %.0e", what, rel, parityTolerance)
	}
}

func TestGoldenVAEDecode(t *testing.T) {
	m, _ := loadTiny(t)
	for _, c := range vaeCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			zn := caseLatents(t, c, "z_normalized")
			z, err := m.Denormalize(zn)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, "z = z_n·std + mean", z.Data, caseLatents(t, c, "z").Data)
			img, err := m.Decode(context.Background(), zn)
			if err != nil {
				t.Fatal(err)
			}
			want := caseImage(t, c, "decoded")
			if img.C != want.C || img.H != want.H || img.W != want.W {
				t.Fatalf("decoded %d×%d×%d, want %d×%d×%d", img.C, img.H, img.W, want.C, want.H, want.W)
			}
			checkClose(t, "decoded", img.Pix, want.Pix)
		})
	}
}

func TestGoldenVAEEncode(t *testing.T) {
	m, _ := loadTiny(t)
	for _, c := range vaeCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			mode, normalized, err := m.Encode(context.Background(), caseImage(t, c, "image"))
			if err != nil {
				t.Fatal(err)
			}
			wantMode := caseLatents(t, c, "encoded_mode")
			if mode.C != wantMode.C || mode.H != wantMode.H || mode.W != wantMode.W {
				t.Fatalf("mode %d×%d×%d, want %d×%d×%d", mode.C, mode.H, mode.W, wantMode.C, wantMode.H, wantMode.W)
			}
			checkClose(t, "encoded mode", mode.Data, wantMode.Data)
			checkClose(t, "encoded normalized", normalized.Data, caseLatents(t, c, "encoded_normalized").Data)
		})
	}
}
