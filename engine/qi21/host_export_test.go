package qi21

import (
	"slices"
	"testing"

	"easel/internal/golden"
)

// TestHostExports checks the exported host work on a dit case with a condition image (the one
// with the fewest; dit_ti2i_one in the public set): PrefixRows places txt_in rows
// that do not depend on the condition latents and img_in rows that are linear in them (doubling
// the latents doubles those rows exactly: img_in has no bias), Modulation gives 4D + D values that
// change with σ, and the embedding at t = 0 is cos 0 then sin 0.
func TestHostExports(t *testing.T) {
	paths, err := golden.Cases("dit")
	if err != nil {
		t.Fatal(err)
	}
	var dc *ditCase
	for _, path := range paths {
		c := loadDiTCase(t, path)
		n := len(c.layout.ImageShapes) - 1
		if n > 0 && (dc == nil || n < len(dc.layout.ImageShapes)-1) {
			dc = c
		}
	}
	if dc == nil {
		t.Skip("no dit case with a condition image in the golden directory: the test needs text and image rows in the prefix")
	}
	t.Logf("case %s", dc.name)
	m := loadModel(t, 0)
	lay := dc.layout
	D, in := m.Config.Hidden(), m.Config.InChannels
	cond := dc.latents[:lay.CondLatents()*in]
	rows, err := m.PrefixRows(t.Context(), lay, dc.text, cond)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != lay.PrefixLen*D {
		t.Fatalf("%d prefix values, want %d rows of %d", len(rows), lay.PrefixLen, D)
	}
	doubled := slices.Clone(cond)
	for i := range doubled {
		doubled[i] *= 2
	}
	rows2, err := m.PrefixRows(t.Context(), lay, dc.text, doubled)
	if err != nil {
		t.Fatal(err)
	}
	textRows, imageRows := 0, 0
	for _, run := range lay.Runs {
		for r := run.Row; r < min(run.Row+run.Len, lay.PrefixLen); r++ {
			a, b := rows[r*D:(r+1)*D], rows2[r*D:(r+1)*D]
			for j := range a {
				want := a[j]
				if !run.Text {
					want *= 2
				}
				if b[j] != want {
					t.Fatalf("row %d (text %v), channel %d: %v with doubled latents, want %v", r, run.Text, j, b[j], want)
				}
			}
			if run.Text {
				textRows++
			} else {
				imageRows++
			}
		}
	}
	if textRows == 0 || imageRows == 0 {
		t.Fatalf("the case's prefix has %d text and %d image rows; the test needs both", textRows, imageRows)
	}
	if _, err := m.PrefixRows(t.Context(), lay, nil, cond); err == nil {
		t.Error("PrefixRows without prompt embeddings did not fail")
	}

	m0, f0, err := m.Modulation(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	m1, f1, err := m.Modulation(t.Context(), dc.sigmas[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(m0) != 4*D || len(f0) != D || len(m1) != 4*D || len(f1) != D {
		t.Fatalf("modulation sizes %d, %d; want %d and %d", len(m0), len(f0), 4*D, D)
	}
	if slices.Equal(m0, m1) || slices.Equal(f0, f1) {
		t.Error("the modulation at t = 0 and at σ are the same")
	}
	e := TimestepEmbedding(0)
	for j, v := range e {
		want := float32(1) // cos 0
		if j >= len(e)/2 {
			want = 0 // sin 0
		}
		if v != want {
			t.Fatalf("embedding at t = 0, channel %d: %v, want %v (cos 0 then sin 0)", j, v, want)
		}
	}
	cos, sin, err := m.RopeTables(lay.Positions[:2])
	if err != nil || len(cos) != 2*m.Config.HeadDim/2 || len(sin) != len(cos) {
		t.Errorf("RopeTables of two rows: %d, %d values, %v", len(cos), len(sin), err)
	}
}
