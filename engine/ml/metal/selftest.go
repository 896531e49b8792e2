package metal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"easel/kernels/device"
)

// The first-use self-test: before a model first runs on a GPU, each network's program runs its
// kernels on small slices on the device and on the CPU and compares them within the bounds the
// emulator tests establish. A kernel that fails to compile, fails to run or does not match
// declines the stages that use it (the CPU runs them) with a notice naming the kernel and the
// error. The report is cached per device, OS build, app version, build (BuildID: the kernel
// sources and revision) and model file, so it costs
// its few seconds once.

// Stage names the self-test gates.
const (
	StageTextEncoder = "text encoder"
	StageDenoiser    = "denoiser"
	StageVAE         = "VAE"
)

// KernelCheck is one entry of a network's self-test slice.
type KernelCheck struct {
	// Kernel names the kernels checked, as the notice names them (e.g. "ops_linear (q8_2f)").
	Kernel string
	// Stages are the stages that decline when the check fails.
	Stages []string
	// Bound is the largest relative error ‖got − want‖/‖want‖ that passes.
	Bound float64
	// Run computes the kernel's output on dev (got) and the CPU's (want) on the same input.
	Run func(ctx context.Context, dev device.Device) (got, want []float32, err error)
}

// KernelResult is one check's outcome.
type KernelResult struct {
	Kernel string   `json:"kernel"`
	Stages []string `json:"stages"`
	OK     bool     `json:"ok"`
	// RelErr is the measured relative error (absent when the check did not run to the end).
	RelErr *float64 `json:"rel_err,omitempty"`
	Bound  float64  `json:"bound"`
	// Error says what failed: the compiler's or the device's error, or the mismatch.
	Error string `json:"error,omitempty"`
	// Skipped says why a check did not run: its stage declines on this device for another
	// reason (then OK is true: nothing failed).
	Skipped string  `json:"skipped,omitempty"`
	Seconds float64 `json:"seconds"`
}

// SelfTestKey is what a cached report is valid for.
type SelfTestKey struct {
	Device     string `json:"device"`
	OSBuild    string `json:"os_build"`
	AppVersion string `json:"app_version"`
	// Build is BuildID(): the kernel sources and the build's revision.
	Build string `json:"build"`
	// Model is the model file's base name, size and modification time (no folder: nothing
	// personal leaves the machine in diagnostics).
	Model      string `json:"model"`
	ModelSize  int64  `json:"model_size"`
	ModelMTime int64  `json:"model_mtime_unix"`
}

// ModelKey fills the model fields from the model file's path.
func (k SelfTestKey) ModelKey(path string) (SelfTestKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return k, fmt.Errorf("metal: self-test key: %w", err)
	}
	k.Model, k.ModelSize, k.ModelMTime = filepath.Base(path), st.Size(), st.ModTime().Unix()
	return k, nil
}

// ID is a file-name-safe digest of the key.
func (k SelfTestKey) ID() string { return keyID(k) }

// SelfTestReport is a self-test's outcome, as cached and as diagnostics show it.
type SelfTestReport struct {
	Key     SelfTestKey    `json:"key"`
	When    time.Time      `json:"when"`
	Seconds float64        `json:"seconds"`
	Results []KernelResult `json:"results"`
	// Guards are the denoiser's half guards that passed, widened where an overflow was seen
	// (remembered for the model); nil when the denoiser was not checked.
	Guards *Guards `json:"guards,omitempty"`
	// BlocksPerCommandBuffer is the denoiser's command-buffer length remembered for the device
	// after a watchdog stop (0: the default).
	BlocksPerCommandBuffer int `json:"blocks_per_command_buffer,omitempty"`
}

// Passed reports whether every check passed.
func (r *SelfTestReport) Passed() bool {
	for _, k := range r.Results {
		if !k.OK {
			return false
		}
	}
	return true
}

