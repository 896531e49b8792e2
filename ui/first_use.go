package ui

import (
	"slices"

	"easel/app/backend"
	"easel/app/jobs"
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
)

// The first Metal use, as the window shows it: the GPU self-test and the kernel tuning make the
// first job on a Mac (and the first of each image size) take longer, so their progress takes the
// progress line while they run, a tuning that failed is a notice, and the variants the denoiser
// ran caption the timing panel's class rows. The Settings dialog shows the cached results
// (settings_menu.go).

// showStatus renders a running job's status report: its line in the progress view, its notice
// under the controls.
func (s *window) showStatus(j jobs.Job, st jobs.Status) {
	if st.Line != "" {
		s.progress.ShowStatus(j, st.Line)
		s.remote.NotePlacement(j, st) // a studio job's row says where its images are
	}
	if st.Notice != "" {
		s.say("Job %d: %s", j.ID, st.Notice)
	}
}

// tuningSource is a generator that knows the kernel-variant choice its last job's denoiser ran
// with (jobs.ModelGenerator).
type tuningSource interface {
	Tuning() (*metal.TuneReport, string)
}

// showVariants captions the timing panel's class rows with the variants the finished job ran:
// the tuned classes when its denoiser ran on this Mac's GPU with a geometry class, none when it
// ran on the CPU or on another Mac (Render on: a remote result carries no device times).
func (s *window) showVariants(res *pipeline.Result) {
	src, ok := s.deps.Generator.(tuningSource)
	if !ok {
		return
	}
	r, geometry := src.Tuning()
	onThisGPU := res != nil && (res.StageDeviceTimes[pipeline.StagePrefill] > 0 || res.StageDeviceTimes[pipeline.StageDenoising] > 0)
	s.timing.ShowVariants(func(class string) string {
		if !onThisGPU || geometry == "" || !slices.Contains(backend.TunedClasses, class) {
			return ""
		}
		return backend.VariantInUse(r, class)
	})
}
