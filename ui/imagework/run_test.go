package imagework

import (
	"context"
	"image"
	"image/color"
	"testing"

	"easel/app/compose"
	"easel/app/settings"
	"easel/engine/pipeline"

	"easel/ui/model"
)

// The run's draft carries the start image with the canvas document's settings: strength 1 and
// the size following the image on an extended canvas, the painted mask, no mask when none is
// painted; without a start image the recipe is unchanged.
func TestJobDraft(t *testing.T) {
	d := compose.NewDraft(settings.Defaults())
	if got := JobDraft(d, model.Canvas{Strength: 0.6}); got.Start != nil || got.Size != d.Size {
		t.Fatalf("text to image: %+v", got.Start)
	}
	m := model.New(d)
	img := image.NewNRGBA(image.Rect(0, 0, 128, 96))
	m.SetStart(compose.Condition{Name: "a.png", Image: img})
	m.SetStrength(0.4)
	got := JobDraft(m.Draft(), m.Canvas())
	if got.Start == nil || got.Start.Strength != 0.4 || got.Start.Mask != nil || got.Size != d.Size {
		t.Fatalf("a start image: %+v size %v", got.Start, got.Size)
	}
	m.Canvas().Start.Mask.Image().SetGray(3, 3, color.Gray{Y: 255})
	m.SetExtend([4]int{0, 32, 0, 0})
	got = JobDraft(m.Draft(), m.Canvas())
	if got.Start.Strength != 1 || got.Start.Mask == nil || got.Start.Extend.Top != 32 || got.Size != compose.SizeFromImage {
		t.Errorf("an extended, painted start image: %+v size %v", got.Start, got.Size)
	}
	if w, h, err := OutputSize(m.Draft(), m.Canvas(), m.Canvas().Extend); err != nil || w != 128 || h != 128 {
		t.Errorf("the extended output is %d×%d (%v), want 128×128", w, h, err)
	}
}

// countingGen counts the runs it is given.
type countingGen struct{ runs int }

func (g *countingGen) Run(context.Context, pipeline.Request, chan<- pipeline.Event) (*pipeline.Result, error) {
	g.runs++
	return &pipeline.Result{}, nil
}

// Finishing holds what a run from a start image is pasted back with until the run takes it, or
// until it is forgotten (a job cancelled before it ran).
func TestFinishingHoldsUntilRunOrForget(t *testing.T) {
	gen := &countingGen{}
	f := &Finishing{Generator: gen}
	a, b := &pipeline.InitImage{}, &pipeline.InitImage{}
	f.Expect(a, &compose.Job{})
	f.Expect(b, &compose.Job{})
	if !f.Expected(a) || !f.Expected(b) {
		t.Fatal("Expect recorded nothing")
	}
	f.Forget(b)
	if f.Expected(b) || !f.Expected(a) {
		t.Error("Forget dropped the wrong run")
	}
	if _, err := f.Run(context.Background(), pipeline.Request{Init: a}, nil); err != nil {
		t.Fatal(err)
	}
	if f.Expected(a) || gen.runs != 1 {
		t.Errorf("after its run: still expected %v, %d runs", f.Expected(a), gen.runs)
	}
}
