package keeping

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/settings"
	"easel/app/unfinished"
	"easel/engine/pipeline"
	"easel/internal/tinymodel"

	"easel/ui/model"
)

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

// fakeShell is the window around the region in these tests: what the region runs on the UI
// goroutine waits in do until the test pumps it, and what it asks of the shell is recorded.
type fakeShell struct {
	do        chan func()
	store     *unfinished.Store
	history   *history.Store
	folder    string // the history's
	listed    []history.Entry
	saved     map[jobs.ID]string
	jobSaved  []bool // fromStart of each window job's image saved
	submitted []submission
	showing   jobs.ID
}

// submission is a job the region queued (a resumed one).
type submission struct {
	draft   compose.Draft
	seed    uint64
	job     compose.Job
	resumed *unfinished.Job
}

// newRegion builds the region alone over a model, saving into a folder of the test's.
func newRegion(t *testing.T, store *unfinished.Store) (*Region, *model.Window, *fakeShell) {
	t.Helper()
	a := test.NewApp()
	t.Cleanup(a.Quit)
	w := a.NewWindow("keeping")
	w.Resize(fyne.NewSize(800, 600))
	folder := filepath.Join(t.TempDir(), "Images")
	f := &fakeShell{do: make(chan func(), 64), store: store, history: history.New(folder), folder: folder, saved: map[jobs.ID]string{}}
	m := model.New(compose.NewDraft(settings.Settings{}))
	r := New(m, Shell{
		Do:           func(g func()) { f.do <- g },
		Window:       w,
		Show:         func(d dialog.Dialog) { d.Show() },
		Unfinished:   func() *unfinished.Store { return f.store },
		History:      func() *history.Store { return f.history },
		OutputFolder: func() string { return f.folder },
		Now:          func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) },
		Where:        func() string { return "" },
		Here:         "this computer",
		Submit: func(d compose.Draft, seed uint64, job compose.Job, resumed *unfinished.Job) bool {
			f.submitted = append(f.submitted, submission{d, seed, job, resumed})
			return true
		},
		Listed:   func(e history.Entry) { f.listed = append(f.listed, e) },
		Showing:  func() (jobs.ID, string) { return f.showing, f.saved[f.showing] },
		Saved:    func(id jobs.ID, path string) { f.saved[id] = path },
		JobSaved: func(e history.Entry, fromStart bool) { f.jobSaved = append(f.jobSaved, fromStart) },
	})
	return r, m, f
}

