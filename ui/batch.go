package ui

import (
	"fmt"
	"image"
	"os"
	"strings"
	"time"

	"fyne.io/fyne/v2/dialog"

	"easel/app/compose"
	"easel/app/hires"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/engine/pipeline"

	"easel/ui/canvasarea"

	"easel/ui/gallery"
)

// MaxWindowCount is the largest batch the window makes (the CLI goes to pipeline.MaxCount).
const MaxWindowCount = 16

// newSheet builds the contact sheet with the studio's actions.
func (s *window) newSheet() *gallery.Sheet {
	return gallery.NewSheet(gallery.Actions{
		Open:    s.openCell,
		Discard: s.discardCell,
		Keep:    s.keepCell,
		Vary:    s.varyCell,
		Refine:  func(c *gallery.Cell) { s.secondPass(c, 1) },
		Upscale: s.secondPass,
		Menu:    s.cellMenu,
	})
}

// batchEvent shows a batch's event in the contact sheet: a new batch fills a new sheet, a step's
// preview goes to its image's cell, a finished image is shown and saved.
func (s *window) batchEvent(j jobs.Job, ev pipeline.Event, framed image.Image) {
	if !ownJob(j) {
		// An API job's batch (Share this Mac) goes to the history, never onto the artist's sheet.
		if ev.Finished != nil {
			if s.apiBatches == nil {
				s.apiBatches = map[jobs.ID]string{}
			}
			if s.apiBatches[j.ID] == "" {
				s.apiBatches[j.ID] = imagefile.NewBatchID(s.now(), uint64(j.ID), j.Request.Seed)
			}
			s.saveBatchImage(j, ev.Finished, max(j.Request.Batch(), len(j.Request.Cells)))
		}
		return
	}
	if s.sheetJob != j.ID {
		s.sheetJob = j.ID
		s.sheetDraft = s.jobRecord(j.ID).Draft
		s.sheetBatch = imagefile.NewBatchID(s.now(), uint64(j.ID), j.Request.Seed)
		seeds := make([]uint64, ev.Images)
		var vars []uint64
		for i := range seeds {
			seeds[i], _ = j.Request.ImageSeeds(i)
			if j.Request.VariationStrength > 0 {
				_, v := j.Request.ImageSeeds(i)
				vars = append(vars, v)
			}
		}
		label := jobLabel(j.Request.Prompt, j.Request.Seed)
		if strings.HasPrefix(j.Label, varyKind+" · ") && s.sheet.HasBatch() {
			// Variations open beside the batch they came from, which stays a tab away.
			s.sheet.BeginBeside(fmt.Sprintf("%s %d", varyKind, s.sheet.Groups()), label, seeds, vars)
		} else {
			s.sheet.Begin(label, seeds, vars)
		}
		s.area.Show(canvasarea.Batch) // the sheet fills the centre as the images finish
		s.sheet.SetLiveDraft(s.sheetDraft)
	}
	if ev.Finished != nil {
		res := ev.Finished
		s.sheet.Finished(res.Index, res.Image, canvasarea.FrameFinal(res.Image))
		s.saveBatchImage(j, res, max(j.Request.Batch(), len(j.Request.Cells)))
		return
	}
	if ev.Preview != nil && framed != nil {
		s.sheet.Preview(ev.Image, framed)
	}
}

// batchStopped marks a failed or cancelled batch's unfinished images.
func (s *window) batchStopped(j jobs.Job) {
	s.exploreStopped(j) // a grid keeps its finished cells and its partial grid (explore.go)
	if s.sheetJob == j.ID {
		s.sheet.Stopped()
	}
}

// saveBatchImage saves one finished image of a batch of count off the UI goroutine, with the
// batch's identity so the history groups it, and lists it. A job from this window's server
// (Share this Mac: an X/Y/Z plot's cells over one prefill) is saved as its answer carries it.
func (s *window) saveBatchImage(j jobs.Job, res *pipeline.Result, count int) {
	id, img := j.ID, res.Image
	var set *imagefile.Settings
	if r, ok := s.model.Job(id); ok {
		set = r.Draft.FileSettings(res)
	} else if pic, api := j.Owner.(apiPicture); api {
		var err error
		if img, set, err = pic.Picture(res); err != nil {
			s.say("Image %d of job %d (from %s) could not be saved: %v", res.Index+1, id, j.Origin, err)
			return
		}
	} else {
		return
	}
	batch := s.sheetBatch
	if !ownJob(j) {
		batch = s.apiBatches[id]
	}
	set.InBatch(batch, res.Index, count)
	now, store, index := s.now(), s.deps.History, res.Index
	if c := s.sheet.Cell(index); c != nil && s.sheetJob == id {
		c.Set = set
	}
	s.saveJobImage(id, false, store, img, set, now, func(e history.Entry, err error) {
		if err != nil {
			s.keep(id, keptImage{img: img, set: set, at: now}, err)
			return
		}
		s.history.AddSession(e)
		if s.sheetJob == id {
			s.sheet.Saved(index, e.Path)
		}
	})
}

// openCell shows a cell's picture on the canvas.
func (s *window) openCell(c *gallery.Cell) {
	if c.Final == nil {
		return
	}
	b := c.Final.Bounds()
	s.canvas.ShowFinal(canvasarea.FrameFinal(c.Final), b.Dx(), b.Dy())
	s.canvasJob = 0
	s.setShownFile(c.Path)
}

// discardCell removes a cell's saved file (it stays on the sheet, marked, and can be kept again).
func (s *window) discardCell(c *gallery.Cell) {
	if c.Path == "" {
		return
	}
	if err := os.Remove(c.Path); err != nil {
		s.say("%s could not be removed: %v", shortPath(c.Path), err)
		return
	}
	s.say("Discarded %s.", shortPath(c.Path))
	s.sheet.Discarded(c)
	if s.shownPath == c.Path {
		s.setShownFile("")
	}
}

