package metal

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"easel/kernels/device"
)

// The autotuner: on first Metal use per (device, OS build, app version, geometry class), after
// the self-test, each variant of each op class that fits the device and passes its check is
// timed on the model's real shapes, and the fastest is kept per class. The choice is cached, shown
// in diagnostics and the timing panel, and EASEL_METAL_VARIANT_<CLASS>=name forces one.

// TuneKey is what a cached choice is valid for.
type TuneKey struct {
	Device     string `json:"device"`
	OSBuild    string `json:"os_build"`
	AppVersion string `json:"app_version"`
	// Build is BuildID(): the kernel sources and the build's revision.
	Build string `json:"build"`
	// Geometry is the geometry class the variants were timed on (e.g. "qi21 D3072 rows4096 prefix256").
	Geometry string `json:"geometry"`
}

// ID is a file-name-safe digest of the key.
func (k TuneKey) ID() string { return keyID(k) }

// VariantResult is one variant's outcome in a tuning run.
type VariantResult struct {
	Name string `json:"name"`
	// MS is the measured device time of one run in milliseconds (0 when not timed).
	MS float64 `json:"ms,omitempty"`
	// Skipped says why the variant was not timed: it does not fit, failed to compile, failed its
	// check, or the device lacks the tensor API. Empty when it was timed.
	Skipped string `json:"skipped,omitempty"`
}

// ClassChoice is the variant chosen for one op class.
type ClassChoice struct {
	Class   string `json:"class"`
	Variant string `json:"variant"`
	// Forced is set when EASEL_METAL_VARIANT_<CLASS> chose it.
	Forced  bool            `json:"forced,omitempty"`
	Results []VariantResult `json:"results"`
	// Note explains a fallback (a forced name that does not exist or did not pass, nothing timed).
	Note string `json:"note,omitempty"`
}

// TuneReport is a tuning run's outcome, as cached and as diagnostics show it.
type TuneReport struct {
	Key     TuneKey       `json:"key"`
	When    time.Time     `json:"when"`
	Seconds float64       `json:"seconds"`
	Choices []ClassChoice `json:"choices"`
}

// Chosen returns the variant chosen for class, "base" when the class was not tuned.
func (r *TuneReport) Chosen(class string) string {
	if r != nil {
		for _, c := range r.Choices {
			if c.Class == class {
				return c.Variant
			}
		}
	}
	return "base"
}

// Summary is one line per class for diagnostics and the timing panel: the choice, and each
// variant's time or why it was skipped.
func (r *TuneReport) Summary() string {
	if r == nil {
		return "kernel variants: not tuned (baseline kernels)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "kernel variants for %s (%s), tuned %s:", r.Key.Device, r.Key.Geometry, r.When.Format(time.RFC3339))
	for _, c := range r.Choices {
		how := "fastest"
		if c.Forced {
			how = "forced by " + ForceEnv(c.Class)
		}
		fmt.Fprintf(&b, "\n  %s: %s (%s)", c.Class, c.Variant, how)
		for _, v := range c.Results {
			if v.Skipped != "" {
				fmt.Fprintf(&b, "; %s skipped: %s", v.Name, v.Skipped)
			} else {
				fmt.Fprintf(&b, "; %s %.3f ms", v.Name, v.MS)
			}
		}
		if c.Note != "" {
			fmt.Fprintf(&b, "; note: %s", c.Note)
		}
	}
	return b.String()
}

// TuneProgress is told before each variant is prepared and timed ("Tuning for this Mac…").
type TuneProgress func(done, total int, class, variant string)

// Tune chooses a variant per class of reg on dev. getenv reads the forcing variables (os.Getenv;
// tests pass their own). It never fails on a variant's error (that variant is skipped with a
// note); a cancelled context stops it with ctx's error.
func Tune(ctx context.Context, dev device.Device, key TuneKey, reg *Registry, getenv func(string) string, progress TuneProgress) (*TuneReport, error) {
	start := time.Now()
	r := &TuneReport{Key: key, When: start.UTC().Truncate(time.Second)}
	total := len(reg.variants)
	done := 0
	tensor := HasTensorOps(dev)
	for _, class := range reg.Classes() {
		vs := reg.Of(class)
		choice := ClassChoice{Class: class, Variant: vs[0].Name}
		forced := ""
		if getenv != nil {
			forced = strings.TrimSpace(getenv(ForceEnv(class)))
		}
		if forced != "" && !slices.ContainsFunc(vs, func(v Variant) bool { return v.Name == forced }) {
			var names []string
			for _, v := range vs {
				names = append(names, v.Name)
			}
			choice.Note = fmt.Sprintf("%s=%s names no variant (have %s); tuned instead", ForceEnv(class), forced, strings.Join(names, ", "))
			forced = ""
		}
		best := -1
		for _, v := range vs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if progress != nil {
				progress(done, total, class, v.Name)
			}
			done++
			res := VariantResult{Name: v.Name}
			switch {
			case forced != "" && v.Name != forced:
				res.Skipped = "not timed: " + ForceEnv(class) + " forces " + forced
			case v.TensorOps && !tensor:
				res.Skipped = "this GPU or OS has no Metal 4 tensor operations"
			default:
				if err := runVariant(ctx, dev, v, &res, forced == v.Name); err != nil {
					res.Skipped = err.Error()
				}
			}
			choice.Results = append(choice.Results, res)
			if res.Skipped != "" {
				continue
			}
			if forced == v.Name {
				best = len(choice.Results) - 1
				choice.Forced = true
				continue
			}
			if forced == "" && (best < 0 || res.MS < choice.Results[best].MS) {
				best = len(choice.Results) - 1
			}
		}
		switch {
		case best >= 0:
			choice.Variant = choice.Results[best].Name
		case forced != "":
			choice.Note = strings.TrimPrefix(choice.Note+"; ", "; ") + fmt.Sprintf("the forced variant %s did not pass (%s); using %s", forced, resultOf(choice.Results, forced).Skipped, vs[0].Name)
		default:
			choice.Note = strings.TrimPrefix(choice.Note+"; ", "; ") + "no variant passed; using " + vs[0].Name
		}
		r.Choices = append(r.Choices, choice)
	}
	// A cancel during the last variant leaves it half measured: nothing of the run is kept.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if progress != nil {
		progress(total, total, "", "")
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

func resultOf(rs []VariantResult, name string) VariantResult {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return VariantResult{}
}

// runVariant prepares, checks and (unless forced, which needs no time) times v into res; a panic
// in any of them is the variant's failure, not the app's.
func runVariant(ctx context.Context, dev device.Device, v Variant, res *VariantResult, forced bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("stopped: %v", p)
		}
	}()
	if v.Prepare != nil {
		if err := v.Prepare(dev); err != nil {
			return fmt.Errorf("does not fit: %w", err)
		}
	}
	if v.Check != nil {
		if err := v.Check(ctx, dev); err != nil {
			return fmt.Errorf("failed its check: %w", err)
		}
	}
	if forced || v.Time == nil {
		return nil
	}
	d, err := v.Time(ctx, dev)
	if err != nil {
		return fmt.Errorf("could not be timed: %w", err)
	}
	res.MS = float64(d) / float64(time.Millisecond)
	return nil
}

