package upscalers_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/hires"
	"easel/app/settings"
	"easel/app/upscalers"
	"easel/engine/upscale"
	"easel/internal/golden"
)

func cases(t *testing.T) []*golden.UpscaleCase {
	t.Helper()
	cs, err := golden.UpscaleCases()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// smallest is the case with the smallest output and its first weight file.
func smallest(t *testing.T) (*golden.UpscaleCase, string) {
	var best *golden.UpscaleCase
	for _, c := range cases(t) {
		if best == nil || len(c.OutU8) < len(best.OutU8) {
			best = c
		}
	}
	return best, best.Files[0]
}

// TestLibrary: Add copies an upscaler in (twice is once; a different file of the same name gets a
// new name), refuses a file that is not one, List and Find see what was added by name.
func TestLibrary(t *testing.T) {
	lib := upscalers.New(filepath.Join(t.TempDir(), "Upscalers"))
	if es, err := lib.List(); err != nil || len(es) != 0 {
		t.Fatalf("a missing folder lists %v, %v; want nothing", es, err)
	}
	var added []string
	for _, c := range cases(t) {
		e, err := lib.Add(c.Files[0])
		if err != nil {
			t.Fatal(err)
		}
		if e.Config == nil || e.Scale() != c.Int("scale") || string(e.Config.Arch) != c.Str("arch") {
			t.Fatalf("%s: added as %+v, the case says %v", c.Files[0], e, c.Meta)
		}
		again, err := lib.Add(c.Files[0])
		if err != nil || again.Path != e.Path {
			t.Fatalf("adding the same file again gives %+v, %v; want the first copy %s", again, err, e.Path)
		}
		added = append(added, e.Name)
	}
	if e, ok := lib.Chosen(settings.Settings{Upscaler: added[0]}); !ok || e.Name != added[0] {
		t.Fatalf("the chosen upscaler %q is not found (%+v)", added[0], e)
	}
	if _, ok := lib.Chosen(settings.Settings{}); ok {
		t.Fatal("no upscaler chosen found one")
	}
	es, err := lib.Usable()
	if err != nil || len(es) != len(added) {
		t.Fatalf("lists %d usable upscalers (%v), want %d", len(es), err, len(added))
	}
	for _, n := range added {
		if _, ok := lib.Find(strings.ToUpper(n)); !ok {
			t.Fatalf("Find(%q) found nothing", n)
		}
	}
	// A different file under a name already taken.
	_, file := smallest(t)
	other := cases(t)[0].Files[len(cases(t)[0].Files)-1]
	clash := filepath.Join(t.TempDir(), filepath.Base(file))
	copyTo(t, other, clash)
	if strings.EqualFold(filepath.Ext(other), filepath.Ext(file)) {
		e, err := lib.Add(clash)
		if err == nil && e.Path == filepath.Join(lib.Dir, filepath.Base(file)) {
			t.Fatalf("a different file overwrote %s", e.Path)
		}
	}
	// Not an upscaler: refused with the detection's sentence, nothing copied.
	junk := filepath.Join(t.TempDir(), "notes.pth")
	os.WriteFile(junk, []byte("not a model"), 0o644)
	before, _ := os.ReadDir(lib.Dir)
	if _, err := lib.Add(junk); err == nil || !strings.Contains(err.Error(), "not a PyTorch checkpoint") {
		t.Fatalf("adding a text file: %v", err)
	}
	after, _ := os.ReadDir(lib.Dir)
	if len(after) != len(before) {
		t.Fatal("a refused file left something in the folder")
	}
	if _, err := upscalers.Inspect(filepath.Join(t.TempDir(), "x.ckpt")); err == nil {
		t.Fatal("Inspect accepted a .ckpt")
	}
}

func copyTo(t *testing.T, src, dst string) {
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunnerSizes: the network's own scale lands exactly (the reference picture); another scale
// or an exact size is reached with Lanczos after the network; progress counts every tile.
func TestRunnerSizes(t *testing.T) {
	c, file := smallest(t)
	r, err := upscalers.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := r.Config().Scale
	w, h := c.Input.Rect.Dx(), c.Input.Rect.Dy()
	var ticks []upscalers.Progress
	out, rep, err := r.Upscale(context.Background(), c.Input, upscalers.Request{Tile: 8, Progress: func(p upscalers.Progress) { ticks = append(ticks, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if out.Rect.Dx() != s*w || rep.Resized || rep.Passes != 1 || rep.Device != "CPU" {
		t.Fatalf("%v, %+v; want the network's %d× in one pass", out.Rect, rep, s)
	}
	if worst, _, err := c.U8Diff(out); err != nil || worst > 1 {
		t.Fatalf("differs from the reference by %d levels (%v)", worst, err)
	}
	want := upscale.Tiling{Tile: 8, Pad: upscale.DefaultPad}.Tiles(h, w)
	if c.Channels == 4 {
		want *= 2
	}
	if len(ticks) != want || ticks[len(ticks)-1].Done != want || ticks[0].Total != want {
		t.Fatalf("progress %v, want %d tiles", ticks, want)
	}
	for _, req := range []upscalers.Request{{Scale: float64(s) / 2}, {Width: 3*w + 1, Height: 2 * h}, {Scale: float64(s) * 1.5}} {
		out, rep, err := r.Upscale(context.Background(), c.Input, req)
		if err != nil {
			t.Fatal(err)
		}
		ww, wh := req.Width, req.Height
		if ww == 0 {
			ww, wh = int(float64(w)*req.Scale+0.5), int(float64(h)*req.Scale+0.5)
		}
		if out.Rect.Dx() != ww || out.Rect.Dy() != wh || !rep.Resized {
			t.Fatalf("%+v: %v, %+v; want %d×%d resized", req, out.Rect, rep, ww, wh)
		}
		if req.Scale > float64(s) && rep.Passes != 2 {
			t.Fatalf("%+v: %d passes, want 2", req, rep.Passes)
		}
	}
	if _, _, err := r.Upscale(context.Background(), c.Input, upscalers.Request{Width: 10}); err == nil {
		t.Fatal("one side only was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := r.Upscale(ctx, c.Input, upscalers.Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled upscale gives %v", err)
	}
	// The hi-res pass's first stage: the learned upscaler to the pass's size, or Lanczos.
	first, _, err := hires.FirstStage(context.Background(), c.Input, 2*w, 2*h, r, nil)
	if err != nil || first.Rect.Dx() != 2*w || first.Rect.Dy() != 2*h {
		t.Fatalf("first stage: %v, %v", first.Rect, err)
	}
	lz, _, _ := hires.FirstStage(context.Background(), c.Input, 2*w, 2*h, nil, nil)
	if string(lz.Pix) == string(first.Pix) {
		t.Fatal("the learned first stage gives Lanczos's picture")
	}
}