// Decline is a *Declined naming the failed kernels of stage, or nil when the stage may run on the
// device.
func (r *SelfTestReport) Decline(stage string) error {
	if r == nil {
		return nil
	}
	var failed []string
	for _, k := range r.Results {
		if !k.OK && contains(k.Stages, stage) {
			failed = append(failed, k.Kernel+": "+k.Error)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return Decline("the %s's GPU self-test failed (%s); please report this with `easel diagnose`", stage, strings.Join(failed, "; "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// SelfTestProgress is told before each check: how many ran, how many there are, and which.
type SelfTestProgress func(done, total int, kernel string)

// RunSelfTest runs every check on dev and returns the report (it never fails: a check's failure
// is its result). A cancelled context stops it with ctx's error.
func RunSelfTest(ctx context.Context, dev device.Device, key SelfTestKey, checks []KernelCheck, progress SelfTestProgress) (*SelfTestReport, error) {
	start := time.Now()
	r := &SelfTestReport{Key: key, When: start.UTC().Truncate(time.Second)}
	for i, c := range checks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(i, len(checks), c.Kernel)
		}
		r.Results = append(r.Results, runCheck(ctx, dev, c))
	}
	// A cancel during the last check would record it as failed: nothing of the run is kept.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if progress != nil {
		progress(len(checks), len(checks), "")
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// runCheck runs one check, turning a panic or an error into a failed result.
func runCheck(ctx context.Context, dev device.Device, c KernelCheck) (res KernelResult) {
	res = KernelResult{Kernel: c.Kernel, Stages: c.Stages, Bound: c.Bound}
	t0 := time.Now()
	defer func() {
		if p := recover(); p != nil {
			res.OK, res.Error = false, fmt.Sprintf("the check stopped: %v", p)
		}
		res.Seconds = time.Since(t0).Seconds()
	}()
	got, want, err := c.Run(ctx, dev)
	var declined *Declined
	if errors.As(err, &declined) {
		// the stage would not run on the device anyway (a codec the kernels do not read, too
		// little memory): nothing to hold against its kernels
		res.OK, res.Skipped = true, "not checked: "+declined.Reason
		return res
	}
	if err != nil {
		res.Error = err.Error()
		return res
	}
	rel := RelErr(got, want)
	res.RelErr = &rel
	switch {
	case len(got) != len(want) || len(want) == 0:
		res.Error = fmt.Sprintf("the device gave %d values for the CPU's %d", len(got), len(want))
	case math.IsNaN(rel) || math.IsInf(rel, 0):
		res.Error = "the device's output is not finite"
	case rel > c.Bound:
		res.Error = fmt.Sprintf("relative error %.2e against the CPU, above the bound %.0e", rel, c.Bound)
	default:
		res.OK = true
	}
	return res
}

// RelErr is ‖a − b‖/‖b‖ (NaN when a value is not finite or the lengths differ).
func RelErr(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.NaN()
	}
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// SelfTestCache keeps reports as JSON files in a folder (the app-support folder's selftest/).
type SelfTestCache struct{ Dir string }

func (c SelfTestCache) name(k SelfTestKey) string { return k.ID() + ".json" }

// Load returns the cached report for k, or nil when there is none (or it cannot be read: the
// self-test then runs again).
func (c SelfTestCache) Load(k SelfTestKey) *SelfTestReport {
	var r SelfTestReport
	if !readCachedJSON(c.Dir, c.name(k), &r) || r.Key != k {
		return nil
	}
	return &r
}

// Save writes r atomically.
func (c SelfTestCache) Save(r *SelfTestReport) error {
	return writeCachedJSON(c.Dir, c.name(r.Key), "self-test", r)
}

// Latest is the most recently written report in the folder (for diagnostics), or nil.
func (c SelfTestCache) Latest() *SelfTestReport {
	var best *SelfTestReport
	for _, r := range readAllCachedJSON[SelfTestReport](c.Dir) {
		if best == nil || r.When.After(best.When) {
			best = r
		}
	}
	return best
}

// LoadOrRun returns the cached report for key, or runs the checks, caches the report and returns
// it; cached reports whether it came from the cache. A cache that cannot be written is not an
// error (the self-test then runs again next time).
func (c SelfTestCache) LoadOrRun(ctx context.Context, dev device.Device, key SelfTestKey, checks []KernelCheck, progress SelfTestProgress) (r *SelfTestReport, cached bool, err error) {
	if r := c.Load(key); r != nil {
		return r, true, nil
	}
	r, err = RunSelfTest(ctx, dev, key, checks, progress)
	if err != nil {
		return nil, false, err
	}
	if c.Dir != "" {
		_ = c.Save(r)
	}
	return r, false, nil
}
