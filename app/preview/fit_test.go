package preview

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/vae"
	"easel/internal/golden"
)

var (
	update = flag.Bool("update", false, "write the fitted projection to assets/preview")
	model  = flag.String("preview.model", "", "fit on this .cmf model's VAE (the published model) instead of the golden tiny snapshot's; writes "+RealFile)
)

// The fitting data: random normalized latents (what early steps look like) and, for the tiny
// model, the reference pipeline's own per-step latents. Held out of the fit: other random grids
// and every step of the two-image edit case.
const (
	randomGrids, heldOutGrids = 12, 3
	gridSide                  = 8
	ridge                     = 1e-4
)

// referenceCases splits the golden directory's pipeline cases by what they hold, not by name: the
// fit uses the cases without condition images, the cases with them are held out (in the public
// set: pipeline_t2i and pipeline_t2i_cfg, and pipeline_ti2i_two).
func referenceCases(t *testing.T) (fit, heldOut []string) {
	t.Helper()
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := c.Pipeline()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if spec.Conditions() == 0 {
			fit = append(fit, c.Name)
		} else {
			heldOut = append(heldOut, c.Name)
		}
	}
	return fit, heldOut
}

// randomLatents is one gridSide² grid of N(0, σ²) tokens, σ cycling through 0.5, 1 and 1.5.
func randomLatents(seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	sigma := []float64{0.5, 1, 1.5}[seed%3]
	out := make([]float32, gridSide*gridSide*Channels)
	for i := range out {
		out[i] = float32(r.NormFloat64() * sigma)
	}
	return out
}

// grid is one set of packed latents to decode.
type grid struct {
	name   string
	tokens []float32
	h, w   int
}

// referenceGrids are every step's latents of a golden pipeline case.
func referenceGrids(t *testing.T, name string) []grid {
	t.Helper()
	path, err := golden.Path(name + ".safetensors")
	if err != nil {
		t.Fatal(err)
	}
	c, err := golden.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	steps, shape, err := c.Float32s("steps_latents")
	if err != nil {
		t.Fatal(err)
	}
	img := c.Shape("image_np") // [H, W, 4]
	h, w := img[0]/16, img[1]/16
	if shape[2] != h*w || shape[3] != Channels {
		t.Fatalf("%s: steps_latents %v does not match a %d×%d grid", name, shape, h, w)
	}
	var out []grid
	n := h * w * Channels
	for s := range shape[0] {
		out = append(out, grid{fmt.Sprintf("%s step %d", name, s), steps[s*n : (s+1)*n], h, w})
	}
	return out
}

// decoder is the VAE the fit runs on, and the model name stored with the projection.
func decoder(t *testing.T) (Decoder, string, string) {
	t.Helper()
	if *model != "" {
		f, err := cmf.Open(*model)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		m, err := vae.Load(cpu.New(), f)
		if err != nil {
			t.Fatal(err)
		}
		return m, "Qwen-Image-2.1 (" + filepath.Base(*model) + ")", RealFile
	}
	m, err := vae.Load(cpu.New(), openTinyVAE(t))
	if err != nil {
		t.Fatal(err)
	}
	return m, "tiny-qwen-image-2.1 (golden snapshot; random VAE weights)", TinyFile
}

