package unfinished

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"easel/app/checkpoint"
	"easel/app/compose"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/pipeline"
	"easel/internal/tinymodel"
)

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

// TestQueueOfThreeSurvivesAStop: three jobs are queued; the first finishes and is saved, the
// second is stopped after its second step (its checkpoint written), the third never starts. A new
// session lists the two left ("step 2 of 3", "waiting"), and running them gives the pictures of
// uninterrupted runs bit for bit; afterwards nothing is left. Discard drops every kept job.
func TestQueueOfThreeSurvivesAStop(t *testing.T) {
	path := tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fp := checkpoint.Fingerprint(f)
	p, err := pipeline.New(f, cpu.New(), pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	draft := func(prompt string) *compose.Draft {
		d := compose.NewDraft(settings.Settings{})
		d.Prompt, d.Size, d.CustomW, d.CustomH, d.Steps, d.Model = prompt, compose.SizeExact, 64, 64, 3, path
		return &d
	}
	prompts := []string{"a lighthouse", "a fox in snow", "a red door"}
	var want [][]byte
	for i, pr := range prompts {
		job, err := draft(pr).Job(uint64(i + 1))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(t.Context(), job.Request, nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res.Image.Pix)
	}

	appSupport := t.TempDir()
	s, err := Open(appSupport)
	if err != nil {
		t.Fatal(err)
	}
	var kept []*Job
	for i, pr := range prompts {
		j, err := s.Add(*draft(pr), uint64(i+1), pr, "")
		if err != nil {
			t.Fatal(err)
		}
		j.Writer().EveryStep = true
		kept = append(kept, j)
	}
	// The first job runs to the end and is saved.
	job, _ := draft(prompts[0]).Job(1)
	job.Request.OnStep = kept[0].OnStep(&job.Request, fp)
	if _, err := p.Run(t.Context(), job.Request, nil); err != nil {
		t.Fatal(err)
	}
	if err := kept[0].Done(); err != nil {
		t.Fatal(err)
	}
	// The second stops after its second step's checkpoint (the process ends there).
	ctx, stop := context.WithCancel(t.Context())
	job, _ = draft(prompts[1]).Job(2)
	checkpointing := kept[1].OnStep(&job.Request, fp)
	job.Request.OnStep = func(st pipeline.StepState) {
		checkpointing(st)
		if st.Step == 2 {
			kept[1].Writer().Wait()
			stop()
		}
	}
	if _, err := p.Run(ctx, job.Request, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped job: %v", err)
	}

	// A new session.
	s2, err := Open(appSupport)
	if err != nil {
		t.Fatal(err)
	}
	left, err := s2.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range left {
		got = append(got, l.Label+": "+l.Describe())
	}
	if !slices.Equal(got, []string{"a fox in snow: step 2 of 3", "a red door: waiting"}) {
		t.Fatalf("left: %q", got)
	}
	for i, l := range left {
		job, k, err := l.Job(fp)
		if err != nil {
			t.Fatal(err)
		}
		job.Request.OnStep = k.OnStep(&job.Request, fp)
		res, err := p.Run(t.Context(), job.Request, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Image.Pix, want[i+1]) {
			t.Errorf("%s resumed (%s): the picture differs from the uninterrupted run's", l.Label, l.Describe())
		}
		if err := k.Done(); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := s2.List(); len(left) != 0 {
		t.Errorf("%d jobs left after they were saved", len(left))
	}
	// Another model's checkpoint is refused with a sentence.
	j, _ := s2.Add(*draft(prompts[0]), 1, "x", "")
	j.Writer().EveryStep = true
	job, _ = draft(prompts[0]).Job(1)
	job.Request.OnStep = j.OnStep(&job.Request, fp)
	p.Run(t.Context(), job.Request, nil)
	j.Writer().Wait()
	left, _ = s2.List()
	if len(left) != 1 || left[0].Describe() != "step 3 of 3" {
		t.Fatalf("kept: %d", len(left))
	}
	if _, _, err := left[0].Job("another"); !errors.Is(err, checkpoint.ErrOther) {
		t.Errorf("another model's checkpoint: %v", err)
	}
	if err := s2.Discard(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(s2.dir); len(entries) != 0 {
		t.Errorf("left after Discard: %v", entries)
	}
}

// TestUnwritableFolder: an app-support folder that cannot be written is said at Open (through a
// path that runs through a file, which fails for root too).
func TestUnwritableFolder(t *testing.T) {
	file := t.TempDir() + "/file"
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(file); !errors.Is(err, ErrUnwritable) {
		t.Errorf("Open under a file: %v", err)
	}
}
