package diagnose

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"easel/app"
	"easel/app/activity"
	"easel/engine/ml/metal"
	"easel/kernels/device"
)

// Report is the diagnostics report.
type Report struct {
	App     string `json:"app"`
	Version string `json:"version"`
	Host    Host   `json:"host"`
	// Backend is where the networks run and why.
	Backend string    `json:"backend"`
	Metal   MetalInfo `json:"metal"`
	// SelfTest is the first-use self-test's report for the device and model (nil when none ran);
	// SelfTestCached says it came from the cache.
	SelfTest       *metal.SelfTestReport `json:"self_test,omitempty"`
	SelfTestCached bool                  `json:"self_test_cached,omitempty"`
	// Guards are the denoiser's half guards in use.
	Guards string `json:"guards"`
	// RecoveryPolicy is the command-buffer level remembered for the device after the GPU's
	// watchdog stopped a longer one (metal.DevicePolicy, in words), "" when none.
	RecoveryPolicy string   `json:"recovery_policy,omitempty"`
	LastJob        *LastJob `json:"last_job,omitempty"`
	// Variants is the most recent kernel-variant choice cached for this Mac (tuned on first use
	// of a geometry class, or by `easel bench dit-metal --tune`), nil when none: the baseline
	// kernels run. Tunings are all of them, one per device and geometry class, most recent first
	// (each with every variant's time: the figures a Mac owner's report brings).
	Variants *metal.TuneReport   `json:"kernel_variants,omitempty"`
	Tunings  []*metal.TuneReport `json:"kernel_variants_by_geometry,omitempty"`
	// SleepNotices is "heard" when this process gets the Mac's sleep and wake notices (so a
	// running job writes its checkpoint, a studio worker hands its job back, before the Mac
	// sleeps: app/activity), else why not.
	SleepNotices string `json:"sleep_notices"`
}

// MetalInfo is the GPU as the report shows it.
type MetalInfo struct {
	Available bool `json:"available"`
	// Why Metal is unavailable, when it is.
	Why       string `json:"why,omitempty"`
	Device    string `json:"device,omitempty"`
	Emulated  bool   `json:"emulated,omitempty"`
	GPUFamily string `json:"gpu_family,omitempty"`
	// MaxBuffer and WorkingSet are maxBufferLength and recommendedMaxWorkingSetSize.
	MaxBuffer  int64 `json:"max_buffer_bytes,omitempty"`
	WorkingSet int64 `json:"recommended_working_set_bytes,omitempty"`
	// Allocated is currentAllocatedSize (Mac only).
	Allocated int64 `json:"allocated_bytes,omitempty"`
}

// Options are what Build reports on.
type Options struct {
	// Device is the Metal device (real or emulated), or nil; Why says why there is none.
	Device   device.Device
	Emulated bool
	Why      string
	// Backend is the backend choice's sentence.
	Backend        string
	SelfTest       *metal.SelfTestReport
	SelfTestCached bool
	// Guards in use (the knobs' or the self-test's remembered ones).
	Guards metal.Guards
	// Dir is the app-support folder (the last job's record); "" for none.
	Dir string
}

// Build assembles the report.
func Build(o Options) *Report {
	r := &Report{App: app.Name, Version: app.Version, Host: hostInfo(), Backend: o.Backend,
		SelfTest: o.SelfTest, SelfTestCached: o.SelfTestCached, Guards: o.Guards.String(), SleepNotices: "heard"}
	if err := activity.SleepNotices(); err != nil {
		r.SleepNotices = err.Error()
	} else if runtime.GOOS != "darwin" {
		r.SleepNotices = "not on this system (macOS only)"
	}
	if o.SelfTest != nil && o.SelfTest.Guards != nil {
		r.Guards = o.SelfTest.Guards.String() + " (widened after an overflow, remembered for the model)"
	}
	if d := o.Device; d != nil {
		l := d.Limits()
		r.Metal = MetalInfo{Available: true, Device: d.Name(), Emulated: o.Emulated, MaxBuffer: l.MaxBufferLength, WorkingSet: l.RecommendedMaxWorkingSetSize}
		if f, ok := d.(interface{ GPUFamily() string }); ok {
			r.Metal.GPUFamily = f.GPUFamily()
		}
		if a, ok := d.(interface{ CurrentAllocatedBytes() int64 }); ok {
			r.Metal.Allocated = a.CurrentAllocatedBytes()
		}
	} else {
		r.Metal.Why = o.Why
	}
	if o.Dir != "" && o.Device != nil {
		r.RecoveryPolicy = metal.PersistedPolicy(o.Dir, hostInfo().OSBuild, app.Version).Describe(o.Device.Name())
	}
	if o.Dir != "" {
		r.LastJob = LoadLastJob(o.Dir)
		r.Tunings = metal.TuneCache{Dir: filepath.Join(o.Dir, "tuning")}.All()
		if len(r.Tunings) > 0 {
			r.Variants = r.Tunings[0]
		}
	}
	return r
}

