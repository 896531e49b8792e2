package progress

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/engine/ml"
	"easel/engine/pipeline"

	"easel/ui/kit"
)

// TimingPanel shows where the compute time goes, per kernel class (gemm, attn, norm, rope, act,
// conv, copy), from the run's events, and the compute rate achieved (the floating-point
// operations the backend counted, over the kernel time), per class, per step and for the run.
type TimingPanel struct {
	title *widget.Label
	// names label each class's row: the class, with the Metal kernel variant the denoiser ran
	// for it when it was tuned ("gemm: swizzle").
	Names [ml.NumClasses]*widget.Label
	bars  [ml.NumClasses]*Meter
	Texts [ml.NumClasses]string
	total *widget.Label
	// device is the run's Metal GPU time per stage ("" while nothing ran on a device).
	device *widget.Label
	// steps and stepText chart each denoising step's wall time; stepTimes and lastElapsed
	// collect them from the running job's events.
	steps       *StepChart
	StepText    *widget.Label
	stepTimes   []time.Duration
	lastElapsed time.Duration
	// kernels and flops are the run's totals so far; prevKernels and prevFlops those at the
	// previous event, so a finished step's rate is its share of both; stepRate is that rate's
	// text ("" until a step counted flops).
	kernels, prevKernels time.Duration
	flops, prevFlops     float64
	stepRate             string
	// sharp is the sharp preview's own class: its real VAE decodes run on a backend of their
	// own, beside the denoiser, so they are not in the kernel classes above.
	sharp     *Meter
	SharpText string
	Box       fyne.CanvasObject
	// OnTimes is told the shares as they change (the compact stacked bar under the canvas shows
	// them too; nil: none).
	OnTimes func([ml.NumClasses]ml.ClassTime)
}

// NewTimingPanel makes the panel, its class names in a column labelWidth wide.
func NewTimingPanel(labelWidth float32) *TimingPanel {
	title := "CPU time by kernel class"
	if hasMetal {
		title = "Time by kernel class" // the device or the CPU: the run says which
	}
	p := &TimingPanel{title: kit.Heading(title), total: widget.NewLabel("No run yet."), device: widget.NewLabel("")}
	p.total.Wrapping = fyne.TextWrapWord
	p.device.Wrapping = fyne.TextWrapWord
	rows := []fyne.CanvasObject{p.title}
	for c := range ml.NumClasses {
		p.bars[c] = NewMeter()
		p.Texts[c] = "—"
		p.bars[c].Set(0, "—", false)
		p.Names[c] = widget.NewLabel(ml.Class(c).String())
		p.Names[c].Truncation = fyne.TextTruncateEllipsis
		rows = append(rows, kit.LabelledRow(p.Names[c], labelWidth, p.bars[c]))
	}
	p.sharp = NewMeter()
	p.SharpText = "off"
	p.sharp.Set(0, p.SharpText, false)
	rows = append(rows, kit.LabelledRow(widget.NewLabel("sharp preview"), labelWidth, p.sharp))
	p.steps = NewStepChart()
	p.StepText = widget.NewLabel(p.steps.Summary())
	p.StepText.Wrapping = fyne.TextWrapWord
	rows = append(rows, p.total, p.device, p.steps, p.StepText)
	p.Box = container.NewVBox(rows...)
	return p
}

// ShowVariants captions the class rows with the Metal kernel variant the denoiser ran for each
// tuned class ("gemm: swizzle"); variant says it for a class name, "" for classes not tuned (their
// rows show the class alone).
func (p *TimingPanel) ShowVariants(variant func(class string) string) {
	for c := range ml.NumClasses {
		name := ml.Class(c).String()
		if v := variant(name); v != "" {
			name += ": " + v
		}
		p.Names[c].SetText(name)
	}
}

// StartRun clears the step chart for a new job.
func (p *TimingPanel) StartRun() {
	p.stepTimes, p.lastElapsed = nil, 0
	p.kernels, p.prevKernels, p.flops, p.prevFlops, p.stepRate = 0, 0, 0, 0, ""
	p.steps.Set(nil)
	p.StepText.SetText(p.steps.Summary())
	p.device.SetText("")
	p.SharpText = "off"
	p.sharp.Set(0, p.SharpText, false)
}

// showDevice renders the run's GPU time per stage so far (the denoiser's and the VAE's on Metal).
func (p *TimingPanel) showDevice(stages [len(pipeline.Event{}.StageDeviceTimes)]time.Duration) {
	p.device.SetText(deviceStageText(stages))
}

