package batch

import (
	"image"
	"os"
	"path/filepath"

	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/engine/pipeline"

	"easel/ui/gallery"
	"easel/ui/kit"
	"easel/ui/model"
)

// saveImage saves one finished image of a batch of count off the UI goroutine, with the batch's
// identity so the history groups it, and lists it. A job from this window's server (Share this
// Mac: an X/Y/Z plot's cells over one prefill) is saved as its answer carries it.
func (r *Region) saveImage(j jobs.Job, res *pipeline.Result, count int) {
	id, img := j.ID, res.Image
	var set *imagefile.Settings
	if rec, ok := r.model.Job(id); ok {
		set = rec.Draft.FileSettings(res)
	} else if pic, api := j.Owner.(kit.APIPicture); api {
		var err error
		if img, set, err = pic.Picture(res); err != nil {
			r.model.Say(model.NoticeWarning, "Image %d of job %d (from %s) could not be saved: %v", res.Index+1, id, j.Origin, err)
			return
		}
	} else {
		return
	}
	batch := r.id
	if !ownJob(j) {
		batch = r.apiBatches[id]
	}
	set.InBatch(batch, res.Index, count)
	index := res.Index
	if c := r.Sheet.Cell(index); c != nil && r.job == id {
		c.Set = set
	}
	r.shell.Save(id, img, set, func(e history.Entry, err error) {
		if err == nil && r.job == id {
			r.Sheet.Saved(index, e.Path)
		}
	})
}

// open shows a cell's picture on the canvas.
func (r *Region) open(c *gallery.Cell) {
	if c.Final != nil {
		r.shell.Open(c.Final, c.Path)
	}
}

// discard removes a cell's saved file (it stays on the sheet, marked, and can be kept again).
func (r *Region) discard(c *gallery.Cell) {
	if c.Path == "" {
		return
	}
	path := c.Path
	if err := os.Remove(path); err != nil {
		r.model.Say(model.NoticeWarning, "%s could not be removed: %v", filepath.Base(path), err)
		return
	}
	r.model.Say(model.NoticeWarning, "Discarded %s.", filepath.Base(path))
	r.Sheet.Discarded(c)
	r.shell.Removed(path)
}

// keep saves a discarded image again.
func (r *Region) keep(c *gallery.Cell) {
	img, ok := c.Final.(*image.NRGBA)
	if !ok || c.Set == nil {
		return
	}
	e, err := r.shell.Store().Save(img, c.Set, r.shell.Now())
	if err != nil {
		r.model.Say(model.NoticeWarning, "%s could not be saved again: %v", filepath.Base(c.Path), err)
		return
	}
	r.shell.Listed(e)
	r.Sheet.Kept(c, e.Path)
}
