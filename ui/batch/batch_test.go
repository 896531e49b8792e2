package batch

import (
	"errors"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/engine/pipeline"

	"easel/ui/gallery"
	"easel/ui/model"
)

// fakeShell records what the region asks of the window's shell; its saves write real PNGs into
// a history store in a temporary folder.
type fakeShell struct {
	store     *history.Store
	saved     []*imagefile.Settings
	saveErr   error
	sheets    int
	opened    []string
	removed   []string
	submitted []compose.Draft
	kinds     []string
	hires     []*imagefile.HiresSettings
	asked     []string
	confirm   bool
}

func newRegion(t *testing.T) (*Region, *model.Window, *fakeShell) {
	t.Helper()
	a := test.NewApp()
	t.Cleanup(a.Quit)
	m := model.New(compose.NewDraft(settings.Settings{Width: 256, Height: 256, Steps: 8, CFG: 1}))
	f := &fakeShell{store: history.New(t.TempDir()), confirm: true}
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	r := New(m, Shell{
		Store: func() *history.Store { return f.store },
		Save: func(id jobs.ID, img *image.NRGBA, set *imagefile.Settings, done func(history.Entry, error)) {
			f.saved = append(f.saved, set)
			if f.saveErr != nil {
				done(history.Entry{}, f.saveErr)
				return
			}
			done(f.store.Save(img, set, now()))
		},
		Listed:    func(history.Entry) {},
		Open:      func(_ image.Image, path string) { f.opened = append(f.opened, path) },
		Removed:   func(path string) { f.removed = append(f.removed, path) },
		ShowSheet: func() { f.sheets++ },
		Submit: func(d compose.Draft, kind string, hs *imagefile.HiresSettings) bool {
			f.submitted, f.kinds, f.hires = append(f.submitted, d), append(f.kinds, kind), append(f.hires, hs)
			return true
		},
		Ask: func(what, text, confirm string, yes func()) {
			f.asked = append(f.asked, text)
			if f.confirm {
				yes()
			}
		},
		FirstStageOffer: func(int, int, float64) string { return "" },
		FirstStage: func(img *image.NRGBA, w, h int, _ float64, then func(*image.NRGBA, string)) {
			then(image.NewNRGBA(image.Rect(0, 0, w, h)), "Lanczos")
		},
		Memory:     func() (memplan.Geometry, int64) { return memplan.PublishedGeometry(), 64 << 30 },
		StepTime:   func() time.Duration { return 0 },
		RandomSeed: func() uint64 { return 1000 },
		Now:        now,
	})
	return r, m, f
}

// finished is image i of job j, done.
func finished(j jobs.Job, i int) pipeline.Event {
	seed, _ := j.Request.ImageSeeds(i)
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	return pipeline.Event{Images: j.Request.Batch(), Image: i,
		Finished: &pipeline.Result{Index: i, Image: img, Width: 64, Height: 64, Seed: seed, Steps: 8}}
}

// TestBatchFillsTheSheetAndSavesEachImage: a batch of 3 of the artist's opens the sheet in the
// centre with one waiting cell per seed; each finished image is saved with the batch's identity
// and its place, and its cell gets the file; a failure marks the rest stopped. An API job's batch
// is saved to the history and never takes the sheet.
func TestBatchFillsTheSheetAndSavesEachImage(t *testing.T) {
	r, m, f := newRegion(t)
	d := m.Draft()
	d.Prompt, d.Count = "three herons", 3
	j := jobs.Job{ID: 4, Request: pipeline.Request{Prompt: d.Prompt, Seed: 20, Count: 3}}
	m.Submitted(j.ID, model.JobRecord{Draft: d})
	r.Event(j, pipeline.Event{Images: 3, Image: 0}, nil)
	if r.Job() != 4 || f.sheets != 1 || len(r.Sheet.Cells()) != 3 || r.Sheet.Cell(2).Seed != 22 || r.Draft().Prompt != "three herons" {
		t.Fatalf("the sheet: job %d, shown %d times, %d cells", r.Job(), f.sheets, len(r.Sheet.Cells()))
	}
	r.Event(j, finished(j, 0), nil)
	r.Event(j, finished(j, 1), nil)
	for i, set := range f.saved {
		if set.Batch == nil || set.Batch.Index != i || set.Batch.Count != 3 || set.Batch.ID == "" || set.Prompt != "three herons" {
			t.Errorf("image %d saved with %+v", i+1, set.Batch)
		}
		if c := r.Sheet.Cell(i); c.State != gallery.CellDone || c.Path == "" {
			t.Errorf("image %d's cell: %v, file %q", i+1, c.State, c.Path)
		}
	}
	r.Stopped(j)
	if r.Sheet.Cell(2).State != gallery.CellFailed || r.Sheet.Done() != 2 {
		t.Errorf("after the failure the third cell is %v", r.Sheet.Cell(2).State)
	}

	// An API job (Share this Mac): its images go to the history with a batch identity of their own.
	api := jobs.Job{ID: 5, Origin: "127.0.0.1", Owner: picture{}, Request: pipeline.Request{Seed: 1, Count: 2}}
	r.Event(api, finished(api, 0), nil)
	if r.Job() != 4 || f.sheets != 1 || len(f.saved) != 3 || f.saved[2].Batch == nil || f.saved[2].Batch.ID == f.saved[0].Batch.ID {
		t.Errorf("the API job: sheet job %d, %d saves, batch %+v", r.Job(), len(f.saved), f.saved[2].Batch)
	}
	r.Ended(api)
	if len(r.apiBatches) != 0 {
		t.Error("the API job's batch identity outlived it")
	}
}