// TestFitProjection fits the projection and checks it against the stored one; with -update it
// stores it instead. See assets/preview/README.md.
func TestFitProjection(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes about twenty latent grids")
	}
	ctx := context.Background()
	dec, modelName, file := decoder(t)
	// The stored tiny projection is fitted on the vendored cases; another folder (EASEL_GOLDEN_DIR)
	// refits and checks the solver, but cannot be compared with it or written over it.
	vendored, err := golden.IsVendored()
	if err != nil {
		t.Fatal(err)
	}
	compare := *model != "" || vendored
	if *update && !compare {
		t.Fatalf("-update writes %s from the vendored cases in testdata/golden: unset %s", file, golden.EnvDir)
	}
	var fitCases, heldOutCases []string
	if *model == "" {
		fitCases, heldOutCases = referenceCases(t)
	}

	var fitGrids, heldGrids []grid
	for i := range uint64(randomGrids) {
		fitGrids = append(fitGrids, grid{fmt.Sprintf("random %d", i), randomLatents(i), gridSide, gridSide})
	}
	for i := range uint64(heldOutGrids) {
		heldGrids = append(heldGrids, grid{fmt.Sprintf("held-out random %d", i), randomLatents(1000 + i), gridSide, gridSide})
	}
	if *model == "" {
		for _, c := range fitCases {
			fitGrids = append(fitGrids, referenceGrids(t, c)...)
		}
		for _, c := range heldOutCases {
			heldGrids = append(heldGrids, referenceGrids(t, c)...)
		}
	}
	collect := func(gs []grid) ([]Sample, []*vae.Image) {
		var all []Sample
		var imgs []*vae.Image
		for _, g := range gs {
			s, img, err := PatchSamples(ctx, dec, g.tokens, g.h, g.w)
			if err != nil {
				t.Fatalf("%s: %v", g.name, err)
			}
			all = append(all, s...)
			imgs = append(imgs, img)
		}
		return all, imgs
	}
	train, _ := collect(fitGrids)
	held, heldImgs := collect(heldGrids)

	p, err := Fit(train, ridge)
	if err != nil {
		t.Fatal(err)
	}
	p.Model = modelName
	p.Source = fmt.Sprintf("go test ./app/preview -run TestFitProjection -update%s: least squares (ridge %g) over %d random %d² grids (seeds 0–%d, σ 0.5/1/1.5) %s; held out: %d random grids and %v",
		map[bool]string{true: " -preview.model=<file.cmf>", false: ""}[*model != ""], ridge, randomGrids, gridSide, randomGrids-1,
		map[bool]string{true: "", false: fmt.Sprintf("plus every step of %v", fitCases)}[*model != ""], heldOutGrids, map[bool]any{true: "nothing else", false: heldOutCases}[*model != ""])
	p.Error.TrainRMS, _ = p.PatchError(train)
	p.Error.HeldOutRMS, p.Error.HeldOutMax = p.PatchError(held)
	p.Error.HeldOutNotes = "8-bit levels, per channel, patch means (16×16) against the real decode"
	var pix float64
	for i, g := range heldGrids {
		e := p.PixelError(g.tokens, g.h, g.w, heldImgs[i])
		pix += e * e
	}
	p.Error.PixelRMS = math.Sqrt(pix / float64(len(heldGrids)))
	t.Logf("%s: %d training samples; RMS error train %.2f, held out %.2f (max %.1f), per pixel %.2f levels",
		modelName, len(train), p.Error.TrainRMS, p.Error.HeldOutRMS, p.Error.HeldOutMax, p.Error.PixelRMS)

	// Least squares can only beat the best constant colour on its own data; on held-out data the
	// tiny model's random VAE barely depends linearly on its latents (see the README), so the
	// held-out comparison is logged, not asserted.
	var constant Projection
	for k := range 4 {
		var s float64
		for _, x := range train {
			s += x.RGBA[k]
		}
		constant.B[k] = s / float64(len(train))
	}
	baseTrain, _ := constant.PatchError(train)
	baseHeld, _ := constant.PatchError(held)
	t.Logf("best constant colour: RMS train %.2f, held out %.2f levels", baseTrain, baseHeld)
	if p.Error.TrainRMS > baseTrain {
		t.Errorf("training RMS %.2f levels is worse than a constant colour's %.2f: the solver is wrong", p.Error.TrainRMS, baseTrain)
	}

	path := filepath.Join(assetsDir(t), file)
	if *update {
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	if !compare {
		t.Logf("golden directory is not the vendored one: fitted on %v, held out %v; not compared with the stored %s", fitCases, heldOutCases, file)
		return
	}
	stored, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 4 {
		for c := range Channels {
			if d := math.Abs(stored.M[k][c] - p.M[k][c]); d > 1e-4 {
				t.Fatalf("stored %s differs from a fresh fit (row %d, channel %d: %g vs %g): run with -update", file, k, c, stored.M[k][c], p.M[k][c])
			}
		}
	}
}

// assetsDir is assets/preview in the module.
func assetsDir(t *testing.T) string {
	root, err := golden.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "assets", "preview")
}
