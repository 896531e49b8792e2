package cli

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"easel/app/grid"
	"easel/app/imagefile"
	"easel/engine/pipeline"
	"easel/engine/pipeline/pipelinetest"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// watchPrefills counts the denoiser's prefills (and lets a test act before a step) for the
// commands run until the returned function restores the pipeline options.
func watchPrefills(t *testing.T) *pipelinetest.Watch {
	watch := &pipelinetest.Watch{}
	adjustPipeline = func(o pipeline.Options) pipeline.Options { return pipelinetest.WatchDenoiser(o, watch) }
	t.Cleanup(func() { adjustPipeline = func(o pipeline.Options) pipeline.Options { return o } })
	return watch
}

// decodePNG reads a PNG's pixels as NRGBA.
func decodePNG(t *testing.T, path string) *image.NRGBA {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	out := image.NewNRGBA(b)
	copy(out.Pix, nrgbaBytes(img))
	return out
}

// checkGridSeedSteps: a 2×2 grid over seed and steps writes 4 cells in row-major order, each the
// single run of its settings bit for bit, prefilling once; the events name each cell's values;
// the grid image has each cell at its slot, labels in its band, and its axes in its metadata.
func checkGridSeedSteps(t *testing.T, backend string) {
	model := tinyCMF(t)
	dir := t.TempDir()
	common := []string{"generate", "--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--backend", backend}
	watch := watchPrefills(t)
	code, stdout, stderr := run(append(common, "--grid-x", "seed=1-2", "--grid-y", "steps=2,3", "--out", filepath.Join(dir, "g.png"), "--json")...)
	if code != ExitOK {
		t.Fatalf("grid: exit %d: %s", code, stderr)
	}
	if n := watch.Prefills(); n != 1 {
		t.Errorf("%s: the 2×2 grid prefilled %d times, want 1", backend, n)
	}
	want := []map[string]string{{"seed": "1", "steps": "2"}, {"seed": "2", "steps": "2"}, {"seed": "1", "steps": "3"}, {"seed": "2", "steps": "3"}}
	savedCells, stepCells := 0, map[string]bool{}
	for _, ev := range jsonLines(t, stdout) {
		cell, _ := ev["cell"].(map[string]any)
		switch {
		case ev["stage"] == "saved":
			i := int(ev["image"].(float64))
			if ev["path"] != filepath.Join(dir, "g-"+strconv.Itoa(i)+".png") || cell["seed"] != want[i-1]["seed"] || cell["steps"] != want[i-1]["steps"] {
				t.Errorf("saved event %v", ev)
			}
			savedCells++
		case ev["stage"] == "denoising" && ev["step"] != nil:
			stepCells[cell["seed"].(string)+"/"+cell["steps"].(string)] = true
		case ev["stage"] == "grid":
			if ev["path"] != filepath.Join(dir, "g-grid.png") {
				t.Errorf("grid event %v", ev)
			}
		}
	}
	if savedCells != 4 || len(stepCells) != 4 {
		t.Errorf("%d cells saved, step events of %d cells; want 4 and 4", savedCells, len(stepCells))
	}
	gr, err := grid.Parse([3]string{"seed=1-2", "steps=2,3"}, grid.Context{Prompt: "a lighthouse"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := gr.Layout(64, 64)
	if err != nil {
		t.Fatal(err)
	}
	sheet := decodePNG(t, filepath.Join(dir, "g-grid.png"))
	if sheet.Rect.Dx() != l.Width || sheet.Rect.Dy() != l.Height {
		t.Fatalf("grid image %v, want %d×%d", sheet.Rect, l.Width, l.Height)
	}
	for i, w := range want {
		cellPath := filepath.Join(dir, "g-"+strconv.Itoa(i+1)+".png")
		single := filepath.Join(dir, "single.png")
		if code, _, stderr := run(append(common, "--seed", w["seed"], "--steps", w["steps"], "--out", single)...); code != ExitOK {
			t.Fatalf("single run: exit %d: %s", code, stderr)
		}
		if !bytes.Equal(pixelsOf(t, cellPath), pixelsOf(t, single)) {
			t.Errorf("%s: cell %d (%v) differs from its single run", backend, i+1, w)
		}
		m, err := imagefile.ReadFile(cellPath)
		if err != nil || strconv.FormatUint(m.Settings.Seed, 10) != w["seed"] || strconv.Itoa(m.Settings.Steps) != w["steps"] || m.Settings.Batch == nil || m.Settings.Batch.Index != i || m.Settings.Batch.Count != 4 {
			t.Errorf("cell %d records %+v (%v)", i+1, m.Settings, err)
		}
		cell := decodePNG(t, cellPath)
		r := l.CellRect(i%2, i/2)
		if !bytes.Equal(sheet.SubImage(r).(*image.NRGBA).Pix[:4*64], cell.Pix[:4*64]) {
			t.Errorf("the grid image's cell %d at %v is not the cell's picture", i+1, r.Min)
		}
	}
	band := 0
	for y := range l.Top {
		for x := l.Left; x < l.Width; x++ {
			if c := sheet.NRGBAAt(x, y); c.R < 128 {
				band++
			}
		}
	}
	if band == 0 {
		t.Error("the grid image's label band is empty")
	}
	m, err := imagefile.ReadFile(filepath.Join(dir, "g-grid.png"))
	if err != nil || m.Settings.Grid == nil || len(m.Settings.Grid.Axes) != 2 || m.Settings.Grid.Axes[0].Name != "seed" ||
		!slices.Equal(m.Settings.Grid.Axes[1].Values, []string{"2", "3"}) || !slices.Equal(m.Settings.Grid.Cells, []string{"g-1.png", "g-2.png", "g-3.png", "g-4.png"}) {
		t.Errorf("the grid image records %+v (%v)", m.Settings, err)
	}
}

func TestGenerateGridSeedSteps(t *testing.T) { checkGridSeedSteps(t, "cpu") }

func TestEmuGenerateGridSeedSteps(t *testing.T) {
	testdevice.Device(t, emu.Options{})
	checkGridSeedSteps(t, "emulator")
}

// A prompt-sr axis of 3 prefills 3 times, each cell with its own prompt; a Z axis writes one
// grid image per value.
func TestGenerateGridPromptsAndZ(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	watch := watchPrefills(t)
	code, _, stderr := run("generate", "--model", model, "--prompt", "a red lighthouse", "--size", "64x64", "--steps", "2", "--backend", "cpu",
		"--seed", "5", "--grid-x", "prompt-sr=red,blue,green", "--grid-z", "steps=2,3", "--out", filepath.Join(dir, "p.png"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := watch.Prefills(); n != 3 {
		t.Errorf("3 prompts prefilled %d times, want 3", n)
	}
	for i, want := range []string{"a red lighthouse", "a blue lighthouse", "a green lighthouse", "a red lighthouse"} {
		m, err := imagefile.ReadFile(filepath.Join(dir, "p-"+strconv.Itoa(i+1)+".png"))
		if err != nil || m.Settings.Prompt != want {
			t.Errorf("cell %d: prompt %q (%v), want %q", i+1, m.Settings.Prompt, err, want)
		}
	}
	for z, steps := range []string{"2", "3"} {
		m, err := imagefile.ReadFile(filepath.Join(dir, "p-grid-"+strconv.Itoa(z+1)+".png"))
		if err != nil || m.Settings.Grid == nil || m.Settings.Grid.Z != "steps="+steps || len(m.Settings.Grid.Cells) != 3 {
			t.Errorf("grid %d: %+v (%v)", z+1, m, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "p-grid.png")); !os.IsNotExist(err) {
		t.Error("a grid with a Z axis wrote p-grid.png")
	}
}

// Every bad axis exits 2 with its sentence, before the model is opened (it does not exist here)
// and with nothing written.
func TestGenerateGridBadAxes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--grid-x", "sead=1-4"}, `grid axis X: unknown axis "sead"`},
		{[]string{"--grid-y", "steps=two"}, "grid axis Y steps: \"two\": write a whole number"},
		{[]string{"--grid-x", "seed=1-4", "--grid-z", "seed=5"}, "grid axis Z seed: seed is already axis X"},
		{[]string{"--grid-x", "strength=0.3,0.6"}, "grid axis X strength: a strength axis needs a start image: add --init IMAGE"},
		{[]string{"--grid-x", "seed=1-9", "--grid-y", "cfg=1-8"}, "grid axis Y cfg: 9 × 8 makes 72 cells; a grid has at most 64"},
		{[]string{"--grid-x", "lora:style=0,1"}, "grid axis X lora:style: no LoRA is applied: add it with --lora FILE"},
		{[]string{"--grid-x", "lora:other=0,1", "--lora", "/loras/style.safetensors"}, "grid axis X lora:other: no LoRA of that name is applied (applied: style)"},
		{[]string{"--grid-x", "prompt-sr=cat,dog"}, `grid axis X prompt-sr: the first value "cat" is not in the prompt`},
		{[]string{"--grid-x", "seed=1,2", "--count", "2"}, "--count with a grid"},
	} {
		code, stdout, stderr := run(append([]string{"generate", "--model", filepath.Join(dir, "missing.cmf"), "--prompt", "a lighthouse", "--out", filepath.Join(dir, "x.png")}, c.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", c.args, code, stderr, ExitUsage, c.want)
		}
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("bad axes wrote %v", files)
	}
}

// Cancelling part-way keeps the cells finished, and writes the grid with them (placeholders for
// the rest); the exit is 130.
func TestGenerateGridCancelKeepsFinishedCells(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	watch := watchPrefills(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := interruptContext
	interruptContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	defer func() { interruptContext = old }()
	watch.BeforeStep = func(n int) {
		if n == 5 { // the first step of the third cell (2 steps each, no CFG)
			cancel()
		}
	}
	code, _, stderr := run("generate", "--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--steps", "2", "--backend", "cpu",
		"--grid-x", "seed=1-4", "--out", filepath.Join(dir, "c.png"))
	if code != ExitCancelled || !strings.Contains(stderr, "2 of 4 cells were saved") {
		t.Fatalf("exit %d, stderr %q; want %d saying 2 of 4 cells were saved", code, stderr, ExitCancelled)
	}
	for i := 1; i <= 4; i++ {
		_, err := os.Stat(filepath.Join(dir, "c-"+strconv.Itoa(i)+".png"))
		if (i <= 2) != (err == nil) {
			t.Errorf("cell %d: %v (the first two finished, the last two not)", i, err)
		}
	}
	m, err := imagefile.ReadFile(filepath.Join(dir, "c-grid.png"))
	if err != nil || m.Settings.Grid == nil || !slices.Equal(m.Settings.Grid.Cells, []string{"c-1.png", "c-2.png", "", ""}) {
		t.Fatalf("the partial grid: %+v (%v)", m, err)
	}
	gr, _ := grid.Parse([3]string{"seed=1-4"}, grid.Context{})
	l, _ := gr.Layout(64, 64)
	sheet := decodePNG(t, filepath.Join(dir, "c-grid.png"))
	if r := l.CellRect(3, 0); sheet.NRGBAAt(r.Min.X+5, r.Min.Y+5) != grid.Placeholder {
		t.Error("the unfinished cell is not drawn as the placeholder")
	}
}

// A lora:NAME axis of two weights prefills twice (the weights change the denoiser's layers) and
// each cell is the single run with --lora FILE:WEIGHT; a hires axis shares the first pass and
// runs the second per cell.
func TestGenerateGridLoRAAndHires(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	loraPath, _ := writeRandomLoRA(t, dir)
	watch := watchPrefills(t)
	common := []string{"generate", "--model", model, "--prompt", "a lighthouse", "--size", "64x64", "--steps", "2", "--backend", "cpu", "--seed", "4"}
	code, _, stderr := run(append(common, "--lora", loraPath+":1", "--grid-x", "lora:style=0.5,1.5", "--grid-y", "hires=1,2", "--out", filepath.Join(dir, "l.png"))...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Two LoRA weights: two prefills; the hires cells' second passes prefill once each.
	if n := watch.Prefills(); n != 2+2 {
		t.Errorf("%d prefills, want 2 first-pass groups and 2 second passes", n)
	}
	for i, c := range []struct {
		weight string
		hires  bool
	}{{"0.5", false}, {"1.5", false}, {"0.5", true}, {"1.5", true}} {
		single := filepath.Join(dir, "single.png")
		args := append(common, "--lora", loraPath+":"+c.weight, "--out", single)
		if c.hires {
			args = append(args, "--hires", "2")
		}
		if code, _, stderr := run(args...); code != ExitOK {
			t.Fatalf("single: exit %d: %s", code, stderr)
		}
		cell := filepath.Join(dir, "l-"+strconv.Itoa(i+1)+".png")
		if !bytes.Equal(pixelsOf(t, cell), pixelsOf(t, single)) {
			t.Errorf("cell %d (LoRA %s, hires %v) differs from its single run", i+1, c.weight, c.hires)
		}
		m, err := imagefile.ReadFile(cell)
		if err != nil || len(m.Settings.LoRAs) != 1 || strconv.FormatFloat(m.Settings.LoRAs[0].Strength, 'g', -1, 64) != c.weight || (m.Settings.Hires != nil) != c.hires {
			t.Errorf("cell %d records %+v (%v)", i+1, m.Settings, err)
		}
	}
}

// A size axis prefills once per size; each cell is made at its size and the grid's slots take
// the largest.
func TestGenerateGridSize(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	watch := watchPrefills(t)
	code, _, stderr := run("generate", "--model", model, "--prompt", "a lighthouse", "--steps", "2", "--backend", "cpu", "--seed", "4",
		"--grid-x", "size=64x64,96x64", "--out", filepath.Join(dir, "s.png"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := watch.Prefills(); n != 2 {
		t.Errorf("%d prefills for two sizes, want 2", n)
	}
	for i, w := range []int{64, 96} {
		m, err := imagefile.ReadFile(filepath.Join(dir, "s-"+strconv.Itoa(i+1)+".png"))
		if err != nil || m.Width != w || m.Height != 64 {
			t.Errorf("cell %d is %d×%d (%v), want %d×64", i+1, m.Width, m.Height, err, w)
		}
	}
	gr, _ := grid.Parse([3]string{"size=64x64,96x64"}, grid.Context{})
	l, _ := gr.Layout(96, 64)
	if sheet := decodePNG(t, filepath.Join(dir, "s-grid.png")); sheet.Rect.Dx() != l.Width || sheet.Rect.Dy() != l.Height {
		t.Errorf("grid %v, want %d×%d", sheet.Rect, l.Width, l.Height)
	}
}