// picture is an API job's owner: its picture as the job's answer carries it.
type picture struct{}

func (picture) Picture(res *pipeline.Result) (*image.NRGBA, *imagefile.Settings, error) {
	return res.Image, &imagefile.Settings{Prompt: "from the API", Width: res.Width, Height: res.Height}, nil
}

// TestCellActions: Open shows a cell; Discard removes its file and Keep saves it again; Vary
// submits variations around its seed; Upscale ×2 offers first, then submits a pass at twice the
// size from the first stage with its Hires record; declined, nothing runs.
func TestCellActions(t *testing.T) {
	r, m, f := newRegion(t)
	d := m.Draft()
	d.Prompt, d.Count = "two owls", 2
	j := jobs.Job{ID: 1, Request: pipeline.Request{Prompt: d.Prompt, Seed: 7, Count: 2}}
	m.Submitted(j.ID, model.JobRecord{Draft: d})
	r.Event(j, finished(j, 0), nil)
	r.Event(j, finished(j, 1), nil)
	c := r.Sheet.Cell(1)
	r.Sheet.SelectCell(c)
	if len(f.opened) != 1 || f.opened[0] != c.Path {
		t.Errorf("opened %q, want %q", f.opened, c.Path)
	}
	path := c.Path
	test.Tap(r.Sheet.Button("Discard"))
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) || c.State != gallery.CellDiscarded || len(f.removed) != 1 {
		t.Fatalf("Discard: %v, cell %v, removed %q", err, c.State, f.removed)
	}
	test.Tap(r.Sheet.Button("Keep"))
	if c.State != gallery.CellDone || c.Path == "" || filepath.Dir(c.Path) != f.store.Folder {
		t.Fatalf("Keep: cell %v at %q", c.State, c.Path)
	}
	if _, err := os.Stat(c.Path); err != nil {
		t.Fatalf("the kept image: %v", err)
	}

	test.Tap(r.Sheet.Button("Vary"))
	if len(f.submitted) != 1 || f.kinds[0] != VaryKind || f.submitted[0].Seed != 8 || f.submitted[0].Count != 4 ||
		f.submitted[0].VariationSeed != 1000 || f.submitted[0].VariationStrength != 0.2 || f.submitted[0].Prompt != "two owls" {
		t.Fatalf("Vary submitted %+v as %q", f.submitted, f.kinds)
	}

	f.confirm = false
	test.Tap(r.Sheet.Button("Upscale ×2"))
	if len(f.asked) != 1 || !strings.Contains(f.asked[0], "128×128") || len(f.submitted) != 1 {
		t.Fatalf("Upscale ×2 declined: asked %q, %d submitted", f.asked, len(f.submitted))
	}
	f.confirm = true
	test.Tap(r.Sheet.Button("Upscale ×2"))
	up := f.submitted[len(f.submitted)-1]
	if len(f.submitted) != 2 || f.kinds[1] != "Upscale ×2" || up.Start == nil || up.Start.Image.Rect.Dx() != 128 ||
		up.CustomW != 128 || up.Seed != 8 || f.hires[1] == nil || f.hires[1].Factor != 2 || r.Sheet.Plan() == "" {
		t.Fatalf("Upscale ×2 submitted %+v (%q), hires %+v, plan %q", up, f.kinds, f.hires, r.Sheet.Plan())
	}
}
