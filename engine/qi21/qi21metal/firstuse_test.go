package qi21metal

import (
	"context"
	"errors"
	"testing"

	"easel/engine/convert"
	"easel/engine/ml/metal"
)

// TestEmuTunerAtFirstPrefill: with a tuner, a run's first prefill asks it for the variants of
// the run's geometry class (TuneGeometry of the layout's target and prefix rows) and runs its
// choice; a second prompt while a program is live, and the next run of the same class, do not
// ask again; a prefill of another class asks again; a cancelled tuning fails the prefill with the
// context's error and leaves no program. The tuner here is a stand-in (the real one, app/backend,
// is tested through app/jobs); declare must declare both classes on the model's own block.
func TestEmuTunerAtFirstPrefill(t *testing.T) {
	dev := emuDevice(t)
	m, f := tinyModel(t, convert.ProfileCortiq)
	dc := fewestConditions(t)
	lay := dc.layout
	cond := dc.latents[:lay.CondLatents()*m.Config.InChannels]
	var asked []string
	var tunerErr error
	choice := "swizzle"
	tuner := func(ctx context.Context, geometry string, declare func(*metal.Registry, int) error) (*metal.TuneReport, error) {
		asked = append(asked, geometry)
		reg := &metal.Registry{}
		if err := declare(reg, 1); err != nil {
			t.Errorf("declare: %v", err)
		}
		if got := reg.Classes(); len(got) != 2 {
			t.Errorf("declared classes %v", got)
		}
		if tunerErr != nil {
			return nil, tunerErr
		}
		return &metal.TuneReport{Choices: []metal.ClassChoice{{Class: ClassGemm, Variant: choice}}}, nil
	}
	k := metal.Knobs{Guards: metal.DefaultGuards}
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k, Tune: tuner})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want := TuneGeometry(m.Config, m.Blocks[0].ToQ.DType, lay.T, lay.PrefixLen)

	p1, err := d.Prefill(t.Context(), lay, dc.text, cond)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != want {
		t.Fatalf("first prefill asked the tuner for %q, want [%s]", asked, want)
	}
	if g, a := d.Variants(); g != "swizzle" || a != "base" || d.Geometry() != want {
		t.Errorf("runs %s / %s for %q, the tuner chose swizzle / base for %q", g, a, d.Geometry(), want)
	}
	p2, err := d.Prefill(t.Context(), lay, dc.text, cond) // the second prompt of a CFG run
	if err != nil {
		t.Fatal(err)
	}
	d.Release(p1)
	d.Release(p2)
	p3, err := d.Prefill(t.Context(), lay, dc.text, cond) // the next run, same class
	if err != nil {
		t.Fatal(err)
	}
	d.Release(p3)
	if len(asked) != 1 {
		t.Errorf("the tuner was asked %d times for one class", len(asked))
	}

	// Another class (the case with the most conditions, when its rows fall in another class).
	other := mostConditions(t)
	if g := TuneGeometry(m.Config, m.Blocks[0].ToQ.DType, other.layout.T, other.layout.PrefixLen); g != want {
		choice = "base"
		ocond := other.latents[:other.layout.CondLatents()*m.Config.InChannels]
		p, err := d.Prefill(t.Context(), other.layout, other.text, ocond)
		if err != nil {
			t.Fatal(err)
		}
		d.Release(p)
		if len(asked) != 2 || asked[1] != g {
			t.Errorf("another class asked the tuner for %q, want [%s %s]", asked, want, g)
		}
		if gm, _ := d.Variants(); gm != "base" {
			t.Errorf("runs gemm %s after the tuner chose the baseline for %s", gm, g)
		}
	} else {
		t.Logf("the dit cases share one geometry class (%s): the change of class is tested through app/jobs", g)
	}

	// A cancelled tuning (a new denoiser: no class tuned yet) fails the prefill and holds nothing.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tunerErr = ctx.Err()
	d2, err := New(dev, m, f.Bytes(), Options{Knobs: &k, Tune: tuner})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if _, err := d2.Prefill(ctx, lay, dc.text, cond); !errors.Is(err, context.Canceled) {
		t.Errorf("prefill with a cancelled tuning: %v", err)
	}
	if d2.Geometry() != "" || d2.ReleaseWeights() == false {
		t.Errorf("after a cancelled tuning: class %q, weights released %v", d2.Geometry(), d2.ReleaseWeights())
	}
}