// JSON is the report as indented JSON.
func (r *Report) JSON() []byte {
	b, _ := json.MarshalIndent(r, "", "  ")
	return append(b, '\n')
}

// Text is the report for a terminal or an issue.
func (r *Report) Text() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	h := r.Host
	p("%s %s diagnostics", r.App, r.Version)
	p("machine: %s, %d cores, %s memory; %s/%s, OS build %s (%s)", orUnknown(h.Chip), h.Cores, gb(h.PhysicalMemory), h.OS, h.Arch, orUnknown(h.OSBuild), orUnknown(h.OSVersion))
	if h.Thermal != "" {
		p("thermal state: %s", h.Thermal)
	}
	p("this process: %s now, %s at its peak", gb(h.Footprint), gb(h.PeakFootprint))
	p("backend: %s", r.Backend)
	p("sleep notices: %s", r.SleepNotices)
	if m := r.Metal; m.Available {
		p("GPU: %s%s; family %s; largest buffer %s, recommended working set %s", m.Device, map[bool]string{true: " (the CPU emulator: no GPU figures)"}[m.Emulated], orUnknown(m.GPUFamily), gb(m.MaxBuffer), gb(m.WorkingSet))
	} else {
		p("Metal: unavailable — %s", orDefault(m.Why, "no reason was recorded"))
	}
	p("half guards: %s", r.Guards)
	if r.Metal.Available {
		p("recovery policies: %s", orDefault(r.RecoveryPolicy, "none remembered (the default command buffers)"))
	}
	if len(r.Tunings) == 0 {
		p("%s", r.Variants.Summary())
	}
	for _, t := range r.Tunings {
		p("%s", t.Summary())
	}
	if st := r.SelfTest; st != nil {
		verdict := "passed"
		if !st.Passed() {
			verdict = "FAILED"
		}
		cached := ""
		if r.SelfTestCached {
			cached = ", from the cache"
		}
		p("self-test %s (%s, %.1f s%s; model %s):", verdict, st.When.Format(time.RFC3339), st.Seconds, cached, orUnknown(st.Key.Model))
		for _, k := range st.Results {
			rel := "—"
			if k.RelErr != nil {
				rel = fmt.Sprintf("%.2e", *k.RelErr)
			}
			line := fmt.Sprintf("  %-4s %-46s rel %s (bound %.0e) [%s]", map[bool]string{true: "ok", false: "FAIL"}[k.OK], k.Kernel, rel, k.Bound, strings.Join(k.Stages, ", "))
			if k.Error != "" && !k.OK {
				line += ": " + k.Error
			}
			if k.Skipped != "" {
				line += ": " + k.Skipped
			}
			p("%s", line)
		}
	} else if r.Metal.Available {
		p("self-test: not run yet")
	} else {
		p("self-test: none (no GPU here; `easel diagnose --emulator` runs it on the CPU emulator)")
	}
	if j := r.LastJob; j != nil {
		p("last job (%s): %dx%d, %d steps, %s", j.When.Format(time.RFC3339), j.Width, j.Height, j.Steps, j.Backend)
		if j.Model != "" {
			p("  model file: %s", j.Model)
		}
		for _, s := range j.Stages {
			dev, peak := "", ""
			if s.DeviceSeconds > 0 {
				dev = fmt.Sprintf(", GPU %.2f s", s.DeviceSeconds)
			}
			if s.PeakBytes > 0 {
				peak = ", peak memory " + gb(s.PeakBytes)
			}
			p("  %-18s %.2f s%s%s", s.Stage, s.Seconds, dev, peak)
		}
		if len(j.Classes) > 0 {
			names := make([]string, 0, len(j.Classes))
			for c := range j.Classes {
				names = append(names, c)
			}
			sort.Strings(names)
			var parts []string
			for _, c := range names {
				parts = append(parts, fmt.Sprintf("%s %.2f s", c, j.Classes[c]))
			}
			p("  time per kernel class (%s): %s", j.ClassesAre, strings.Join(parts, " · "))
		}
		if j.PeakFootprint > 0 {
			how := ""
			if j.PeakMemoryMethod != "" {
				how = " (" + j.PeakMemoryMethod + ")"
			}
			p("  peak memory: %s%s", gb(j.PeakFootprint), how)
		}
		for _, n := range j.Notices {
			p("  notice: %s", n)
		}
		if len(j.Declines) == 0 {
			p("  declines: none")
		}
		for _, rc := range j.Recoveries {
			p("  recovery: %s during %s (%s), %d× on %s: %s; %s", rc.Kind, rc.Call, rc.Network, rc.Count, rc.Device, rc.What, rc.Means)
		}
		if len(j.Recoveries) == 0 {
			p("  recoveries: none")
		}
	}
	return b.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func gb(n int64) string {
	if n <= 0 {
		return "unknown"
	}
	return metal.FormatBytes(n)
}

// ModelName is the part of a model path the report may show: its file name.
func ModelName(path string) string { return filepath.Base(path) }