// keepCell saves a discarded image again.
func (s *window) keepCell(c *gallery.Cell) {
	img, ok := c.Final.(*image.NRGBA)
	if !ok || c.Set == nil {
		return
	}
	e, err := s.deps.History.Save(img, c.Set, s.now())
	if err != nil {
		s.say("%s could not be saved again: %v", shortPath(c.Path), err)
		return
	}
	s.history.AddSession(e)
	s.sheet.Kept(c, e.Path)
}

// varyKind is how the queue names a Vary job (and how its batch is known to open beside).
const varyKind = "Vary"

// cellDraft is the cell's batch's draft set to remake its image: its seed and variation, one image.
func (s *window) cellDraft(c *gallery.Cell) compose.Draft {
	d, ok := c.Draft()
	if !ok {
		d = s.sheetDraft
	}
	base := d
	d.Conditions = append([]compose.Condition(nil), d.Conditions...)
	d.LoRAs = append([]compose.LoRA(nil), d.LoRAs...)
	d.Seed, d.RandomSeed, d.Count = c.Seed, false, 1
	d.VariationSeed, d.VariationStrength = 0, 0
	if c.Varies {
		d.VariationSeed, d.VariationStrength = c.Variation, base.VariationStrength
	}
	return d
}

// varyCell makes a batch of variations around a cell's image: its seed, variation seeds counted
// up from a random one, at the chosen strength (A1111's semantics); as many as the draft's count
// (4 when it makes one).
func (s *window) varyCell(c *gallery.Cell, strength float64) {
	d := s.cellDraft(c)
	if c.Varies {
		// A variation of a variation: start from the image's own noise blend is not a seed;
		// vary around its base seed with its variation seed kept as the first.
		d.VariationSeed = c.Variation
	} else {
		d.VariationSeed = randomSeed()
	}
	d.VariationStrength = strength
	d.Count = max(s.draft().Count, 4)
	s.nextKind = varyKind
	if s.submit(d, d.Seed) {
		s.say("Making %d variations of seed %d at strength %.2f.", d.Count, d.Seed, strength)
	}
}

// secondPass offers to refine a cell's image (factor 1: at its own size) or upscale it (×1.5,
// ×2): resized with Lanczos or the learned upscaler Settings chooses, then an image-to-image pass at hires.DefaultStrength with the batch's
// prompt, condition images and LoRAs and the image's seed. The offer (size, the steps it runs,
// the time expected, whether it fits) comes first; the pass starts on confirm.
func (s *window) secondPass(c *gallery.Cell, factor float64) {
	img, ok := c.Final.(*image.NRGBA)
	if !ok {
		return
	}
	d := s.cellDraft(c)
	w, h := img.Rect.Dx(), img.Rect.Dy()
	what := "Refine"
	steps := hires.Steps(d.Steps, hires.DefaultStrength)
	offer := fmt.Sprintf("Refine image %d: %d×%d, %d steps at strength %.2f", c.Index+1, w, h, steps, hires.DefaultStrength)
	if s.lastStepTime > 0 {
		offer += fmt.Sprintf(", about %s", (s.lastStepTime * time.Duration(steps)).Round(time.Second))
	}
	if factor > 1 {
		what = fmt.Sprintf("Upscale ×%g", factor)
		plan, err := d.Plan()
		if err != nil {
			s.say("Cannot upscale: %v", err)
			return
		}
		plan.Width, plan.Height = w, h
		o, err := hires.Plan(s.deps.Geometry, plan, s.deps.Budget, factor, hires.DefaultStrength, d.Steps, s.lastStepTime)
		if err != nil {
			s.say("Cannot upscale: %v", err)
			return
		}
		s.sheet.SetPlan("Upscale " + o.Describe())
		if !o.Fits() {
			s.say("Upscale ×%g does not fit in memory: %s.", factor, o.Prediction.Explain())
			return
		}
		w, h, steps = o.Width, o.Height, o.Steps
		offer = fmt.Sprintf("Upscale image %d %s", c.Index+1, o.Describe()) + s.upscales.FirstStageOffer(img.Rect.Dx(), img.Rect.Dy(), factor)
	}
	d.Start = &compose.Start{Name: c.SourceName(), SHA256: c.SourceHash(), Strength: hires.DefaultStrength} // its image: the first stage, as the pass starts
	d.Size, d.CustomW, d.CustomH = compose.SizeCustom, w, h
	var hs *imagefile.HiresSettings
	if factor > 1 {
		hs = &imagefile.HiresSettings{Factor: factor, Width: w, Height: h, Strength: hires.DefaultStrength, Steps: d.Steps, Upscaler: "Lanczos"}
	}
	start := func() {
		// The first stage: Lanczos, or the learned upscaler Settings chooses (ui/upscale).
		s.upscales.FirstStage(img, w, h, factor, func(first *image.NRGBA, upscaler string) {
			d.Start.Image = first
			if hs != nil {
				hs.Upscaler = upscaler
			}
			s.nextKind, s.nextHires = what, hs
			if s.submit(d, d.Seed) {
				s.sayKind(noticeInfo, "%s: image %d (seed %d), %d×%d, %d steps at strength %.2f.", what, c.Index+1, c.Seed, w, h, steps, hires.DefaultStrength)
			}
		})
	}
	if s.win == nil {
		start()
		return
	}
	dlg := dialog.NewConfirm(what+"?", offer, func(ok bool) {
		if ok {
			start()
		}
	}, s.win)
	dlg.SetConfirmText(what)
	dlg.SetDismissText("Not now")
	s.show(dlg)
	s.offer, s.offerText = dlg, offer
}