// deviceStageText is "GPU time: prefill 1.2 s · denoising 10.3 s · decoding 0.4 s" over the
// stages that ran on a device, or "" when none did.
func deviceStageText(stages [len(pipeline.Event{}.StageDeviceTimes)]time.Duration) string {
	var parts []string
	for s, d := range stages {
		if d > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1f s", pipeline.Stage(s), d.Seconds()))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "GPU time: " + strings.Join(parts, " · ") + "."
}

// classTitle names where the per-class times come from: the denoiser's backend. It ran on the
// device when its prefill or its steps have GPU time; it runs on the CPU when its prefill ended
// without any (a declined denoiser, or the CPU backend). "" while that is not known yet. The GPU's
// title says how its time per class was measured: sampled (timestamps at compute-pass
// boundaries), estimated split (each command buffer's time apportioned by a cost model), or
// profiling.
func classTitle(ev pipeline.Event) string {
	t := DenoiserTitle(ev)
	if src := ev.GPUClasses.Source(); t == GPUTitle && src != "" {
		t += " (" + src + ")"
	}
	return t
}

const GPUTitle = "GPU time by kernel class"

// denoiserTitle is classTitle without the GPU's source.
func DenoiserTitle(ev pipeline.Event) string {
	dev := ev.StageDeviceTimes
	var finished time.Duration
	for _, d := range dev {
		finished += d
	}
	denoiserNow := ev.Stage == pipeline.StagePrefill || ev.Stage == pipeline.StageDenoising
	switch {
	case dev[pipeline.StagePrefill] > 0 || dev[pipeline.StageDenoising] > 0,
		denoiserNow && ev.DeviceTime > finished:
		return GPUTitle
	case ev.Stage > pipeline.StagePrefill:
		return "CPU time by kernel class"
	}
	return ""
}

// showSharp renders the sharp preview's cost: its decodes, their time, how often it decodes,
// and its share of the denoising time so far (the budget is pipeline.SharpBudget).
func (p *TimingPanel) showSharp(ev pipeline.Event) {
	s := ev.Sharp
	if s == nil || ev.Step == 0 {
		return
	}
	denoising := ev.StepTime * time.Duration(ev.Step)
	share := 0.0
	if denoising > 0 {
		share = s.Time.Seconds() / denoising.Seconds()
	}
	p.SharpText = fmt.Sprintf("%d decodes at 1/%d · %.1f s · every %d steps · %.1f %% of step time", s.Decodes, s.Downsample, s.Time.Seconds(), s.Every, share*100)
	p.sharp.Set(share, p.SharpText, share > pipeline.SharpBudget)
}

// Observe takes a running job's event: a finished step adds its wall time (the time since the
// previous step, or since denoising started) and its achieved rate (the flops and kernel time
// added since the previous event). Call it after show with the same event.
func (p *TimingPanel) Observe(ev pipeline.Event) {
	defer func() { p.prevKernels, p.prevFlops = p.kernels, p.flops }()
	p.showDevice(ev.StageDeviceTimes)
	if t := classTitle(ev); t != "" && t != p.title.Text {
		p.title.SetText(t)
	}
	if ev.Stage != pipeline.StageDenoising {
		return
	}
	p.showSharp(ev)
	if ev.Step > len(p.stepTimes) && ev.Step > 0 {
		p.stepTimes = append(p.stepTimes, ev.Elapsed-p.lastElapsed)
		p.steps.Set(p.stepTimes)
		p.StepText.SetText(p.steps.Summary())
		if r := rateText(p.flops-p.prevFlops, p.kernels-p.prevKernels); r != "" {
			p.stepRate = r
			p.showTotal()
		}
	}
	p.lastElapsed = ev.Elapsed
}

// ShowRun renders a run's per-class times: the device networks' GPU time per class (measured in
// every mode, see classTitle) when the denoiser runs on the device and they have any, else the
// backend's times.
func (p *TimingPanel) ShowRun(t [ml.NumClasses]ml.ClassTime, gpu ml.GPUClasses, denoiserOnDevice bool) {
	if denoiserOnDevice && gpu.Total() > 0 {
		var g [ml.NumClasses]ml.ClassTime
		for c, d := range gpu.Time {
			g[c].Time = d
		}
		t = g
	}
	p.show(t)
}

// denoiserRanOnDevice says whether a run's prefill or steps had device time.
func denoiserRanOnDevice(dev [len(pipeline.Event{}.StageDeviceTimes)]time.Duration) bool {
	return dev[pipeline.StagePrefill] > 0 || dev[pipeline.StageDenoising] > 0
}

// ShowResult renders a finished run's per-class times and GPU time per stage.
func (p *TimingPanel) ShowResult(r *pipeline.Result) {
	onDevice := denoiserRanOnDevice(r.StageDeviceTimes)
	p.ShowRun(r.Timings, r.GPUClasses, onDevice)
	p.showDevice(r.StageDeviceTimes)
	if onDevice && r.GPUClasses.Source() != "" {
		p.title.SetText(GPUTitle + " (" + r.GPUClasses.Source() + ")")
	}
}

// show renders a run's per-class times (seconds, share of the total, and the rate achieved when
// the backend counted the class's flops) and the run's totals.
func (p *TimingPanel) show(t [ml.NumClasses]ml.ClassTime) {
	var total time.Duration
	var flops float64
	for _, c := range t {
		total += c.Time
		flops += c.Flops
	}
	for c := range ml.NumClasses {
		sec := t[c].Time.Seconds()
		share := 0.0
		if total > 0 {
			share = sec / total.Seconds()
		}
		p.Texts[c] = fmt.Sprintf("%.1f s · %d %%", sec, int(share*100+0.5))
		if r := rateText(t[c].Flops, t[c].Time); r != "" {
			p.Texts[c] += " · " + r
		}
		p.bars[c].Set(share, p.Texts[c], false)
	}
	p.kernels, p.flops = total, flops
	p.showTotal()
	if p.OnTimes != nil {
		p.OnTimes(t)
	}
}

// showTotal renders the run's kernel time and achieved rate, and the last step's.
func (p *TimingPanel) showTotal() {
	text := fmt.Sprintf("%.1f s in kernels so far", p.kernels.Seconds())
	if r := rateText(p.flops, p.kernels); r != "" {
		text += " · " + r + " achieved"
		if p.stepRate != "" {
			text += " (last step " + p.stepRate + ")"
		}
	}
	p.total.SetText(text + ".")
}

// rateText is flops over d in TFLOP/s ("0.04 TFLOP/s"), or "" when either is zero (the backend
// did not count this work).
func rateText(flops float64, d time.Duration) string {
	if flops <= 0 || d <= 0 {
		return ""
	}
	v := flops / d.Seconds() / 1e12
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f TFLOP/s", v)
	case v >= 1:
		return fmt.Sprintf("%.1f TFLOP/s", v)
	}
	return fmt.Sprintf("%.2g TFLOP/s", v)
}