// TuneCache keeps tuning reports as JSON files in a folder (the app-support folder's tuning/).
type TuneCache struct{ Dir string }

func (c TuneCache) name(k TuneKey) string { return k.ID() + ".json" }

// Load returns the cached report for k, or nil (none, unreadable, or for another key).
func (c TuneCache) Load(k TuneKey) *TuneReport {
	var r TuneReport
	if !readCachedJSON(c.Dir, c.name(k), &r) || r.Key != k {
		return nil
	}
	return &r
}

// Save writes r atomically.
func (c TuneCache) Save(r *TuneReport) error {
	return writeCachedJSON(c.Dir, c.name(r.Key), "tuning", r)
}

// LoadOrTune returns the cached choice for key, or tunes, caches and returns it; cached reports
// whether it came from the cache. A forcing variable set now overrides a cached choice for its
// class without timing anything. A cache that cannot be written is not an error.
func (c TuneCache) LoadOrTune(ctx context.Context, dev device.Device, key TuneKey, reg *Registry, getenv func(string) string, progress TuneProgress) (r *TuneReport, cached bool, err error) {
	if r := c.Load(key); r != nil {
		if applyForced(r, getenv) {
			return r, true, nil
		}
		// A forced variant the cached run did not time: tune now with it forced, not cached.
		r, err = Tune(ctx, dev, key, reg, getenv, progress)
		return r, false, err
	}
	r, err = Tune(ctx, dev, key, reg, getenv, progress)
	if err != nil {
		return nil, false, err
	}
	if c.Dir != "" {
		_ = c.Save(r)
	}
	return r, false, nil
}

// applyForced makes a cached report follow the forcing variables set now, and reports whether it
// could: a forced variant must be one the cached run timed (so it passed its check there).
func applyForced(r *TuneReport, getenv func(string) string) bool {
	if getenv == nil {
		return true
	}
	for i := range r.Choices {
		c := &r.Choices[i]
		name := strings.TrimSpace(getenv(ForceEnv(c.Class)))
		if name == "" || name == c.Variant {
			continue
		}
		res := resultOf(c.Results, name)
		if res.Name != name || res.Skipped != "" {
			return false
		}
		c.Variant, c.Forced = name, true
	}
	return true
}

// All is every report in the folder, most recently tuned first (for Settings and diagnostics).
func (c TuneCache) All() []*TuneReport {
	all := readAllCachedJSON[TuneReport](c.Dir)
	slices.SortStableFunc(all, func(a, b *TuneReport) int { return b.When.Compare(a.When) })
	return all
}

// Latest is the most recently tuned report in the folder (for diagnostics), or nil.
func (c TuneCache) Latest() *TuneReport {
	if all := c.All(); len(all) > 0 {
		return all[0]
	}
	return nil
}