// pump runs what the region handed the UI goroutine until until holds (bounded: a busy machine
// gets 60 s).
func (f *fakeShell) pump(t *testing.T, what string, until func() bool) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for !until() {
		select {
		case g := <-f.do:
			g()
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// unwritable is a folder that cannot be made, even by root: its path runs through a file.
func unwritable(t *testing.T) string {
	t.Helper()
	blocker := filepath.Join(t.TempDir(), "blocker")
	if err := os.WriteFile(blocker, []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(blocker, "Images")
}

func picture(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
		if i%4 == 3 {
			img.Pix[i] = 255 // opaque: the PNG keeps every colour as it is
		}
	}
	return img
}

// doneJob is job id finished with img, as the queue hands it to the window.
func doneJob(id jobs.ID, img *image.NRGBA) jobs.Job {
	return jobs.Job{ID: id, State: jobs.Done, Request: pipeline.Request{Seed: 5, Width: img.Rect.Dx(), Height: img.Rect.Dy()},
		Result: &pipeline.Result{Image: img, Width: img.Rect.Dx(), Height: img.Rect.Dy(), Seed: 5, StepsRun: 3}}
}

// A window job's finished image is written with its recipe in its PNG, listed, shown as the file
// on the canvas, and the job's record goes.
func TestSaveWritesTheJobsImageWithItsRecipe(t *testing.T) {
	r, m, f := newRegion(t, nil)
	d := m.Draft()
	d.Prompt, d.Seed = "a quiet harbour", 5
	m.Submitted(1, model.JobRecord{Draft: d})
	img := picture(32, 16)
	r.Save(doneJob(1, img))
	if _, ok := m.Job(1); ok {
		t.Error("the job's record is still kept after its save began")
	}
	f.pump(t, "the image listed", func() bool { return len(f.listed) == 1 })
	e := f.listed[0]
	if f.saved[1] != e.Path || len(f.jobSaved) != 1 || f.jobSaved[0] {
		t.Errorf("saved %v, job saved %v; want job 1 at %s, not from a start image", f.saved, f.jobSaved, e.Path)
	}
	set := readBack(t, e.Path, img)
	if set == nil || set.Prompt != "a quiet harbour" || set.Seed != 5 {
		t.Errorf("the PNG carries %+v, want the job's prompt and seed", set)
	}
}

// An image that cannot be written is held: the region says why, offers another folder, shows Save
// to… while the image is on the canvas, and once saved elsewhere lists it and lets it go.
func TestUnsavedImageIsHeldUntilSavedElsewhere(t *testing.T) {
	r, m, f := newRegion(t, nil)
	f.folder = unwritable(t)
	f.history = history.New(f.folder)
	m.Submitted(1, model.JobRecord{Draft: m.Draft()})
	img := picture(16, 16)
	r.Save(doneJob(1, img))
	f.pump(t, "the offer of another folder", r.Offering)
	if !r.Unsaved(1) || len(f.listed) != 0 {
		t.Fatalf("after a failed write: held %v, listed %v", r.Unsaved(1), f.listed)
	}
	if m.Notice().Text == "" {
		t.Error("the failed write said nothing")
	}
	r.Refresh()
	if !r.SaveTo.Hidden {
		t.Error("Save to… shows while the canvas shows another picture")
	}
	f.showing = 1
	r.Refresh()
	if r.SaveTo.Hidden || r.SaveTo.Disabled() {
		t.Error("Save to… is not offered over the unsaved image")
	}
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	r.SaveKeptTo(1, elsewhere)
	f.pump(t, "the held image saved", func() bool { return !r.Unsaved(1) })
	if len(f.listed) != 1 || filepath.Dir(f.listed[0].Path) != elsewhere || f.saved[1] != f.listed[0].Path {
		t.Fatalf("listed %v, saved %v; want the image in %s", f.listed, f.saved, elsewhere)
	}
	readBack(t, f.listed[0].Path, img)
	if !r.SaveTo.Hidden {
		t.Error("Save to… still shows once the image is saved")
	}
}

// Close waits for the images being written: a write begun just before it is complete after it.
func TestCloseWaitsForTheImagesBeingWritten(t *testing.T) {
	r, _, f := newRegion(t, nil)
	img := picture(256, 256)
	r.SaveInBackground(f.history, img, &imagefile.Settings{Prompt: "a kite"}, time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), func(history.Entry, error) {})
	r.Close(false)
	names, _ := filepath.Glob(filepath.Join(f.folder, "*.png"))
	if len(names) != 1 {
		t.Fatalf("after Close the folder holds %v, want the image written", names)
	}
	if set := readBack(t, names[0], img); set == nil || set.Prompt != "a kite" {
		t.Errorf("the image written carries %+v, want its settings", set)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(f.folder, ".*")); len(leftovers) != 0 {
		t.Errorf("a partial write was left behind: %v", leftovers)
	}
}

// findButton is the button labelled text under o (nil: none).
func findButton(o fyne.CanvasObject, text string) *widget.Button {
	switch v := o.(type) {
	case *widget.Button:
		if v.Text == text {
			return v
		}
	case *fyne.Container:
		for _, c := range v.Objects {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

// readBack reads the PNG at path, checks it holds want pixel for pixel, and returns its settings.
func readBack(t *testing.T, path string, want *image.NRGBA) *imagefile.Settings {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	got, err := png.Decode(file)
	if err != nil {
		t.Fatalf("%s does not read back: %v", path, err)
	}
	if got.Bounds() != want.Bounds() {
		t.Fatalf("%s is %v, want %v", path, got.Bounds(), want.Bounds())
	}
	for y := range want.Rect.Dy() {
		for x := range want.Rect.Dx() {
			if c := color.NRGBAModel.Convert(got.At(x, y)); c != want.NRGBAAt(x, y) {
				t.Fatalf("%s at (%d,%d) is %v, want %v", path, x, y, c, want.NRGBAAt(x, y))
			}
		}
	}
	md, err := imagefile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return md.Settings
}
