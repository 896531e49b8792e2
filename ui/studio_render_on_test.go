package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app"
	"easel/app/imagefile"
	macs "easel/app/studio"
	"easel/app/studiogen"

	"easel/ui/gallery"
)

const studioUIToken = "studio-ui-test-token-0123456789"

// seedColour is the stand-in workers' picture of a seed.
func seedColour(seed uint64) color.NRGBA {
	return color.NRGBA{R: uint8(seed * 37), G: uint8(seed * 91), B: uint8(seed * 13), A: 255}
}

// standInRenderer stands for a Mac's renderer (app/cli's, which the ui cannot import; its pixels
// are tested equal to local ones there): a 32×32 PNG of the job's seed's colour with the settings
// a worker's PNG records. It holds each image until all n are in flight at once, so a batch sent
// one image at a time fails with a message instead of passing.
func standInRenderer(name string, n int, mu *sync.Mutex, took *int, all chan struct{}) macs.Renderer {
	return macs.RenderFunc(func(ctx context.Context, job *macs.Job, _ macs.Inputs, _ func(macs.Step)) ([]byte, error) {
		mu.Lock()
		if *took++; *took == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return nil, fmt.Errorf("%s: the other images never came: the batch was not sent at once", name)
		}
		var req struct {
			Pipeline struct {
				Seed uint64 `json:"seed"`
			} `json:"pipeline"`
		}
		if err := json.Unmarshal(job.Request, &req); err != nil {
			return nil, err
		}
		img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
		c := seedColour(req.Pipeline.Seed)
		for i := 0; i < len(img.Pix); i += 4 {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
		}
		var b bytes.Buffer
		err := imagefile.Encode(&b, img, &imagefile.Settings{Prompt: "p", Width: 32, Height: 32, Steps: 2, Seed: req.Pipeline.Seed, Sigmas: []float32{1, 0.5, 0}})
		return b.Bytes(), err
	})
}

// Studio… → Render on a studio: with the hub's address and token, the window's batch of 3 goes
// to the studio at once (three Macs each take one image), the images come back in order with
// their seeds, and the job's queue row says which Mac made each image.
func TestWindowBatchRendersOnStudio(t *testing.T) {
	model := tinyModelPath(t)
	h := newHarnessWith(t, 0, func(_ *harness, d *Deps) { d.Settings.Model = model })
	h.patience = time.Minute
	s := h.s
	hub, err := macs.StartHub(macs.HubConfig{Listen: "127.0.0.1:0", Token: studioUIToken, Data: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	fpModel, err := studiogen.ModelFingerprint(model)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	var mu sync.Mutex
	took, all := 0, make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("mac-%d", i)
		c, err := macs.Dial(ctx, hub.URL(), macs.DialOptions{Role: macs.RoleWorker, Token: studioUIToken, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		w := &macs.Worker{Name: name, Model: "tiny.cmf", Fingerprint: macs.Fingerprint{Easel: app.Version, Model: fpModel, Kind: macs.KindPipeline},
			Renderer: standInRenderer(name, n, &mu, &took, all), FetchWait: time.Second}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx, c) }()
	}

	r := s.remote.RenderOn()
	test.Tap(r.Check) // no address yet: refused with what to do
	if r.Check.Checked || !strings.Contains(r.Err.Text, "hub's address") {
		t.Fatalf("connecting without an address: checked %v, %q", r.Check.Checked, r.Err.Text)
	}
	r.URL.SetText(hub.URL())
	r.Token.SetText(studioUIToken)
	test.Tap(r.Check)
	if !r.Check.Checked || r.Err.Text != "" || !strings.Contains(s.router.Where(), "studio") {
		t.Fatalf("connecting: checked %v, error %q, rendering on %q", r.Check.Checked, r.Err.Text, s.router.Where())
	}
	// bounded wait until the three Macs are on the hub (state the hub holds)
	for deadline := time.Now().Add(30 * time.Second); ; {
		ws, _ := r.Studio().Conn().Workers(ctx)
		if len(ws) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d Macs joined", len(ws), n)
		}
		time.Sleep(20 * time.Millisecond)
	}

	s.model.SetCustomSize(32, 32)
	s.model.SetRandomSeed(false)
	s.model.SetSeed(7)
	s.options.Count.SetText("3")
	test.Tap(s.generateBtn)
	h.pump("the batch rendered on the studio", func() bool {
		js := s.queue.Jobs()
		return len(js) == 1 && js[0].State.Finished() && s.model.Current() == 0
	})
	j := s.queue.Jobs()[0]
	if j.Err != nil || j.Result == nil || len(j.Result.Batch) != n {
		t.Fatalf("the job ended %v, error %v", j.State, j.Err)
	}
	for i, res := range j.Result.Batch {
		if res.Seed != uint64(7+i) || res.Image.NRGBAAt(0, 0) != seedColour(uint64(7+i)) {
			t.Errorf("image %d: seed %d, colour %v; want seed %d's", i+1, res.Seed, res.Image.NRGBAAt(0, 0), 7+i)
		}
	}
	// Each image fills its sheet cell and is saved, as a local batch's (the generator tells each).
	h.pump("the studio batch's images saved", func() bool {
		for i := range n {
			if c := s.sheet.Cell(i); c == nil || c.State != gallery.CellDone || c.Path == "" {
				return false
			}
		}
		return len(s.sheet.Cells()) == n
	})
	line := r.Placement(j.ID)
	macsSeen := map[string]bool{}
	for _, m := range regexp.MustCompile(`image \d done on (mac-\d)`).FindAllStringSubmatch(line, -1) {
		macsSeen[m[1]] = true
	}
	if len(macsSeen) != n {
		t.Errorf("the job's studio line is %q; want each of the %d images done on its own Mac", line, n)
	}
	var row []string // the labels of the job's row: its text, its seed, its studio line
	for _, o := range s.queueList.Rows.Objects {
		labels := rowLabels(o)
		if len(labels) > 0 && strings.HasPrefix(labels[0], fmt.Sprintf("#%d ", j.ID)) {
			row = labels
		}
	}
	if !slices.Contains(row, line) {
		t.Errorf("the queue row's labels are %q; want the studio line %q among them", row, line)
	}
	test.Tap(r.Check) // back to this Mac
	if s.router.Where() != "" || r.Studio() != nil {
		t.Errorf("after turning it off, rendering on %q", s.router.Where())
	}
}

// rowLabels lists the texts of the labels in a queue row, in the order they are laid out (the
// row's own text first).
func rowLabels(o fyne.CanvasObject) []string {
	var out []string
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Label:
			out = append(out, v.Text)
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return out
}
